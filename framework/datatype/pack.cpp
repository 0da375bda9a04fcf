// Host packing over the traversal's runs, and the overlap check for receives.
#include "framework/datatype/pack.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
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

/// fn(user offset) for every segment of the shape, in order: an odometer over the dimensions, the
/// innermost fastest, each digit's offset added from its stride or its table.
template <class Fn>
void each_segment(const strided_shape& shape, const std::vector<std::int64_t>& tables, Fn&& fn) {
  const std::size_t dims = shape.dims.size();
  if (shape.segments == 0) return;
  if (dims == 0) return fn(shape.base);
  const auto along = [&](std::size_t k, std::int64_t digit) {
    const strided_dim& d = shape.dims[k];
    return d.has_table() ? tables[static_cast<std::size_t>(d.table + digit)] : digit * d.stride;
  };
  std::int64_t digits[max_strided_dims] = {};
  std::int64_t outer = shape.base;  // the offset of every dimension but the innermost at its digit
  for (std::size_t k = 0; k + 1 < dims; ++k) outer += along(k, 0);
  const strided_dim& inner = shape.dims[dims - 1];
  while (true) {
    for (std::int64_t i = 0; i < inner.count; ++i) fn(outer + along(dims - 1, i));
    // Carry into the outer dimensions.
    std::size_t k = dims - 1;
    while (k-- > 0) {
      outer -= along(k, digits[k]);
      if (++digits[k] < shape.dims[k].count) {
        outer += along(k, digits[k]);
        break;
      }
      digits[k] = 0;
      outer += along(k, 0);
    }
    if (k == static_cast<std::size_t>(-1)) return;
  }
}

/// Copies each segment between the user's buffer and the packed one, at a width fixed at compile time
/// where the segment is 1, 2, 4, 8 or 16 bytes (a call to memcpy per 8-byte block costs more than the copy).
template <bool Unpack>
void copy_segments(const committed_type& t, const pack_plan& plan, std::int64_t count, std::byte* user,
                   std::byte* packed) {
  const strided_shape shape = shape_for(plan, t.root(), count);
  const auto run = [&]<std::size_t Width>(std::integral_constant<std::size_t, Width>) {
    const auto bytes = static_cast<std::size_t>(shape.segment_bytes);
    std::byte* out = packed;
    each_segment(shape, plan.tables, [&](std::int64_t at) {
      if constexpr (Width > 0) {
        if constexpr (Unpack)
          std::memcpy(user + at, out, Width);
        else
          std::memcpy(out, user + at, Width);
        out += Width;
      } else {
        if constexpr (Unpack)
          std::memcpy(user + at, out, bytes);
        else
          std::memcpy(out, user + at, bytes);
        out += bytes;
      }
    });
  };
  switch (shape.segment_bytes) {
    case 1:
      return run(std::integral_constant<std::size_t, 1>{});
    case 2:
      return run(std::integral_constant<std::size_t, 2>{});
    case 4:
      return run(std::integral_constant<std::size_t, 4>{});
    case 8:
      return run(std::integral_constant<std::size_t, 8>{});
    case 16:
      return run(std::integral_constant<std::size_t, 16>{});
    default:
      return run(std::integral_constant<std::size_t, 0>{});
  }
}

}  // namespace

void pack(const committed_type& t, const pack_plan& plan, std::int64_t count, const void* user,
          void* packed) {
  if (plan.method != pack_method::strided || packed_bytes(t, count) == 0) return pack(t, count, user, packed);
  copy_segments<false>(t, plan, count, const_cast<std::byte*>(static_cast<const std::byte*>(user)),
                       static_cast<std::byte*>(packed));
}

void unpack(const committed_type& t, const pack_plan& plan, std::int64_t count, const void* packed,
            void* user) {
  if (plan.method != pack_method::strided || packed_bytes(t, count) == 0)
    return unpack(t, count, packed, user);
  copy_segments<true>(t, plan, count, static_cast<std::byte*>(user),
                      const_cast<std::byte*>(static_cast<const std::byte*>(packed)));
}

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
