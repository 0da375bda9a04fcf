// The file cache of a run on the host executor (issue 6): the page slots, their bytes, the page table,
// the request slots with their staging and the ring, all in host memory, the files opened, and the I/O
// threads serving them. Blocks (host threads) fetch through `view()` and their `block(b)` exactly as the
// kernel's blocks will through device memory, so CI runs the cache's real protocol.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "framework/errors.hpp"
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

class host_file_cache {
 public:
  /// Opens `files` (ids 0, 1, … in order) and lays out the cache for `blocks` blocks. Throws run_error for
  /// a file that cannot be opened, precondition_error for settings validation lets through only in C++
  /// (the cache too small for one page per block).
  host_file_cache(const file_cache_spec& spec, std::uint32_t blocks, const std::vector<cache_file>& files,
                  io_service::site_of_request site_of, std::chrono::milliseconds watchdog);
  ~host_file_cache();
  host_file_cache(const host_file_cache&) = delete;
  host_file_cache& operator=(const host_file_cache&) = delete;

  const file_cache_view& view() const { return view_; }
  /// Block b's LRA share and request slots; only block b's thread touches it.
  fetch_block& block(std::uint32_t b) { return blocks_.at(b); }
  std::uint32_t block_count() const { return static_cast<std::uint32_t>(blocks_.size()); }
  const file_table& files() const { return files_; }
  /// For the test seams (file_table::inject_fault): before start().
  file_table& files() { return files_; }

  void start() { io_->start(); }
  /// Stops the I/O threads; what they leave is answered `stopped`.
  void stop() { io_->stop(); }
  /// The first I/O error or watchdog timeout, if any (the executor's poll).
  std::optional<run_error> poll() { return io_->poll(); }
  std::vector<io_thread_stats> io_stats() const { return io_->stats(); }
  const file_cache_spec& spec() const { return spec_; }

 private:
  struct freer {
    void operator()(void* p) const;
  };
  file_cache_spec spec_;
  file_table files_;
  std::vector<std::uint64_t> first_page_, sizes_;
  std::unique_ptr<page_slot[], freer> slots_;
  std::unique_ptr<std::byte[], freer> pages_, staging_, ahead_;
  std::vector<readahead_window> windows_;  ///< blocks × files
  std::vector<std::uint32_t> table_;
  std::vector<request_slot> requests_;
  std::vector<request_ring_cell> cells_;
  std::uint64_t ring_head_ = 0, ring_tail_ = 0;
  std::uint64_t global_hand_ = 0;
  std::vector<fetch_block> blocks_;
  file_cache_view view_;
  std::unique_ptr<io_service> io_;
};

}  // namespace xf
