// pack and unpack: an MPI derived datatype (framework/datatype) applied to frames. pack's input frame is a
// noncontiguous view — `count` instances of the type, MPI's buf — and its output frame the packed bytes, in
// type-map order; unpack does the reverse. Inside the kernel the committed type travels in the operator's
// parameters and each lane walks its elements with the point-based traversal (dt::for_each_run), several
// elements a lane, so any number of virtual threads covers a frame; placed `on: cpu` or on the host
// executor the same code runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "framework/datatype/traversal.hpp"
#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"

namespace xf {

/// A datatype parameter's committed form (dt::commit) in a fixed array, so that a GPU operator's params
/// stay trivially copyable and reach the kernel in its parameter arena, read in place there. The arena
/// itself has no limit; this capacity bounds the type: 32 KiB is ~270 records, or an indexed type of ~2000
/// blocks. A larger type is refused where the topology is loaded.
struct committed_param {
  static constexpr std::size_t capacity = 32 * 1024;
  alignas(16) std::byte bytes[capacity];
  std::uint64_t size;  ///< bytes of `bytes` used (0: none yet)

  XF_HOST_DEVICE dt::serialized_view view() const { return dt::view_of(bytes); }
};

/// Commits `type` into `out`; the problem ("" when none): too large for the capacity, or no data to move.
std::string commit_param(const dt::datatype& type, committed_param& out);

enum class datatype_direction : std::uint8_t { pack, unpack };

/// Where count instances of a type lie, MPI's buf being byte -lb of the view: the smallest range holding
/// every instance's bounds [lb, ub) and every byte of data (a resized type's data may lie outside them).
struct datatype_view {
  std::int64_t lb = 0;        ///< displacement of the view's first byte
  std::uint64_t bytes = 0;    ///< the view's length: pack's input frame, unpack's output frame
  std::uint64_t packed = 0;   ///< count × size: pack's output frame, unpack's input frame
  std::int64_t elements = 0;  ///< count × the type's elements
};

/// pack's and unpack's parameters.
struct datatype_frame_params {
  committed_param type;
  std::int64_t count = 1;
  std::uint32_t elements_per_lane = 0;  ///< 0: about 32 bytes of data a lane (bind_datatype_frames)
  // Set by bind_datatype_frames, from the type and the input topic:
  datatype_view view;
  std::uint32_t lane_elements = 1;  ///< elements a lane walks at a time
  std::uint32_t zero_gaps = 0;      ///< unpack: the elements lie in address order; zero the view's gaps
};

/// The view of `p.count` instances of `p.type`; the problem ("" when none): a count that overflows 64-bit
/// offsets, or a ratio of packed to view bytes too large for the kernel's output share.
std::string datatype_view_of(const datatype_frame_params& p, datatype_view& out);

void describe_datatype_frames(operator_schema<datatype_frame_params>& s, datatype_direction d);

/// Checks the type against the input topic — frames long enough for one input, elements of the topic's
/// type, and for unpack that every byte of the view is set: elements in address order (the gaps are
/// zeroed), or a type that covers its view exactly — and fills in the derived fields.
std::optional<param_problem> bind_datatype_frames(datatype_frame_params& p, const topic_info& input,
                                                  datatype_direction d);

/// The output frame's share of the input's: packed / view bytes (pack), view / packed (unpack), reduced.
output_fraction datatype_frames_share(const datatype_frame_params& p, datatype_direction d);

namespace datatype_frames {

inline constexpr std::uint32_t wrong_length = 1;  ///< the input frame is not one input's bytes
inline constexpr std::uint32_t bad_type = 2;      ///< the committed type could not be walked

const char* failure_reason(std::uint32_t code);

/// Copies `bytes` from `src` to `dst`, in the widest words both addresses and the length allow on the
/// device (memcpy on the host).
XF_HOST_DEVICE XF_FORCE_INLINE void copy_run(std::byte* dst, const std::byte* src, std::int64_t bytes) {
#if XF_DEVICE_PASS
  const auto bits = reinterpret_cast<std::uintptr_t>(dst) | reinterpret_cast<std::uintptr_t>(src) |
                    static_cast<std::uintptr_t>(bytes);
  if (bits % 8 == 0) {
    for (std::int64_t i = 0; i < bytes / 8; ++i)
      reinterpret_cast<std::uint64_t*>(dst)[i] = reinterpret_cast<const std::uint64_t*>(src)[i];
  } else if (bits % 4 == 0) {
    for (std::int64_t i = 0; i < bytes / 4; ++i)
      reinterpret_cast<std::uint32_t*>(dst)[i] = reinterpret_cast<const std::uint32_t*>(src)[i];
  } else {
    for (std::int64_t i = 0; i < bytes; ++i) dst[i] = src[i];
  }
#else
  std::memcpy(dst, src, static_cast<std::size_t>(bytes));
#endif
}

XF_HOST_DEVICE XF_FORCE_INLINE void zero_run(std::byte* dst, std::int64_t bytes) {
#if XF_DEVICE_PASS
  for (std::int64_t i = 0; i < bytes; ++i) dst[i] = std::byte{0};
#else
  std::memset(dst, 0, static_cast<std::size_t>(bytes));
#endif
}

/// One virtual thread's share of a frame: elements [first, first + lane_elements) for first = thread_id ·
/// lane_elements, then every thread_count · lane_elements on, so neighbouring lanes move neighbouring
/// elements; one thread alone takes every element in one walk. pack reads the view from `in` and writes
/// the packed bytes to `out`; unpack the other way round. Returns 0, or the failure code. Not inlined on the
/// device: compute calls it for every element type the dispatch compiles, and one copy serves them all.
XF_HOST_DEVICE inline __attribute__((noinline)) std::uint32_t move_elements(
    const datatype_frame_params& p, datatype_direction d, const std::byte* in, std::byte* out,
    std::uint32_t thread_id, std::uint32_t thread_count) {
  const dt::serialized_view t = p.type.view();
  const std::int64_t n = p.view.elements;
  const std::int64_t lb = p.view.lb;
  const std::int64_t k = thread_count == 1 ? n : std::int64_t{p.lane_elements};
  const bool packing = d == datatype_direction::pack;
  const bool zero = !packing && p.zero_gaps != 0;
  for (std::int64_t first = std::int64_t{thread_id} * k; first < n; first += std::int64_t{thread_count} * k) {
    const std::int64_t last = first + k < n ? first + k : n;
    // Unpack with elements in address order: the bytes between one element's end and the next one's start
    // belong to no element; the lane that writes the later element zeroes them, the last lane the tail.
    std::int64_t filled = 0;
    if (zero && first > 0) {
      const dt::element_place before = dt::locate(t, p.count, first - 1);
      if (before.run_elements <= 0) return bad_type;
      filled = before.in - lb + dt::size_of(before.element);
    }
    const bool walked = dt::for_each_run(
        t, p.count, first, last, [&](std::int64_t displacement, std::int64_t packed, std::int64_t bytes) {
          const std::int64_t at = displacement - lb;  // the run's place in the view
          if (packing) {
            copy_run(out + packed, in + at, bytes);
          } else {
            if (zero) zero_run(out + filled, at - filled);
            copy_run(out + at, in + packed, bytes);
            filled = at + bytes;
          }
        });
    if (!walked) return bad_type;
    if (zero && last == n) zero_run(out + filled, static_cast<std::int64_t>(p.view.bytes) - filled);
  }
  return 0;
}

/// The frame's check and walk for either direction: the input must be exactly one input's bytes.
XF_HOST_DEVICE inline std::uint32_t run_frame(const datatype_frame_params& p, datatype_direction d,
                                              const std::byte* in, std::uint64_t in_bytes, std::byte* out,
                                              std::uint32_t thread_id, std::uint32_t thread_count) {
  if (in_bytes != (d == datatype_direction::pack ? p.view.bytes : p.view.packed)) return wrong_length;
  return move_elements(p, d, in, out, thread_id, thread_count);
}

}  // namespace datatype_frames

/// pack and unpack, each one direction of the same walk.
template <datatype_direction D>
struct datatype_frames_op {
  using params = datatype_frame_params;

  static void describe(operator_schema<params>& s) { describe_datatype_frames(s, D); }
  static std::optional<param_problem> bind_input(params& p, const topic_info& input) {
    return bind_datatype_frames(p, input, D);
  }
  static output_fraction output_share(const params& p) { return datatype_frames_share(p, D); }
  static const char* failure_reason(std::uint32_t code) { return datatype_frames::failure_reason(code); }

  template <class T>
  XF_HOST_DEVICE static void compute(const params& p, const frame_task<T>& task) {
    const std::uint32_t failed =
        datatype_frames::run_frame(p, D, reinterpret_cast<const std::byte*>(task.in), task.count * sizeof(T),
                                   reinterpret_cast<std::byte*>(task.out), task.thread_id, task.thread_count);
    if (failed != 0) task.fail(failed);
  }
};

/// pack: the output frame is the packed bytes of the `count` instances of `type` the input frame views.
struct pack_op : datatype_frames_op<datatype_direction::pack> {
  static constexpr char class_name[] = "pack";
};

/// unpack: the output frame is the view the packed input frame unpacks into; bytes of the view no element
/// covers are zero.
struct unpack_op : datatype_frames_op<datatype_direction::unpack> {
  static constexpr char class_name[] = "unpack";
};

}  // namespace xf
