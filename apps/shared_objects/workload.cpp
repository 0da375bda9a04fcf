// Comparing two runs' outputs bit for bit (workload.hpp), and the inputs' generator (inputs.hpp).
#include "apps/shared_objects/workload.hpp"

#include <cstring>

#include "apps/shared_objects/inputs.hpp"

namespace xf::shared_bench {

std::string first_difference(const output& a, const output& b) {
  if (a.values.size() != b.values.size() || a.counts.size() != b.counts.size())
    return "different sizes (" + std::to_string(a.values.size() + a.counts.size()) + " and " +
           std::to_string(b.values.size() + b.counts.size()) + " values)";
  // Equal outputs (the usual case) in one pass; the element that differs only when they do not.
  if ((a.values.empty() ||
       std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(float)) == 0) &&
      a.counts == b.counts)
    return "";
  for (std::size_t i = 0; i < a.values.size(); ++i)
    if (std::memcmp(&a.values[i], &b.values[i], sizeof(float)) != 0) {
      char text[120];
      std::snprintf(text, sizeof text, "value %zu: %.9g against %.9g", i, a.values[i], b.values[i]);
      return text;
    }
  for (std::size_t i = 0; i < a.counts.size(); ++i)
    if (a.counts[i] != b.counts[i])
      return "count " + std::to_string(i) + ": " + std::to_string(a.counts[i]) + " against " +
             std::to_string(b.counts[i]);
  return "";
}

std::vector<float> uniform_floats(std::size_t count, std::uint64_t seed, float low, float high) {
  std::vector<float> v(count);
  const double scale = (static_cast<double>(high) - low) * 0x1p-24;
  for (std::size_t i = 0; i < count; ++i)
    v[i] = static_cast<float>(low + scale * static_cast<double>(mix64(seed + i) >> 40));
  return v;
}

}  // namespace xf::shared_bench
