// The address stage's bytes generator: a text read one byte at a time, each lane a run of consecutive
// bytes (the paper's Word Count: an 8-byte address per 1-byte character without patterns, one pattern per
// lane with them).
#pragma once

#include <cstdint>

#include "framework/core/exec_space.hpp"
#include "operators/sources/prefetch/range_frame.hpp"
#include "operators/transforms/prefetch_addresses.hpp"

namespace xf::prefetch {

/// The input frame carries the text's bytes [first, first + n) (range_frame.hpp: a prefetch_ranges upstream
/// with record_bytes 1 and records_per_frame L·B); lane l reads the B = bytes_per_lane bytes from
/// first + l·B (fewer at the range's end, none past it), so lane l of frame o reads from (o·L + l)·B. The
/// assembled frame (item_bytes 1) holds byte k of lane l at k·L + l: each GPU thread's bytes are a column,
/// and a warp reads 32 adjacent bytes at every step; with L = 1 the frame is the text as it is. A range
/// longer than L·B fails the frame with range_too_long (nothing is dropped silently).
struct byte_addresses {
  struct params {
    std::int64_t bytes_per_lane = 64;
  };

  static constexpr const char* class_name = "prefetch_addresses_bytes";
  static constexpr const char* summary =
      "BigKernel address stage for a text read byte by byte: lane l reads bytes_per_lane consecutive bytes "
      "from first + l*bytes_per_lane of the range a prefetch_ranges frame names";

  template <class Schema>
  static void describe(Schema& s) {
    s.param(&params::bytes_per_lane, "bytes_per_lane", "consecutive bytes each lane reads per frame (B)",
            params{}.bytes_per_lane, 1);
  }

  template <class Push>
  XF_HOST_DEVICE static std::uint32_t generate(const params& p, const address_lane& lane, Push& push) {
    record_range range;
    if (!read_range(lane.in, lane.in_count, range)) return address_fault::no_range;
    const auto per_lane = static_cast<std::uint64_t>(p.bytes_per_lane);
    if (range.count > per_lane * lane.lanes) return address_fault::range_too_long;
    const std::uint64_t skip = per_lane * lane.lane;
    if (skip >= range.count) return 0;
    const std::uint64_t n = range.count - skip < per_lane ? range.count - skip : per_lane;
    for (std::uint64_t a = range.first + skip; a < range.first + skip + n; ++a)
      if (!push(a)) return 0;
    return 0;
  }
};

}  // namespace xf::prefetch

namespace xf {
using byte_addresses_op = prefetch_addresses_op<prefetch::byte_addresses>;
}  // namespace xf
