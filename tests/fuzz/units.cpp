// Fuzz target: byte counts with units, as every size in a topology and on a command line is read
// (parse_bytes), the message a count that does not parse gets (bytes_syntax_problem), and the exact form
// to_yaml writes sizes in (exact_bytes), which must parse back to the same count.
#include <cstring>

#include "framework/core/units.hpp"
#include "framework/model/spec_yaml.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XF_FUZZ_TARGET(units) {
  const std::string_view text = as_text(data);
  const std::optional<std::uint64_t> bytes = parse_bytes(text);
  if (bytes) {
    fuzz_expect(parse_bytes(exact_bytes(*bytes)) == bytes, "exact_bytes(" + std::to_string(*bytes) + ") = '" +
                                                               exact_bytes(*bytes) + "' does not parse back");
    (void)format_bytes(*bytes);
  } else {
    fuzz_expect(!bytes_syntax_problem(text).empty(), "a count that does not parse has no problem");
  }
  // Any 8 bytes as a count: its exact form parses back.
  if (data.size() >= 8) {
    std::uint64_t any = 0;
    std::memcpy(&any, data.data(), 8);
    fuzz_expect(parse_bytes(exact_bytes(any)) == any,
                "exact_bytes(" + std::to_string(any) + ") = '" + exact_bytes(any) + "' does not parse back");
    (void)format_bytes(any);
  }
  return 0;
}
