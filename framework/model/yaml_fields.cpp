// The YAML front end's field readers.
#include "framework/model/yaml_fields.hpp"

#include <charconv>
#include <limits>

namespace xf {

integer_parse parse_integer(const std::string& text, std::int64_t& value) {
  const char* first = text.data();
  const char* last = text.data() + text.size();
  bool negative = false;
  if (first != last && (*first == '+' || *first == '-')) negative = *first++ == '-';
  int base = 10;
  if (last - first > 2 && first[0] == '0' && (first[1] == 'x' || first[1] == 'o')) {
    base = first[1] == 'x' ? 16 : 8;
    first += 2;
  }
  if (first == last) return integer_parse::not_integer;
  std::uint64_t magnitude = 0;
  auto [end, ec] = std::from_chars(first, last, magnitude, base);
  if (end != last) return integer_parse::not_integer;
  if (ec == std::errc::result_out_of_range) return integer_parse::too_large;
  if (ec != std::errc{}) return integer_parse::not_integer;
  if (magnitude > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    return integer_parse::too_large;
  value = negative ? -static_cast<std::int64_t>(magnitude) : static_cast<std::int64_t>(magnitude);
  return integer_parse::ok;
}

std::string join_choices(const std::vector<std::string>& names, const char* last_separator) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? last_separator : ", ";
    text += names[i];
  }
  return text;
}

std::string first_at(const source_pos& first, const source_pos& here) {
  if (first.file == here.file && first.known())
    return std::to_string(first.line) + ":" + std::to_string(first.column);
  return first.str();
}

}  // namespace xf
