// raid6_encode: each frame is a RAID-6 stripe of k data blocks; the output frame is its P then its Q
// (operators/encoding/raid6.hpp), bit-identical to ISA-L's pq_gen: 2 of the stripe's k blocks — or the
// whole stripe, the k blocks then P and Q, for raid6_recover downstream.
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

struct raid6_encode_op {
  static constexpr char class_name[] = "raid6_encode";
  /// A stripe is bytes: compiled once.
  static constexpr element_set elements{element_type::u8};

  static constexpr std::uint32_t short_stripe = 1;

  /// What the output frame holds.
  enum class output : std::uint32_t { parity, stripe };
  static const char* parse_output(const std::string& text, output& out) {
    if (text == "parity")
      out = output::parity;
    else if (text == "stripe")
      out = output::stripe;
    else
      return "must be 'parity' (P then Q) or 'stripe' (the data blocks, then P and Q)";
    return "";
  }

  struct params {
    std::uint32_t k = 4;
    std::uint64_t block_bytes = 64 * 1024;
    output out = output::parity;
  };

  static void describe(operator_schema<params>& s) {
    s.describe(
         "RAID-6 P+Q: each frame is a stripe of k data blocks of block_size bytes; the output frame is P "
         "(their XOR) then Q (the sum of 2^i times block i in GF(2^8), polynomial 0x11d), as ISA-L's pq_gen "
         "and Linux md compute them")
        .shares_frames();
    s.param(&params::k, "k", "data blocks a stripe (one frame) holds", params{}.k, 2u,
            raid6::max_data_blocks);
    s.bytes(&params::block_bytes, "block_size", "bytes of each block (a multiple of 64)",
            params{}.block_bytes, raid6::block_bytes_multiple);
    s.parsed(&params::out, "output", "parity: P then Q; stripe: the k data blocks, then P and Q", "parity",
             parse_output);
  }

  /// A frame is exactly one stripe, its blocks a multiple of 64 bytes.
  static std::optional<param_problem> bind_input(params& p, const topic_info& input) {
    if (p.block_bytes % raid6::block_bytes_multiple != 0)
      return param_problem{"block_size",
                           "must be a multiple of 64 bytes, not " + std::to_string(p.block_bytes)};
    if (input.frame_bytes != std::uint64_t{p.k} * p.block_bytes)
      return param_problem{"block_size", "input topic '" + input.name + "' has frames of " +
                                             format_bytes(input.frame_bytes) +
                                             ", but a stripe of k = " + std::to_string(p.k) + " blocks of " +
                                             format_bytes(p.block_bytes) + " is " +
                                             format_bytes(std::uint64_t{p.k} * p.block_bytes) +
                                             " (the frame size must be k times block_size)"};
    return std::nullopt;
  }

  static output_fraction output_share(const params& p) {
    return {p.out == output::parity ? 2 : p.k + 2, p.k};
  }

  /// Placed `on: cpu`: ISA-L's pq_gen (cpu_versions.cpp), or null where the build has no ISA-L.
  static std::unique_ptr<cpu_map> cpu_version(const params& p);

  static const char* failure_reason(std::uint32_t code) {
    return code == short_stripe
               ? "the frame holds less than a whole stripe (k times block_size bytes); RAID-6 "
                 "encodes whole stripes"
               : nullptr;
  }

  template <class T>
  XF_HOST_DEVICE static void compute(const params& p, const frame_task<T>& task) {
    if (task.count * sizeof(T) != std::uint64_t{p.k} * p.block_bytes) {
      task.fail(short_stripe);
      return;
    }
    const std::uint64_t words = p.block_bytes / 8;
    const auto* stripe = reinterpret_cast<const std::uint64_t*>(task.in);
    auto* out = reinterpret_cast<std::uint64_t*>(task.out);
    const bool whole = p.out == output::stripe;
    std::uint64_t* pq = whole ? out + std::uint64_t{p.k} * words : out;
    // This item's share of the blocks' words (the frame may be shared by task.parts items); consecutive
    // virtual threads take consecutive words, so each block's loads coalesce.
    const std::uint64_t first = words * task.part / task.parts, end = words * (task.part + 1) / task.parts;
    for (std::uint64_t w = first + task.thread_id; w < end; w += task.thread_count) {
      std::uint64_t p_word, q_word;
      raid6::pq_word(stripe, words, p.k, w, p_word, q_word);
      pq[w] = p_word;
      pq[words + w] = q_word;
      if (whole)
        for (unsigned i = 0; i < p.k; ++i) out[i * words + w] = stripe[i * words + w];
    }
  }
};

}  // namespace xf
