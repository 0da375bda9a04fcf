// raid6_recover: each frame is a RAID-6 stripe (k data blocks, then P and Q) in which one or two blocks
// are lost; the output frame is the stripe with them rebuilt from the survivors (operators/encoding/
// raid6.hpp). The lost blocks' input bytes are never read.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "framework/core/units.hpp"
#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"
#include "operators/encoding/raid6.hpp"

namespace xf {

struct raid6_recover_op {
  static constexpr char class_name[] = "raid6_recover";
  static constexpr element_set elements{element_type::u8};

  static constexpr std::uint32_t short_stripe = 1;

  /// The lost blocks as written: one or two of data block indices (0 … k − 1), P and Q.
  struct lost_blocks {
    static constexpr std::uint32_t p = 0xfffffffe, q = 0xffffffff;  ///< resolved to k, k + 1 at binding
    std::uint32_t count = 0;
    std::uint32_t index[2] = {0, 0};
  };
  static const char* parse_lost(const std::string& text, lost_blocks& out);

  struct params {
    std::uint32_t k = 4;
    std::uint64_t block_bytes = 64 * 1024;
    lost_blocks lost;
    raid6::recovery recovery;  ///< from k and lost, at binding
  };

  static void describe(operator_schema<params>& s);

  /// A frame is exactly one stripe of k + 2 blocks, its blocks a multiple of 64 bytes; the lost blocks lie in
  /// it. Makes the recovery's coefficients.
  static std::optional<param_problem> bind_input(params& p, const topic_info& input);

  /// Placed `on: cpu`: ISA-L's erasure-code routines (cpu_versions.cpp), or null where the build has no
  /// ISA-L.
  static std::unique_ptr<cpu_map> cpu_version(const params& p);

  static const char* failure_reason(std::uint32_t code) {
    return code == short_stripe ? "the frame holds less than a whole stripe ((k + 2) times block_size bytes)"
                                : nullptr;
  }

  template <class T>
  XF_HOST_DEVICE static void compute(const params& p, const frame_task<T>& task) {
    const unsigned blocks = p.k + 2;
    if (task.count * sizeof(T) != std::uint64_t{blocks} * p.block_bytes) {
      task.fail(short_stripe);
      return;
    }
    const raid6::recovery& r = p.recovery;
    const std::uint64_t words = p.block_bytes / 8;
    const auto* stripe = reinterpret_cast<const std::uint64_t*>(task.in);
    auto* out = reinterpret_cast<std::uint64_t*>(task.out);
    // This item's share of the blocks' words (the frame may be shared by task.parts items).
    const std::uint64_t first = words * task.part / task.parts, end = words * (task.part + 1) / task.parts;
    for (std::uint64_t w = first + task.thread_id; w < end; w += task.thread_count) {
      std::uint64_t rebuilt[2] = {0, 0};
      raid6::recover_word(r, stripe, words, w, rebuilt);
      for (unsigned i = 0; i < blocks; ++i) {
        const bool first_lost = i == r.lost[0], second_lost = r.lost_count == 2 && i == r.lost[1];
        out[i * words + w] = first_lost ? rebuilt[0] : second_lost ? rebuilt[1] : stripe[i * words + w];
      }
    }
  }
};

}  // namespace xf
