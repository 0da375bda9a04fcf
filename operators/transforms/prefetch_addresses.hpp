// prefetch_addresses: the BigKernel paper's stage 1 (address generation) as a GPU operator. For each input
// frame a Generator names, lane by lane, the dataset bytes the consumer will read, and each lane's addresses
// are compressed (address_stream.hpp: base + repeating strides, explicit runs otherwise) into its region of
// the output frame (address_frame.hpp). A prefetch_assembler on the CPU turns the frame into the data
// (stage 2); only the address words cross PCIe, instead of addresses the CPU would have to be told.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "framework/core/exec_space.hpp"
#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"
#include "operators/sources/prefetch/address_frame.hpp"
#include "operators/sources/prefetch/address_stream.hpp"

namespace xf {

/// The codes with which a prefetch_addresses operator fails a frame (frame_task::fail; the run's error
/// names the operator, its input topic, the offset and the code).
namespace address_fault {
inline constexpr std::uint32_t wrong_element = 1;    ///< a topic's element type is not u64
inline constexpr std::uint32_t frame_too_small = 2;  ///< the frame cannot hold the header and a word per lane
inline constexpr std::uint32_t lane_overflow = 3;    ///< a lane's addresses do not fit its region
/// Generators' own codes start here; the built-in generators (address_generators/) use these:
inline constexpr std::uint32_t first_generator_code = 16;
inline constexpr std::uint32_t bad_params = 16;      ///< a record layout that cannot be (not checked at load)
inline constexpr std::uint32_t no_range = 17;        ///< the input frame carries no range (range_frame.hpp)
inline constexpr std::uint32_t range_too_long = 18;  ///< a text range longer than the lanes read
}  // namespace address_fault

/// What a Generator is told about the lane it generates for.
struct address_lane {
  std::uint64_t offset = 0;           ///< the frame's offset
  std::uint32_t lane = 0;             ///< this lane, 0 … lanes − 1
  std::uint32_t lanes = 1;            ///< L, the frame's lanes
  const std::uint64_t* in = nullptr;  ///< the input frame's elements: a record range (range_frame.hpp)
  std::uint64_t in_count = 0;         ///< or record indices, as the generator expects
};

namespace prefetch {

/// A lane's `push(address)`: encodes into the lane's region; false once the region is full, and from then
/// on (the frame fails with lane_overflow, so nothing is dropped silently).
class lane_push {
 public:
  XF_HOST_DEVICE lane_push(bool patterns, address_words& out) : encoder_(patterns), out_(&out) {}
  XF_HOST_DEVICE bool operator()(std::uint64_t address) {
    full_ = full_ || !encoder_.push(address, *out_);
    return !full_;
  }
  /// Writes what the encoder holds; false when the lane did not fit.
  XF_HOST_DEVICE bool finish() {
    full_ = full_ || !encoder_.finish(*out_);
    return !full_;
  }

 private:
  address_encoder encoder_;
  address_words* out_;
  bool full_ = false;
};

}  // namespace prefetch

/// The address stage for `Generator`. A Generator is a struct with
///   - `struct params`: its own parameters, trivially copyable (this operator's params derive from it and
///     add `lanes` and `patterns`);
///   - `static constexpr const char* class_name`: the operator's class name in topologies;
///   - `static constexpr const char* summary`: one line for --list-operators;
///   - `template <class Schema> static void describe(Schema& s)`: declares its parameters
///     (`s.param(&params::x, …)`, `s.parsed(…)`, and `s.check_params(…)` for what needs several of them);
///   - `template <class Push> XF_HOST_DEVICE static std::uint32_t generate(const params&, const
///     address_lane&, Push& push)`: calls `push(address)` for each dataset byte offset that lane
///     `lane.lane` of frame `lane.offset` reads, in the order its consumer reads them, and returns 0 — or
///     returns at once when push returns false (the lane's region is full), or returns a failure code ≥
///     address_fault::first_generator_code. The assembler puts item k of lane l at (k·L + l)·item_bytes
///     of the data frame, so a generator decides the data frame's layout by what it gives each lane.
/// generate must be a function of (params, lane, input frame): verify sinks replay it on the host.
///
/// Each input frame (u64, any content the generator wants; frame length = the address frame's length,
/// since a GPU map's output is as long as its input) gives one output frame (u64) of `lanes` logical lanes:
/// a fixed L, not the kernel's thread count, which changes between rounds; virtual thread t runs lanes t,
/// t + thread_count, … The frame is computed whole (its regions span it). List an instantiation in the
/// launcher's gpu_operator_list like any GPU operator (`prefetch_addresses_op<my_generator>`).
template <class Generator>
struct prefetch_addresses_op {
  static constexpr const char* class_name = Generator::class_name;
  static constexpr element_set elements{element_type::u64};
  struct params : Generator::params {
    std::uint32_t lanes = 256;
    bool patterns = true;
  };
  using generator_params = typename Generator::params;

