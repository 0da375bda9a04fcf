// What a run did, per operator and per topic: the final stats table and its JSON form.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "framework/operator.hpp"

namespace xf {

struct operator_stats {
  std::string name;
  std::string class_name;
  std::string placement;       ///< "cpu", or "gpu" for kernel operators
  std::uint32_t workers = 0;   ///< threads, or blocks for kernel operators
  std::uint32_t warps = 0;     ///< kernel operators: warps per block
  std::uint64_t frames_in = 0, bytes_in = 0;
  std::uint64_t frames_out = 0, bytes_out = 0;
  std::uint64_t busy_ns = 0;        ///< summed over workers: inside the operator's own code
  std::uint64_t input_wait_ns = 0;  ///< summed over workers: waiting for an input frame
  std::uint64_t blocked_ns = 0;     ///< summed over workers: waiting for a free output slot (backpressure)
  operator_counters counters;       ///< the operator's own end-of-run counters
};

struct topic_stats {
  std::string name;
  std::uint64_t frame_bytes = 0;
  std::uint32_t capacity = 0;
  std::uint64_t frames = 0, bytes = 0;
  std::uint64_t blocked_ns = 0;  ///< publishers waiting for a free slot
  std::uint64_t end_offset = 0;  ///< offsets published (frames and void) when the stream ended
};

struct run_stats {
  std::string topology;
  std::string executor;
  std::string status;  ///< "completed", "interrupted" or "failed"
  std::string error;   ///< the failure, when failed
  double wall_seconds = 0;
  std::vector<operator_stats> operators;
  std::vector<topic_stats> topics;
};

/// The stats as aligned text tables (operators, then topics, then operator counters).
std::string format_stats_table(const run_stats& stats);
/// The stats as a JSON document (nlohmann-json), pretty-printed.
std::string format_stats_json(const run_stats& stats);

}  // namespace xf
