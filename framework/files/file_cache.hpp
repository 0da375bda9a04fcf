// The file cache of a run: the page slots, their bytes, the page table, the blocks' shares and
// readahead, the request slots with their staging and the ring, the files opened, and the I/O threads
// serving them. One layout for both executors over a cache_memory: the GPU executor's kernel fetches
// through `view()` and `blocks()` in device memory, the host executor's blocks (threads) through the same
// structures in host memory — so CI runs the cache's real protocol.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "framework/core/errors.hpp"
#include "framework/files/cache_memory.hpp"
#include "framework/files/file_cache_spec.hpp"
#include "framework/files/file_cache_view.hpp"
#include "framework/files/file_fetch.hpp"
#include "framework/files/file_table.hpp"
#include "framework/files/io_service.hpp"

namespace xf {

/// A file a reader opens: its path, who asks (for the errors of opening it) and how it will be walked.
struct cache_file {
  std::string path;
  fault_site site;
  access_advice advice = access_advice::normal;
};

class file_cache {
 public:
  /// Opens `files` (ids 0, 1, … in order) and lays out the cache for `blocks` blocks in `memory` (host
  /// memory when null). Throws run_error for a file that cannot be opened, precondition_error for
  /// settings validation lets through only in C++ (the cache too small for one page per block).
  file_cache(const file_cache_spec& spec, std::uint32_t blocks, const std::vector<cache_file>& files,
             io_service::site_of_request site_of, std::chrono::milliseconds watchdog,
             std::unique_ptr<cache_memory> memory = nullptr);
  ~file_cache();
  file_cache(const file_cache&) = delete;
  file_cache& operator=(const file_cache&) = delete;

  /// Pointers into kernel and shared memory (trivially copyable: the kernel takes it by value).
  const file_cache_view& view() const { return view_; }
  /// The blocks' shares, request slots and readahead, [block_count()], in kernel memory: block b's is
  /// touched only by block b (one thread of it at a time).
  fetch_block* blocks() const { return blocks_; }
  /// Block b's, where kernel memory is host memory (the host executor's blocks).
  fetch_block& block(std::uint32_t b) const;
  std::uint32_t block_count() const { return block_count_; }
  /// Pages a block may hold at once: its LRA share, or every slot under the global policy. A stage that
  /// needs more never resolves.
  std::uint32_t block_room() const;
  const file_table& files() const { return files_; }
  /// For the test seams (file_table::inject_fault): before start().
  file_table& files() { return files_; }
  /// Each file's size at open (host copies of view().file_size).
  const std::vector<std::uint64_t>& sizes() const { return sizes_; }

  void start() { io_->start(); }
  /// Stops the I/O threads; what they leave is answered `stopped`.
  void stop() { io_->stop(); }
  /// The first I/O error or watchdog timeout, if any (the executor's poll).
  std::optional<run_error> poll() { return io_->poll(); }
  std::vector<io_thread_stats> io_stats() const { return io_->stats(); }
  const file_cache_spec& spec() const { return spec_; }

 private:
  template <class T>
  T* allocate(std::size_t count, cache_place place, bool zero) {
    return static_cast<T*>(memory_->allocate(count * sizeof(T), place, zero));
  }

  file_cache_spec spec_;
  std::unique_ptr<cache_memory> memory_;
  file_table files_;
  std::vector<std::uint64_t> first_page_, sizes_;
  std::uint32_t block_count_ = 0;
  fetch_block* blocks_ = nullptr;
  std::uint64_t ring_tail_ = 0;  ///< only the I/O threads take from the ring: host memory
  file_cache_view view_;
  std::unique_ptr<io_service> io_;
};

}  // namespace xf
