// The point-based traversal (the paper's Alg. 1-2): from an element's index alone, where it lies in the
// user's buffer and in the packed one, descending the committed records from the root. No state carries
// from one element to the next, so any number of threads can each take their own elements. Host and device
// code: no allocation, no exceptions, no recursion — one loop over the levels, at most one pass per record.
//
// Cost of one level: contiguous, vector, hvector, indexed_block, hindexed_block, resized O(1) (a division
// or two); indexed, hindexed O(log blocks) (binary search over the block prefix sums); struct O(log members)
// (binary search over the members' element prefix sums, then a jump to the member's record); subarray
// O(dimensions) (a division and a remainder per dimension).
#pragma once

#include <cstdint>

#include "framework/core/exec_space.hpp"
#include "framework/datatype/serialized_type.hpp"

namespace xf::dt {

/// Where element i of `count` instances lies, and how many elements from it on lie one after the other in
/// both buffers (the run a copy may move at once).
struct element_place {
  std::int64_t in = 0;   ///< bytes from the user buffer's start (MPI's buf) to the element; may be negative
  std::int64_t out = 0;  ///< bytes from the packed buffer's start
  std::int64_t run_elements = 0;  ///< >= 1; 0 when i is out of range or the records are malformed
  std::int64_t run_bytes = 0;
  primitive element = primitive::byte;
};

namespace detail {

/// The largest j in [0, n) with prefix[j] <= k, for prefix[0] <= k < prefix[n]: the block holding copy k
/// (empty blocks, whose prefix equals the next one's, are never chosen).
XF_HOST_DEVICE inline std::int64_t block_of(const std::int64_t* prefix, std::int64_t n, std::int64_t k) {
  std::int64_t low = 0, high = n - 1;
  while (low < high) {
    const std::int64_t mid = low + (high - low + 1) / 2;
    if (prefix[mid] <= k)
      low = mid;
    else
      high = mid - 1;
  }
  return low;
}

/// One level of the descent: the paper's inc_read and inc_write for one record and the element's index r
/// within one instance of it.
struct level_step {
  std::int64_t in = 0;           ///< bytes from this instance's start to the child copy's
  std::int64_t out = 0;          ///< packed bytes from this instance's start to the child copy's
  std::int64_t r = 0;            ///< the element's index within the child copy
  std::int64_t copies_left = 1;  ///< copies of the child from this one to the end of its block
  std::int64_t child_elements = 1;
  std::int64_t child_size = 0;
  std::int64_t next = -1;  ///< the child's record, or -1 when the child is a primitive
  bool child_tight = true;
  primitive element = primitive::byte;  ///< the primitive child's
};

XF_HOST_DEVICE inline level_step step(const serialized_view& t, const type_record& rec, std::int64_t r) {
  level_step s;
  s.child_elements = rec.child_elements;
  s.child_size = rec.child_size;
  s.child_tight = (rec.flags & record_child_tight) != 0;
  s.element = static_cast<primitive>(rec.element);
  s.next = (rec.flags & record_leaf) != 0 ? -1 : static_cast<std::int64_t>(rec.child);
  const std::int64_t* words = t.lookaside_of(rec);
  std::int64_t k = 0;  // the child copy holding the element, in type-map order
  switch (static_cast<type_kind>(rec.kind)) {
    case type_kind::primitive:
      s.child_elements = 1;
      s.child_size = rec.size;
      s.child_tight = true;
      s.next = -1;
      break;
    case type_kind::contiguous:
      k = r / rec.child_elements;
      s.in = k * rec.child_extent;
      s.copies_left = rec.count - k;
      break;
    case type_kind::vector:
    case type_kind::hvector: {
      k = r / rec.child_elements;
      const std::int64_t block = k / rec.blocklength, within = k - block * rec.blocklength;
      s.in =
          block * (rec.stride * rec.unit_bytes) + within * rec.child_extent;  // the checked stride in bytes
      s.copies_left = rec.blocklength - within;
      break;
    }
    case type_kind::indexed:
    case type_kind::hindexed: {
      k = r / rec.child_elements;
      const std::int64_t* prefix = words + rec.count;
      const std::int64_t block = block_of(prefix, rec.count, k);
      s.in = words[block] * rec.unit_bytes + (k - prefix[block]) * rec.child_extent;
      s.copies_left = prefix[block + 1] - k;
      break;
    }
    case type_kind::indexed_block:
    case type_kind::hindexed_block: {
      k = r / rec.child_elements;
      const std::int64_t block = k / rec.blocklength, within = k - block * rec.blocklength;
      s.in = words[block] * rec.unit_bytes + within * rec.child_extent;
      s.copies_left = rec.blocklength - within;
      break;
    }
    case type_kind::subarray: {
      k = r / rec.child_elements;
      const std::int64_t dims = rec.count;
      const std::int64_t *sizes = words, *subsizes = words + dims, *starts = words + 2 * dims;
      const bool fortran = (rec.flags & record_fortran) != 0;
      std::int64_t rest = k, linear = 0, scale = 1;
      for (std::int64_t i = 0; i < dims; ++i) {  // fastest dimension first
        const std::int64_t d = fortran ? i : dims - 1 - i;
        const std::int64_t at = rest % subsizes[d];
        rest /= subsizes[d];
        if (i == 0) s.copies_left = subsizes[d] - at;  // a block is a row along the fastest dimension
        linear += (starts[d] + at) * scale;
        scale *= sizes[d];
      }
      s.in = linear * rec.child_extent;
      break;
    }
    case type_kind::resized:
      break;  // one copy, where it was: only the markers moved
    case type_kind::struct_type: {
      const std::int64_t* element_prefix = words;
      const std::int64_t* byte_prefix = words + rec.count + 1;
      const std::int64_t j = block_of(element_prefix, rec.count, r);
      const struct_member m = serialized_view::member(words, rec.count, j);
      const std::int64_t within = r - element_prefix[j];
      k = within / m.elements;
      s.in = m.displacement + k * m.extent;
      s.out = byte_prefix[j] + k * m.size;
      s.r = within - k * m.elements;
      s.copies_left = m.blocklength - k;
      s.child_elements = m.elements;
      s.child_size = m.size;
      s.child_tight = m.tight != 0;
      s.next = m.ref >= 0 ? m.ref : -1;
      s.element = static_cast<primitive>(m.ref >= 0 ? 0 : -1 - m.ref);
      return s;
    }
  }
  s.out = k * rec.child_size;
  s.r = r - k * s.child_elements;
  return s;
}

}  // namespace detail

/// Element i (0 <= i < count × elements, in type-map order) of `count` instances laid `extent` apart, as
/// MPI lays a send of `count` of the type. Requires count × elements and count × extent to fit in 64 bits
/// (the host's callers check). The run ends where the outermost level that guarantees one ends: all the
/// instances of a tight root, the instance of a dense type, or the block of copies of a tight child — so a
/// dense vector of doubles is one run and a strided one a run per block.
XF_HOST_DEVICE inline element_place locate(const serialized_view& t, std::int64_t count, std::int64_t i) {
  element_place place;
  if (t.record_count == 0 || count <= 0 || i < 0) return place;
  type_record rec = t.record(0);
  if (rec.elements <= 0 || i / rec.elements >= count) return place;
  const std::int64_t instance = i / rec.elements;
  std::int64_t r = i - instance * rec.elements;
  std::int64_t in = instance * rec.extent, out = instance * rec.size;
  std::int64_t run_end = -1, run_end_out = 0;  // one past the run: element index, packed offset
  if ((rec.flags & record_tight) != 0) {
    run_end = i - r + (count - instance) * rec.elements;
    run_end_out = out + (count - instance) * rec.size;
  }
  // Each pass descends one record; a well-formed buffer reaches a primitive within `depth` passes, and the
  // bound ends the loop on a malformed one.
  for (std::uint32_t pass = 0; pass < t.record_count; ++pass) {
    if (run_end < 0 && (rec.flags & record_dense) != 0) {  // this instance's data is one run
      run_end = i - r + rec.elements;
      run_end_out = out + rec.size;
    }
    const detail::level_step s = detail::step(t, rec, r);
    in += s.in;
    out += s.out;
    r = s.r;
    if (run_end < 0 && s.child_tight) {
      run_end = i - r + s.copies_left * s.child_elements;
      run_end_out = out + s.copies_left * s.child_size;
    }
    if (s.next < 0) {
      place.in = in;
      place.out = out;
      place.run_elements = run_end - i;
      place.run_bytes = run_end_out - out;
      place.element = s.element;
      return place;
    }
    if (s.next >= t.record_count) return place;
    rec = t.record(static_cast<std::uint32_t>(s.next));
  }
  return place;
}

/// Calls fn(in, out, bytes) for the runs covering elements [first, last) of `count` instances, in order:
/// `bytes` bytes at user + in belong at packed + out. A run cut by `last` ends at last's packed offset.
/// False (having called fn for the runs before) when the range is outside [0, count × elements] or the
/// records are malformed.
XF_EXEC_CHECK_DISABLE
template <class Fn>
XF_HOST_DEVICE bool for_each_run(const serialized_view& t, std::int64_t count, std::int64_t first,
                                 std::int64_t last, Fn&& fn) {
  if (t.record_count == 0 || count < 0 || first < 0 || last < first) return false;
  const type_record root = t.record(0);
  const std::int64_t total = count * root.elements;
  if (last > total) return false;
  for (std::int64_t i = first; i < last;) {
    const element_place p = locate(t, count, i);
    if (p.run_elements <= 0) return false;
    std::int64_t bytes = p.run_bytes;
    if (p.run_elements > last - i) {
      // Elements may differ in size inside a run (a dense struct): measure to where `last` is packed.
      const element_place end = locate(t, count, last);
      if (end.run_elements <= 0) return false;
      bytes = end.out - p.out;
      i = last;
    } else {
      i += p.run_elements;
    }
    fn(p.in, p.out, bytes);
  }
  return true;
}

}  // namespace xf::dt
