// The datatype tests' oracle: a deliberately simple recursive walk of the type tree that lists the type map
// (every primitive with its displacement, and the lb/ub markers) straight from MPI-3.1's definitions, and
// bounds and packing computed from that list. It shares no code with the engine and uses none of the
// tree's derived values (it recomputes each child's extent from the child's own type map). Slow: for small
// types only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include "framework/datatype/datatype.hpp"

namespace xf::dt::reference {

struct entry {
  primitive element;
  std::int64_t displacement;
};

struct type_map {
  std::vector<entry> data;  ///< in type-map order
  std::vector<std::int64_t> lb_markers, ub_markers;
};

struct bounds {
  std::int64_t lb = 0, ub = 0, true_lb = 0, true_ub = 0;
};

/// MPI-3.1 §4.1: markers, where there are any, set lb and ub; else the data does, ub rounded up to a
/// multiple of the largest alignment (natural alignment: the element's size).
inline bounds bounds_of(const type_map& m) {
  bounds b;
  std::int64_t alignment = 1;
  if (!m.data.empty()) {
    b.true_lb = m.data.front().displacement;
    b.true_ub = b.true_lb;
    for (const entry& e : m.data) {
      b.true_lb = std::min(b.true_lb, e.displacement);
      b.true_ub = std::max(b.true_ub, e.displacement + size_of(e.element));
      alignment = std::max(alignment, size_of(e.element));
    }
  }
  b.lb = m.lb_markers.empty() ? b.true_lb : *std::min_element(m.lb_markers.begin(), m.lb_markers.end());
  if (!m.ub_markers.empty()) {
    b.ub = *std::max_element(m.ub_markers.begin(), m.ub_markers.end());
  } else {
    b.ub = b.true_ub;
    while ((b.ub - b.lb) % alignment != 0) ++b.ub;
  }
  return b;
}

/// Lists a type map. Each child's extent comes from the child's own type map, computed once per node of
/// the tree walked (keyed by its address, stable while the tree lives): without that, every copy would
/// walk its child again and a deep tree would cost 2^depth.
class walker {
 public:
  type_map flatten(const datatype& t) {
    type_map m;
    walk(t, 0, true, m);
    return m;
  }

 private:
  std::int64_t extent_of(const datatype& t) {
    const auto known = extents_.find(&t);
    if (known != extents_.end()) return known->second;
    const bounds b = bounds_of(flatten(t));
    extents_.emplace(&t, b.ub - b.lb);
    return b.ub - b.lb;
  }

  /// Appends t's type map, displaced by `base`. `keep_markers` false inside resized and subarray, whose
  /// markers erase those below them.
  void walk(const datatype& t, std::int64_t base, bool keep_markers, type_map& m) {
    if (t.kind() == type_kind::primitive) {
      m.data.push_back({t.element(), base});
      return;
    }
    if (t.kind() == type_kind::struct_type) {
      for (std::size_t j = 0; j < t.children().size(); ++j) {
        const std::int64_t e = extent_of(t.children()[j]);
        for (std::int64_t w = 0; w < t.blocklengths()[j]; ++w)
          walk(t.children()[j], base + t.displacements()[j] + w * e, keep_markers, m);
      }
      return;
    }
    const datatype& c = t.child();
    const std::int64_t e = extent_of(c);
    switch (t.kind()) {
      case type_kind::contiguous:
        for (std::int64_t k = 0; k < t.count(); ++k) walk(c, base + k * e, keep_markers, m);
        break;
      case type_kind::vector:
        for (std::int64_t b = 0; b < t.count(); ++b)
          for (std::int64_t w = 0; w < t.blocklength(); ++w)
            walk(c, base + (b * t.stride() + w) * e, keep_markers, m);
        break;
      case type_kind::hvector:
        for (std::int64_t b = 0; b < t.count(); ++b)
          for (std::int64_t w = 0; w < t.blocklength(); ++w)
            walk(c, base + b * t.stride() + w * e, keep_markers, m);
        break;
      case type_kind::indexed:
      case type_kind::hindexed:
      case type_kind::indexed_block:
      case type_kind::hindexed_block: {
        const bool in_bytes = t.kind() == type_kind::hindexed || t.kind() == type_kind::hindexed_block;
        const bool one_length = t.kind() == type_kind::indexed_block || t.kind() == type_kind::hindexed_block;
        for (std::size_t j = 0; j < t.displacements().size(); ++j) {
          const std::int64_t start = in_bytes ? t.displacements()[j] : t.displacements()[j] * e;
          const std::int64_t length = one_length ? t.blocklength() : t.blocklengths()[j];
          for (std::int64_t w = 0; w < length; ++w) walk(c, base + start + w * e, keep_markers, m);
        }
        break;
      }
      case type_kind::subarray: {
        // MPI-3.1's Subarray(): the selected elements in storage order, then markers around the whole array.
        const std::size_t dims = t.sizes().size();
        const bool c_order = t.order() == array_order::c;
        std::vector<std::int64_t> index(t.starts().begin(), t.starts().end());
        std::int64_t whole = 1;
        for (std::int64_t s : t.sizes()) whole *= s;
        for (bool more = true; more;) {
          std::int64_t linear = 0;
          for (std::size_t i = 0; i < dims; ++i) {  // slowest first
            const std::size_t d = c_order ? i : dims - 1 - i;
            linear = linear * t.sizes()[d] + index[d];
          }
          walk(c, base + linear * e, false, m);
          more = false;
          for (std::size_t i = 0; i < dims; ++i) {  // fastest first: an odometer
            const std::size_t d = c_order ? dims - 1 - i : i;
            if (++index[d] < t.starts()[d] + t.subsizes()[d]) {
              more = true;
              break;
            }
            index[d] = t.starts()[d];
          }
        }
        if (keep_markers) {
          m.lb_markers.push_back(base);
          m.ub_markers.push_back(base + whole * e);
        }
        break;
      }
      case type_kind::resized:
        walk(c, base, false, m);
        if (keep_markers) {
          m.lb_markers.push_back(base + t.lb());
          m.ub_markers.push_back(base + t.lb() + t.extent());
        }
        break;
      default:
        break;
    }
  }

  std::map<const datatype*, std::int64_t> extents_;
};

inline type_map flatten(const datatype& t) {
  return walker().flatten(t);
}

/// The packed bytes of `count` instances at `user`, element by element.
inline std::vector<std::byte> pack(const type_map& m, std::int64_t extent, std::int64_t count,
                                   const std::byte* user) {
  std::vector<std::byte> packed;
  for (std::int64_t k = 0; k < count; ++k)
    for (const entry& e : m.data) {
      const std::byte* at = user + k * extent + e.displacement;
      packed.insert(packed.end(), at, at + size_of(e.element));
    }
  return packed;
}

}  // namespace xf::dt::reference
