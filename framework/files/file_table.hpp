// The files a run reads through its file cache, opened on the host at start: each gets a run-global
// id, its size at open, and O_DIRECT where the filesystem takes it (the cache is the only cache we want:
// the kernel's page cache would hold a second copy and its readahead would double ours). `read` is what a
// host I/O thread calls for one chunk of a request; `read_fully` is the loop both it and the plain
// file_source use, so short reads, EINTR, the end of the file and truncation mean the same everywhere.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "framework/core/errors.hpp"
#include "framework/files/file_api.hpp"
#include "framework/files/file_cache_spec.hpp"
#include "framework/files/file_list.hpp"
#include "framework/files/request_slot.hpp"

namespace xf {

struct file_table_options {
  direct_io_mode direct = direct_io_mode::automatic;
  /// Direct reads need offsets, lengths and buffers aligned; a file whose filesystem asks more than this
  /// (the cache's page size) is read buffered.
  std::uint32_t max_direct_alignment = 4096;
  /// Buffered files get POSIX_FADV_RANDOM so Linux's readahead does not double the cache's.
  bool advise_random = true;
};

struct opened_file {
  std::string path;
  int fd = -1;
  std::uint64_t size = 0;       ///< bytes at open; reads past it are the caller's error
  bool direct = false;          ///< opened O_DIRECT
  std::uint32_t alignment = 1;  ///< offsets, lengths and buffers of its reads are multiples of it
};

/// What one read did. `bytes`: read into the buffer (short only where `status` says why).
struct read_outcome {
  file_status status = file_status::ok;
  std::uint64_t bytes = 0;
  int error = 0;  ///< the errno of an io_error
};

/// Reads [offset, offset + bytes) of `fd` into `dst`: loops over short counts and EINTR; stops at an error
/// or at the end of the file (status `truncated` when that comes before offset + bytes). Under O_DIRECT,
/// `alignment` > 1: offset and dst aligned, the length read is rounded up to it, and a short count that
/// leaves the position unaligned is the end of the file.
read_outcome read_fully(int fd, std::uint64_t offset, std::uint64_t bytes, std::byte* dst,
                        std::uint32_t alignment = 1);

/// "read failed at byte offset N: Input/output error" or "file ends at byte offset N, before its size at
/// start (S bytes): truncated while being read", for an outcome of a read that began at `offset`.
std::string describe_read_failure(const read_outcome& outcome, std::uint64_t offset,
                                  std::uint64_t size_at_open);

class file_table {
 public:
  explicit file_table(file_table_options options = {});
  ~file_table();
  file_table(const file_table&) = delete;
  file_table& operator=(const file_table&) = delete;

  /// Opens a regular file for reading; returns its id (0, 1, … in the order opened). Throws run_error at
  /// `site` naming the path and the reason (missing, not a regular file, O_DIRECT refused under `on`).
  /// `advice` reaches the kernel's readahead of a buffered file (random also when advise_random is set).
  std::uint32_t open(const std::string& path, const fault_site& site,
                     access_advice advice = access_advice::normal);

  std::uint32_t count() const { return static_cast<std::uint32_t>(files_.size()); }
  const opened_file& file(std::uint32_t id) const;

  /// Reads [offset, offset + bytes) of file `id` into `dst`, which holds `capacity` bytes; the bytes past
  /// what was read, up to the length rounded up to the file's alignment, are zeroed (the last page of a
  /// file is whole and deterministic). Requires offset + bytes ≤ the size at open; for a direct file offset
  /// and dst aligned. Thread-safe (pread).
  read_outcome read(std::uint32_t id, std::uint64_t offset, std::uint64_t bytes, std::byte* dst,
                    std::uint64_t capacity) const;

  /// The run error for a failed read of file `id` at `offset` ("file 'P': …"), at `site`.
  run_error failure(std::uint32_t id, const read_outcome& outcome, std::uint64_t offset,
                    fault_site site) const;
  /// The run error for a stage's range that check_ranges (file_api.hpp) refused: ids are run-global,
  /// the operator's own are [first_file, first_file + file_count).
  run_error range_failure(const read_list& list, range_check check, std::uint32_t first_file,
                          std::uint32_t file_count, fault_site site) const;

  /// Test seam for what CI's disks never do: reads of `path` that cover `byte_offset` fail there with
  /// errno `error`, or the file seems to end there when `error` is 0. `direct_only`: only while the file is
  /// open O_DIRECT (EINVAL there refuses the probe read at open). Call before reads (and before open, for
  /// a fault of the probe read).
  void inject_fault(const std::string& path, std::uint64_t byte_offset, int error, bool direct_only = false);
  /// Test seam for a hung disk: reads of `path` that cover `byte_offset` first sleep `delay`, then read.
  void inject_delay(const std::string& path, std::uint64_t byte_offset, std::chrono::milliseconds delay);

 private:
  struct injected_fault {
    std::string path;
    std::uint64_t byte_offset;
    int error;
    bool direct_only;
    std::chrono::milliseconds delay{0};  ///< nonzero: a delay, not an error
  };
  const injected_fault* fault_in(const opened_file& f, std::uint64_t offset, std::uint64_t bytes) const;
  bool probe_direct(opened_file& f) const;

  file_table_options options_;
  std::vector<opened_file> files_;
  std::vector<injected_fault> faults_;
  bool logged_fallback_ = false;
};

}  // namespace xf
