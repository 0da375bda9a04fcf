// What a user writes today for a K-means assignment pass over a dataset larger than the GPU (the BigKernel
// paper's baselines): chunks of whole particle records copied to the device — one buffer at a time, two
// buffers on two streams (double buffering, the paper's state of the art), or managed-memory chunks
// prefetched with cudaMemPrefetchAsync — a kernel assigning each particle its nearest centre, and the ids
// copied back and stored into the records by the CPU. The same rounding as xeflow's kmeans_assign and the
// CPU reference, so all write the same file.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "apps/kmeans/kmeans_format.hpp"

namespace xf::apps::kmeans {

enum class transfer_mode { single, double_buffer, managed };

/// "single", "double", "managed".
const char* name_of(transfer_mode m);

struct gpu_baseline_config {
  transfer_mode mode = transfer_mode::double_buffer;
  std::uint32_t clusters = 8;  ///< 1..32 (kmeans_assign_op::max_centres); centres = the first K particles
  std::uint64_t chunk_particles = 65536;  ///< records per transfer (4 MiB)
  /// CPU threads that stage each chunk's records into its buffer and store its ids into the records (the
  /// work xeflow's source and write-back threads do), one team for the whole pass.
  unsigned threads = 8;
};

struct gpu_baseline_result {
  std::uint64_t particles = 0;
  double seconds = 0;                 ///< the pass: staging, transfers, kernels, storing the ids
  std::uint64_t bytes_to_device = 0;  ///< whole records
  std::uint64_t bytes_to_host = 0;    ///< ids
  std::uint32_t ids_crc = 0;          ///< CRC-32 of the ids (u32 LE, particle order)
};

/// One assignment pass over `particles` (a mapped dataset), writing each particle's cluster. Throws
/// std::runtime_error naming the CUDA call on a CUDA failure, std::invalid_argument on a bad config or
/// fewer particles than clusters.
gpu_baseline_result assign_pass_on_gpu(std::span<particle> particles, const gpu_baseline_config& cfg);

}  // namespace xf::apps::kmeans
