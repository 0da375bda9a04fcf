// What a user writes today to feed a GPU sink (word count, affinity) from a dataset larger than the GPU —
// the BigKernel paper's baselines — run over the very frames and operator code xeflow runs: the topology's
// CPU source produces the frames into staging buffers, chunks of frames cross PCIe one buffer at a time
// (single), on two buffers and two streams (double buffering, the paper's state of the art), or as managed
// memory prefetched with cudaMemPrefetchAsync (managed), and each frame is one ordinary launch of the sink's
// compute (kernel_program::launch_frame) into its accumulator in device memory; the end finishes it as
// xeflow does. Only the transport differs from an xeflow run of the same topology.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "framework/model/operator.hpp"

namespace xf::apps {

enum class sink_transfer { single, double_buffer, managed };

struct sink_baseline_config {
  std::string topology;                ///< YAML: one CPU source -> one topic -> one GPU sink
  std::vector<std::string> overrides;  ///< --set
  sink_transfer mode = sink_transfer::double_buffer;
  std::uint32_t frames_per_chunk = 4;  ///< frames per transfer
  std::uint32_t blocks = 0;            ///< per launch; 0: as many as fit on the GPU at once
  std::uint32_t threads = 256;         ///< per block
};

struct sink_baseline_result {
  std::string mode;
  std::uint64_t frames = 0;
  std::uint64_t bytes_to_device = 0;
  double seconds = 0;  ///< from the first frame produced to the accumulator back on the host
  operator_counters source_counters;
  operator_counters sink_counters;  ///< the sink's finish()
};

/// Runs the baseline. Throws config_error (the topology), usage_error (its shape), run_error (the source or
/// the sink, naming them: a failed frame names its offset and the sink's reason), cuda_error.
sink_baseline_result run_sink_baseline(const sink_baseline_config& cfg);

nlohmann::json to_json(const sink_baseline_result& r);

}  // namespace xf::apps
