// The CPU I/O baseline of the file benchmark: what a user writes today to get a file into GPU
// memory — N host threads, each reading its own contiguous part of the file with pread (O_DIRECT where the
// filesystem allows, through xeflow's file_table) into pinned buffers it cycles through, and copying each
// buffer to the device with cudaMemcpyAsync on its own stream while it reads the next.
#pragma once

#include <cstdint>
#include <string>

#include "framework/files/file_cache_spec.hpp"

namespace xf::file_baseline {

struct config {
  std::string path;
  unsigned threads = 4;
  std::uint64_t request = 1 << 20;  ///< bytes per pread and per copy (a multiple of 4 KiB)
  unsigned buffers = 2;             ///< pinned buffers per thread (2: read one while the other copies)
  direct_io_mode direct = direct_io_mode::automatic;
  bool verify = true;  ///< compare a checksum of the device copy with one of the file (outside the timing)
};

struct result {
  std::string device;
  std::uint64_t bytes = 0;
  double seconds = 0;   ///< from the first read to the last copy's completion
  bool direct = false;  ///< the file was read O_DIRECT
  bool verified = false;
  std::uint64_t device_checksum = 0, file_checksum = 0;
  double gbps() const { return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0; }
};

/// Runs it once. Throws std::runtime_error (a failed read names the path and byte offset; a CUDA error
/// names the call) and std::invalid_argument for settings it cannot run (the file larger than the GPU's
/// free memory: the copy's destination is the whole file in device memory).
result run(const config& c);

}  // namespace xf::file_baseline
