// pack and unpack on the host side: committing the type into the parameters, the view its instances
// span, and the checks against the input topic (see datatype_pack.hpp).
#include "operators/transforms/datatype_pack.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <span>

#include "framework/core/units.hpp"
#include "framework/datatype/committed_type.hpp"
#include "framework/datatype/pack.hpp"

namespace xf {

std::string commit_param(const dt::datatype& type, committed_param& out) {
  if (type.size() == 0) return "the type holds no data: there is nothing to move";
  const dt::committed_type committed = dt::commit(type);
  const std::span<const std::byte> bytes = committed.bytes();
  if (bytes.size() > committed_param::capacity)
    return "its committed form is " + format_bytes(bytes.size()) + " (" +
           std::to_string(committed.header().record_count) + " records and their lists), more than the " +
           format_bytes(committed_param::capacity) + " an operator's parameters hold";
  std::memcpy(out.bytes, bytes.data(), bytes.size());
  out.size = bytes.size();
  return "";
}

std::string datatype_view_of(const datatype_frame_params& p, datatype_view& out) {
  if (p.type.size == 0) return "no datatype";
  const dt::type_record root = p.type.view().record(0);
  using wide = __int128;
  const wide count = p.count;
  const wide span = (count - 1) * root.extent;  // from the first instance to the last
  const wide lb = root.lb, ub = wide{root.lb} + root.extent;
  const wide true_lb = root.true_lb, true_ub = wide{root.true_lb} + root.true_extent;
  const wide low = std::min({lb, lb + span, true_lb, true_lb + span});
  const wide high = std::max({ub, ub + span, true_ub, true_ub + span});
  const auto fits = [](wide v) {
    return v >= std::numeric_limits<std::int64_t>::min() && v <= std::numeric_limits<std::int64_t>::max();
  };
  // The traversal computes these without checks (traversal.hpp): they must be 64-bit offsets.
  if (!fits(low) || !fits(high) || !fits(high - low) || !fits(count * root.extent) ||
      !fits(count * root.size) || !fits(count * root.elements))
    return "count (" + std::to_string(p.count) + ") instances of the type overflow 64-bit byte offsets";
  out.lb = static_cast<std::int64_t>(low);
  out.bytes = static_cast<std::uint64_t>(high - low);
  out.packed = static_cast<std::uint64_t>(count * root.size);
  out.elements = static_cast<std::int64_t>(count * root.elements);
  // The kernel sizes the output frame as the input's bytes times a 32-bit fraction.
  const std::uint64_t g = std::gcd(out.bytes, out.packed);
  if (out.bytes / g > UINT32_MAX || out.packed / g > UINT32_MAX)
    return "the packed bytes (" + std::to_string(out.packed) + ") and the view's (" +
           std::to_string(out.bytes) +
           ") have no ratio of 32-bit terms, which the kernel's output share needs";
  return "";
}

output_fraction datatype_frames_share(const datatype_frame_params& p, datatype_direction d) {
  datatype_view v;
  if (!datatype_view_of(p, v).empty()) return {};  // refused at validation (check_params)
  const std::uint64_t g = std::gcd(v.bytes, v.packed);
  const auto view = static_cast<std::uint32_t>(v.bytes / g),
             packed = static_cast<std::uint32_t>(v.packed / g);
  return d == datatype_direction::pack ? output_fraction{packed, view} : output_fraction{view, packed};
}

void describe_datatype_frames(operator_schema<datatype_frame_params>& s, datatype_direction d) {
  using params = datatype_frame_params;
  s.describe(
       d == datatype_direction::pack
           ? "packs an MPI derived datatype: each input frame is the view of `count` instances of `type` "
             "(MPI's buffer, from the lowest byte they touch), the output frame their data in type-map "
             "order"
           : "unpacks an MPI derived datatype: each input frame is the packed data of `count` instances "
             "of `type`, the output frame their view (bytes no element covers are zero)")
      .whole_frames();
  s.datatype(&params::type, "type",
             "the datatype: a name from the topology's datatypes, a primitive, or a datatype written inline",
             commit_param);
  s.param(&params::count, "count", "instances of the type a frame holds", std::int64_t{1}, 1);
  s.param(&params::elements_per_lane, "elements_per_lane",
          "elements a GPU lane moves at a time (0: about 32 bytes' worth)", 0u, 0, 1u << 20);
  s.check_params([](const params& p) {
    datatype_view v;
    return datatype_view_of(p, v);
  });
}

std::optional<param_problem> bind_datatype_frames(datatype_frame_params& p, const topic_info& input,
                                                  datatype_direction d) {
  if (std::string problem = datatype_view_of(p, p.view); !problem.empty())
    return param_problem{"count", problem};
  const bool packing = d == datatype_direction::pack;
  const std::string instances = std::to_string(p.count) + (p.count == 1 ? " instance" : " instances");
  const std::uint64_t needed = packing ? p.view.bytes : p.view.packed;
  if (input.frame_bytes < needed)
    return param_problem{"type",
                         "input topic '" + input.name + "' has frames of " + format_bytes(input.frame_bytes) +
                             ", but each input frame is " + std::to_string(needed) + " bytes: " +
                             (packing ? "the view of " + instances + " of the type (from displacement " +
                                            std::to_string(p.view.lb) + ")"
                                      : instances + " of the type, packed")};
  const std::uint64_t element = size_of(input.element);
  if (p.view.bytes % element != 0 || p.view.packed % element != 0)
    return param_problem{
        "type", "the view (" + std::to_string(p.view.bytes) + " bytes) and the packed data (" +
                    std::to_string(p.view.packed) + " bytes) must be whole elements of topic '" + input.name +
                    "' (" + std::string(name_of(input.element)) + ", " + std::to_string(element) + " bytes)"};
  const dt::type_record root = p.type.view().record(0);
  if (p.elements_per_lane != 0) {
    p.lane_elements = p.elements_per_lane;
  } else {
    // About 32 bytes of data a lane: a warp's lanes then move a kilobyte at a time between them.
    constexpr std::int64_t lane_bytes = 32;
    const std::int64_t k = (lane_bytes * root.elements + root.size - 1) / root.size;
    p.lane_elements = static_cast<std::uint32_t>(std::clamp<std::int64_t>(k, 1, lane_bytes));
  }
  p.zero_gaps = 0;
  if (packing) return std::nullopt;

  // unpack sets every byte of its output frame. Elements in address order leave gaps the lanes can zero
  // on the way; a type out of that order must cover its view exactly.
  bool ordered = true;
  std::int64_t reached = std::numeric_limits<std::int64_t>::min();
  std::uint64_t covered = 0;
  const bool walked = dt::for_each_run(p.type.view(), p.count, 0, p.view.elements,
                                       [&](std::int64_t in, std::int64_t, std::int64_t bytes) {
                                         if (in < reached) ordered = false;
                                         reached = std::max(reached, in + bytes);
                                         covered += static_cast<std::uint64_t>(bytes);
                                       });
  if (!walked) return param_problem{"type", "its committed records cannot be walked"};
  if (ordered) {
    p.zero_gaps = 1;
    return std::nullopt;
  }
  const dt::committed_type committed =
      dt::committed_type::load({p.type.bytes, static_cast<std::size_t>(p.type.size)});
  if (const std::optional<std::int64_t> twice = dt::first_overlap(committed, p.count))
    return param_problem{"type", "its elements overlap (displacement " + std::to_string(*twice) +
                                     " is covered twice): unpacking into such a type is erroneous in MPI"};
  if (covered != p.view.bytes)
    return param_problem{
        "type", "its elements are out of address order and leave " + std::to_string(p.view.bytes - covered) +
                    " of the view's " + std::to_string(p.view.bytes) +
                    " bytes uncovered: unpack sets every byte of its output, zeroing gaps only between "
                    "elements in address order (or use a type that covers its view)"};
  return std::nullopt;
}

namespace datatype_frames {

const char* failure_reason(std::uint32_t code) {
  switch (code) {
    case wrong_length:
      return "the input frame's length is not one input's: pack reads the view of `count` instances of the "
             "type, unpack their packed bytes (the source's frames must be exactly that long)";
    case bad_type:
      return "the committed datatype in the operator's parameters could not be walked";
    default:
      return nullptr;
  }
}

}  // namespace datatype_frames

}  // namespace xf
