// The address stage's data-dependent generator: the input frame names the records to read (indices the
// CPU cannot foresee: produced upstream, or read from an index file), and the declared fields of each are
// read — the paper's stage 1 for what a declared layout alone cannot describe.
#pragma once

#include <cstdint>

#include "framework/core/exec_space.hpp"
#include "operators/transforms/address_generators/record_fields.hpp"
#include "operators/transforms/prefetch_addresses.hpp"

namespace xf::prefetch {

/// The input frame opens with the indices (u64) of the records to read: its first m elements,
/// m = indices_per_frame (0: the lanes, so lane l reads the record of element l), fewer where the list
/// ends early — at the first element equal to end_of_indices (2^64 − 1), every element after it being one
/// too (a short last list, padded). The assembled frame holds item i of the record of index j at
/// (i·m + j)·item_bytes: prefetch_source's layout, records in index order. The rest of the input frame is
/// not read: the address frame is as long as the input frame and needs about items-per-record + 1 words
/// per index (explicit addresses: random records make no pattern), so an index frame carries m indices and
/// room. An index past the dataset gives an address past its end, which the assembler names.
struct indexed_addresses {
  struct params : record_fields_params {
    std::int64_t indices_per_frame = 0;
  };
  static constexpr std::uint64_t end_of_indices = ~std::uint64_t{0};

  static constexpr const char* class_name = "prefetch_addresses_indexed";
  static constexpr const char* summary =
      "BigKernel address stage driven by data: the declared fields of the records whose indices (u64) "
      "open each input frame, item by item (prefetch_source's layout, records in index order)";

  template <class Schema>
  static void describe(Schema& s) {
    describe_record_fields(s);
    s.param(&params::indices_per_frame, "indices_per_frame",
            "record indices at the start of each input frame, m (0: the lanes), ended early by 2^64-1; the "
            "rest of the frame is room for the addresses",
            params{}.indices_per_frame, 0);
  }

  template <class Push>
  XF_HOST_DEVICE static std::uint32_t generate(const params& p, const address_lane& lane, Push& push) {
    const record_layout l = p.layout();
    if (*layout_problem(l) != '\0') return address_fault::bad_params;
    const std::uint64_t wanted =
        p.indices_per_frame > 0 ? static_cast<std::uint64_t>(p.indices_per_frame) : lane.lanes;
    const std::uint64_t* indices = lane.in;
    // Where the list ends: the first end marker of [0, m), by bisection (every element after it is one).
    std::uint64_t low = 0, high = wanted < lane.in_count ? wanted : lane.in_count;
    while (low < high) {
      const std::uint64_t mid = low + (high - low) / 2;
      if (indices[mid] == end_of_indices)
        high = mid;
      else
        low = mid + 1;
    }
    push_record_fields(
        l, low, lane, [indices](std::uint64_t j) { return indices[j]; }, push);
    return 0;
  }
};

}  // namespace xf::prefetch

namespace xf {
using indexed_addresses_op = prefetch_addresses_op<prefetch::indexed_addresses>;
}  // namespace xf
