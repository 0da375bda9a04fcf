// runtime.file_cache: the settings of the file cache that GPU file readers read through — its
// size and pages, readahead, replacement, and the host I/O threads behind it. Parsed by
// framework/model/yaml_loader.cpp, emitted by spec_yaml.cpp, checked by spec_validation.cpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <thread>

#include "framework/files/readahead_window.hpp"

namespace xf {

/// `automatic` tries O_DIRECT and falls back to buffered reads where the filesystem refuses it (tmpfs,
/// overlayfs), `on` makes that refusal an error, `off` never tries.
enum class direct_io_mode : std::uint8_t { automatic, on, off };
/// `lra`: each block reuses its own share of the cache in allocation order (the GPUfs readahead paper's
/// §5); `global`: one hand over every slot, shared by all blocks (the policy it is measured against).
enum class page_replacement : std::uint8_t { lra, global };

constexpr std::string_view name_of(direct_io_mode m) {
  return m == direct_io_mode::automatic ? "auto" : m == direct_io_mode::on ? "on" : "off";
}
constexpr std::string_view name_of(page_replacement r) {
  return r == page_replacement::lra ? "lra" : "global";
}
constexpr std::string_view name_of(readahead_mode m) {
  return m == readahead_mode::off ? "off" : m == readahead_mode::on ? "on" : "adaptive";
}

struct file_cache_spec {
  std::uint64_t size = std::uint64_t{2} << 30;  ///< bytes of page slots (device memory on the GPU executor)
  std::uint32_t page_bytes = 4096;              ///< a power of two, 4 KiB … 64 KiB
  std::uint64_t readahead = 64 << 10;  ///< the most a reader stream reads ahead, a multiple of the page
  readahead_mode readahead_policy = readahead_mode::adaptive;
  page_replacement replacement = page_replacement::lra;
  /// Host threads serving reads; 0: derived (`io_threads_of`). Four, the paper's, left the I/O threads
  /// inside their copies 96-98 % of warm end-to-end runs on the H100: the page cache's
  /// bytes need more than four threads to keep up with the GPU.
  std::uint32_t io_threads = 0;
  std::uint32_t io_slots_per_block = 4;   ///< requests a block may have in flight
  std::uint64_t max_request = 256 << 10;  ///< the longest request (and each slot's staging)
  /// The longest pread of an I/O thread: a longer request is split among the threads (XeFlow's §3.3). 1 MiB,
  /// measured on the H100 VM's disk: O_DIRECT preads of 128 KiB gave 0.79 / 1.03 / 1.18 GB/s with 1 / 4 / 16
  /// threads against 1.85 / 1.68 / 1.19 at 1 MiB, and 4 MiB lost 17 % to 1 MiB; end to end, 16 I/O threads
  /// with 1 MiB chunks were 1.10x 128 KiB's cold and 1.20x warm (the page cache's copies are fewer and
  /// longer).
  std::uint64_t io_chunk = 1 << 20;
  direct_io_mode direct = direct_io_mode::automatic;
  friend bool operator==(const file_cache_spec&, const file_cache_spec&) = default;
};

/// The I/O threads a cache with `spec` runs: its `io_threads`, or when 0 one per hardware thread, at most
/// 16 (the most measured, and what bench/results/files/ ran with; idle ones still wake to poll).
inline std::uint32_t io_threads_of(const file_cache_spec& spec) {
  if (spec.io_threads != 0) return spec.io_threads;
  return std::clamp<std::uint32_t>(std::thread::hardware_concurrency(), 1, 16);
}

}  // namespace xf
