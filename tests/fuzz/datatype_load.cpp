// Fuzz target: committed_type::load, which takes a serialized datatype's bytes from anywhere (a file, another
// process) and must check them whole: either invalid_datatype, or a type whose own commit writes exactly
// these bytes, which deserializes and packs like any other.
#include <algorithm>
#include <vector>

#include "framework/datatype/committed_type.hpp"
#include "framework/datatype/pack.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XF_FUZZ_TARGET(datatype_load) {
  // The buffer holds int64 words (8-byte aligned, as committed_type keeps them): copy the input into some.
  std::vector<std::int64_t> words((data.size() + 7) / 8);
  std::copy(data.begin(), data.end(), reinterpret_cast<std::uint8_t*>(words.data()));
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(words.data()), data.size());
  dt::committed_type loaded;
  try {
    loaded = dt::committed_type::load(bytes);
  } catch (const dt::invalid_datatype&) {
    return 0;
  }
  const dt::datatype type = dt::deserialize(loaded);
  const dt::committed_type again = dt::commit(type);
  fuzz_expect(std::ranges::equal(again.bytes(), loaded.bytes()),
              "a loaded buffer is not what committing its type writes: " + dt::describe(type));
  // Packing a small one reads what the records say and nothing else.
  if (type.size() <= (1 << 16) && type.true_extent() <= (1 << 16) && type.size() >= 0) {
    std::vector<std::byte> user(static_cast<std::size_t>(type.true_extent()) + 1);
    std::vector<std::byte> packed(static_cast<std::size_t>(type.size()) + 1);
    dt::pack(loaded, 1, user.data() - type.true_lb(), packed.data());
  }
  return 0;
}
