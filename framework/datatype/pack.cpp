// Host packing over the traversal's runs, and the overlap check for receives.
#include "framework/datatype/pack.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "framework/core/errors.hpp"
#include "framework/datatype/traversal.hpp"

namespace xf::dt {

std::int64_t packed_bytes(const committed_type& t, std::int64_t count) {
  XF_EXPECTS(count >= 0, "the count of instances is " + std::to_string(count));
  const type_record root = t.root();
  std::int64_t bytes, elements, span;
  // The traversal computes count × elements, × extent and × size without checks: they must fit.
  XF_EXPECTS(!__builtin_mul_overflow(count, root.size, &bytes) &&
                 !__builtin_mul_overflow(count, root.elements, &elements) &&
                 !__builtin_mul_overflow(count, root.extent, &span),
             std::to_string(count) + " instances of the type overflow 64-bit offsets");
  return bytes;
}

namespace {

/// fn(in, out, bytes) for every run of `count` instances, in type-map order.
template <class Fn>
void each_run(const committed_type& t, std::int64_t count, Fn&& fn) {
  packed_bytes(t, count);  // checks the count
  const bool whole = for_each_run(t.view(), count, 0, count * t.root().elements, fn);
  XF_EXPECTS(whole, "the committed type's records are malformed");
}

}  // namespace

void pack(const committed_type& t, std::int64_t count, const void* user, void* packed) {
  const auto* from = static_cast<const std::byte*>(user);
  auto* to = static_cast<std::byte*>(packed);
  each_run(t, count, [&](std::int64_t in, std::int64_t out, std::int64_t bytes) {
    std::memcpy(to + out, from + in, static_cast<std::size_t>(bytes));
  });
}

void unpack(const committed_type& t, std::int64_t count, const void* packed, void* user) {
  const auto* from = static_cast<const std::byte*>(packed);
  auto* to = static_cast<std::byte*>(user);
  each_run(t, count, [&](std::int64_t in, std::int64_t out, std::int64_t bytes) {
    std::memcpy(to + in, from + out, static_cast<std::size_t>(bytes));
  });
}

std::optional<std::int64_t> first_overlap(const committed_type& t, std::int64_t count) {
  std::vector<std::pair<std::int64_t, std::int64_t>> runs;  // [begin, end) in the user buffer
  each_run(t, count,
           [&](std::int64_t in, std::int64_t, std::int64_t bytes) { runs.emplace_back(in, in + bytes); });
  std::sort(runs.begin(), runs.end());
  // Sorted by start, the first run that begins before the ones before it end begins the lowest overlap.
  std::int64_t covered_to = runs.empty() ? 0 : runs.front().second;
  for (std::size_t i = 1; i < runs.size(); ++i) {
    if (runs[i].first < covered_to) return runs[i].first;
    covered_to = std::max(covered_to, runs[i].second);
  }
  return std::nullopt;
}

}  // namespace xf::dt
