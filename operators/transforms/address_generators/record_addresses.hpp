// The address stage's records generator: fixed-length records with declared fields, the records of each
// frame named by prefetch_ranges — the data prefetch_source gathers on its own, here through addresses that
// cross PCIe (what the paper's Table II compares, with patterns on and off).
#pragma once

#include <cstdint>

#include "framework/core/exec_space.hpp"
#include "operators/sources/prefetch/range_frame.hpp"
#include "operators/transforms/address_generators/record_fields.hpp"
#include "operators/transforms/prefetch_addresses.hpp"

namespace xf::prefetch {

/// The input frame carries the records [first, first + n) (range_frame.hpp: a prefetch_ranges upstream
/// with the same records_per_frame R as a prefetch_writeback downstream); lane l reads the items q ≡ l
/// (mod L) of the frame's q = i·n + j (push_record_fields), so the assembled frame is prefetch_source's
/// frame for the same R, and with R = L lane l of frame o reads record o·L + l.
struct record_addresses {
  struct params : record_fields_params {};

  static constexpr const char* class_name = "prefetch_addresses_records";
  static constexpr const char* summary =
      "BigKernel address stage for fixed-length records: the declared fields of the records a "
      "prefetch_ranges frame names, item by item (the frame prefetch_source makes)";

  template <class Schema>
  static void describe(Schema& s) {
    describe_record_fields(s);
  }

  template <class Push>
  XF_HOST_DEVICE static std::uint32_t generate(const params& p, const address_lane& lane, Push& push) {
    const record_layout l = p.layout();
    if (*layout_problem(l) != '\0') return address_fault::bad_params;
    record_range range;
    if (!read_range(lane.in, lane.in_count, range)) return address_fault::no_range;
    const std::uint64_t first = range.first;
    push_record_fields(
        l, range.count, lane, [first](std::uint64_t j) { return first + j; }, push);
    return 0;
  }
};

}  // namespace xf::prefetch

namespace xf {
using record_addresses_op = prefetch_addresses_op<prefetch::record_addresses>;
}  // namespace xf
