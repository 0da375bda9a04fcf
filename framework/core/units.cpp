// Byte quantities with units.
#include "framework/core/units.hpp"

#include <array>
#include <charconv>
#include <cstdio>
#include <utility>

namespace xf {
namespace {

constexpr std::array<std::pair<std::string_view, std::uint64_t>, 13> kUnits{{
    {"B", 1},
    {"KiB", KiB},
    {"MiB", MiB},
    {"GiB", GiB},
    {"TiB", TiB},
    {"kB", 1000ull},
    {"KB", 1000ull},
    {"MB", 1000ull * 1000},
    {"GB", 1000ull * 1000 * 1000},
    {"TB", 1000ull * 1000 * 1000 * 1000},
    {"Ki", KiB},
    {"Mi", MiB},
    {"Gi", GiB},
}};

struct split_quantity {
  std::string_view digits;
  std::string_view unit;
};

split_quantity split(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  std::string_view digits = text.substr(0, i);
  while (i < text.size() && text[i] == ' ') ++i;
  return {digits, text.substr(i)};
}

}  // namespace

std::optional<std::uint64_t> parse_bytes(std::string_view text) {
  auto [digits, unit] = split(text);
  if (digits.empty()) return std::nullopt;
  std::uint64_t number = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (ec != std::errc{} || end != digits.data() + digits.size()) return std::nullopt;
  std::uint64_t scale = 1;
  if (!unit.empty()) {
    bool found = false;
    for (auto [name, factor] : kUnits) {
      if (name == unit) {
        scale = factor;
        found = true;
        break;
      }
    }
    if (!found) return std::nullopt;
  }
  if (number != 0 && scale > UINT64_MAX / number) return std::nullopt;
  return number * scale;
}

std::string bytes_syntax_problem(std::string_view text) {
  auto [digits, unit] = split(text);
  if (digits.empty()) return "'" + std::string(text) + "' is not a byte count (write e.g. 4096, 64KiB, 1GiB)";
  if (!unit.empty()) {
    bool found = false;
    for (auto [name, factor] : kUnits) found = found || name == unit;
    if (!found)
      return "unknown unit '" + std::string(unit) + "' in '" + std::string(text) +
             "' (use B, KiB, MiB, GiB, TiB, or kB, MB, GB, TB)";
  }
  return "'" + std::string(text) + "' does not fit in 64 bits";
}

std::string format_bytes(std::uint64_t bytes) {
  constexpr std::array<std::string_view, 5> names{"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t unit = 0;
  double value = static_cast<double>(bytes);
  while (unit + 1 < names.size() && value >= 1024.0) {
    value /= 1024.0;
    ++unit;
  }
  char buffer[48];
  if (unit == 0 || value == static_cast<double>(static_cast<std::uint64_t>(value)))
    std::snprintf(buffer, sizeof buffer, "%llu %s", static_cast<unsigned long long>(value),
                  names[unit].data());
  else
    std::snprintf(buffer, sizeof buffer, "%.2f %s", value, names[unit].data());
  return buffer;
}

std::string format_fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

}  // namespace xf