  static const char* failure_reason(std::uint32_t code) {
    switch (code) {
      case address_fault::wrong_element:
        return "a topic's element type is not u64";
      case address_fault::frame_too_small:
        return "the address frame cannot hold the header and a word per lane";
      case address_fault::lane_overflow:
        return "a lane's addresses do not fit its region of the address frame";
      case address_fault::bad_params:
        return "a record layout that cannot be";
      case address_fault::no_range:
        return "the input frame carries no range (not a prefetch_ranges frame)";
      case address_fault::range_too_long:
        return "a text range longer than the lanes read";
      default:
        return nullptr;
    }
  }

  static void describe(operator_schema<params>& s) {
    s.describe(
         std::string(Generator::summary) +
         "; each of `lanes` lanes' addresses compressed into its region of a u64 address frame for a "
         "prefetch_assembler. Fails a frame with code 1 (topics not u64), 2 (frame too small for the "
         "lanes), 3 (a lane's addresses overflow its region), 16 and up (the generator's; built-in: 16 bad "
         "record layout, 17 input not a prefetch_ranges frame, 18 range longer than the lanes read)")
        .whole_frames();
    Generator::describe(s);
    s.param(&params::lanes, "lanes",
            "logical address-generation threads per frame (L): lane l's items land at (k*L + l)*item_bytes "
            "of the data frame",
            params{}.lanes, 1, 1 << 20);
    s.param(&params::patterns, "patterns",
            "on: compress each lane's addresses to base + strides (BigKernel's pattern recognition); off: "
            "every address as it is (the paper's Table II baseline)",
            params{}.patterns);
  }

  template <class T>
  XF_HOST_DEVICE static void compute(const params& p, const frame_task<T>& task) {
    if constexpr (!std::is_same_v<T, std::uint64_t>) {
      task.fail(address_fault::wrong_element);
    } else {
      const auto shape = prefetch::address_frame_shape::fit(task.count, p.lanes);
      if (shape.words_per_lane == 0) {
        task.fail(address_fault::frame_too_small);
        return;
      }
      std::uint64_t* words = task.out;
      if (task.thread_id == 0) {
        words[0] = prefetch::address_frame_magic;
        words[1] = shape.lanes;
        words[2] = shape.words_per_lane;
        for (std::uint64_t i = shape.words(); i < task.count; ++i) words[i] = 0;
      }
      const auto capacity = static_cast<std::uint32_t>(shape.words_per_lane);
      for (std::uint32_t lane = task.thread_id; lane < p.lanes; lane += task.thread_count) {
        std::uint64_t* region = words + shape.region_index(lane);
        prefetch::address_words out{region, capacity, 0};
        prefetch::lane_push push(p.patterns, out);
        const address_lane at{task.offset, lane, p.lanes, task.in, task.count};
        const std::uint32_t code = Generator::generate(static_cast<const generator_params&>(p), at, push);
        const bool fits = push.finish();
        words[shape.used_index(lane)] = out.used;
        for (std::uint32_t k = out.used; k < capacity; ++k) region[k] = 0;
        if (!fits)
          task.fail(address_fault::lane_overflow);
        else if (code != 0)
          task.fail(code);
      }
    }
  }
};

}  // namespace xf
