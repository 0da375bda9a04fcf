// The GPUfs readahead paper's microbenchmark over xeflow's file cache: `blocks` blocks of
// `threads` threads, each block reading its own contiguous stride of a file in `request`-byte reads with
// block_read (framework/gpu/block_read.cuh) — the cache in device memory, host I/O threads behind it —
// and summing what it read, which the host checks against the file. The random pattern is the paper's
// Mosaic case: each block's next offset comes from the bytes it just read (read_chain.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "framework/files/file_cache_spec.hpp"
#include "framework/files/file_fetch.hpp"
#include "framework/files/io_service.hpp"

namespace xf::file_baseline {

/// How a block picks its reads: its own contiguous stride in order, or a data-dependent chain.
enum class read_pattern { stride, random };

struct read_config {
  std::string path;
  std::uint32_t blocks = 120;
  std::uint32_t threads = 512;
  std::uint64_t request = 4096;  ///< bytes per read (a multiple of 8)
  read_pattern pattern = read_pattern::stride;
  std::uint32_t reads = 1024;  ///< reads per block (random only): chain_first_offset, then chain_next_offset
  file_cache_spec cache;
  bool verify = true;
};

struct read_result {
  std::string device;
  std::uint64_t bytes = 0;  ///< read by the blocks: the file's size (stride), the chains' reads (random)
  bool direct = false;      ///< the cache's I/O threads read the file O_DIRECT
  double seconds = 0;       ///< the kernel's, from its launch to its end (cudaEvent)
  bool verified = false;
  /// The blocks' sum of the words they read, and the host's: the file's (stride), or the host's walk of
  /// the same chains with pread (random; its bytes must equal `bytes` too).
  std::uint64_t device_checksum = 0, file_checksum = 0;
  fetch_counters fetch;  ///< summed over blocks
  std::vector<io_thread_stats> io;
  double gbps() const { return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0; }
};

/// Runs it once. Throws run_error (a failed read: path and byte offset), cuda_error, and
/// std::invalid_argument for settings it cannot run.
read_result run_reads(const read_config& c);

}  // namespace xf::file_baseline
