// Where the file cache keeps its parts. The cache's layout and protocol are the same for both
// executors; only the memory differs:
//   - `kernel`: what only the blocks touch — page slots and bytes, the page table, the blocks' shares,
//     readahead buffers and windows, the ring's producer word. Device memory on the GPU executor, where
//     the kernel's blocks reach it at L2 speed; host memory for the host executor's blocks.
//   - `shared`: what the blocks and the host's I/O threads both touch — the request slots, their staging
//     and the ring's cells. Pinned host memory mapped into the device on the GPU executor (the blocks read
//     answers and staged bytes over PCIe, the I/O threads pread into it directly); host memory otherwise.
#pragma once

#include <cstddef>
#include <memory>

namespace xf {

enum class cache_place { kernel, shared };

class cache_memory {
 public:
  virtual ~cache_memory() = default;
  /// `bytes` (rounded up to 4096) aligned to 4096 — O_DIRECT reads land in staging — and zeroed if
  /// `zero`; freed with this object. Throws when the memory cannot be had.
  virtual void* allocate(std::size_t bytes, cache_place place, bool zero) = 0;
  /// Copies host bytes into kernel memory, and kernel memory back into host bytes.
  virtual void upload(void* kernel_dst, const void* host_src, std::size_t bytes) = 0;
  virtual void download(void* host_dst, const void* kernel_src, std::size_t bytes) = 0;
  /// What a report calls the kernel memory ("host memory", "device memory").
  virtual const char* kernel_name() const = 0;
  /// Whether the host may read and write kernel memory in place.
  virtual bool kernel_on_host() const = 0;
};

/// Both places in host memory (the host executor).
std::unique_ptr<cache_memory> host_cache_memory();

}  // namespace xf
