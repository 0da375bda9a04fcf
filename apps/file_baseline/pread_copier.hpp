// The CPU I/O baseline's way of getting a file's bytes into device memory: N host threads, each
// reading its own contiguous part of a range with pread (O_DIRECT where the file_table opened the file so)
// into pinned buffers it cycles through, and copying each filled buffer to the device with cudaMemcpyAsync
// on its own stream while it reads the next. xeflow-file-baseline reads a whole file with it;
// xeflow-file-kernels reads its matrices slab by slab and computes on one slab while the threads read the
// next. Plain C++ over the CUDA runtime API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "framework/core/cuda_buffer.hpp"
#include "framework/files/file_table.hpp"

namespace xf::file_baseline {

class pread_copier {
 public:
  /// Pinned buffers (`buffers` of `request` bytes each, request a multiple of 4 KiB), a stream and an event
  /// per buffer for each of `threads` threads, allocated here so that read() times only reads and copies.
  /// `files` (file `file` of it) must outlive the copier; `who` names the tool in read errors.
  pread_copier(const file_table& files, std::uint32_t file, unsigned threads, std::uint64_t request,
               unsigned buffers, std::string who);
  ~pread_copier();
  pread_copier(const pread_copier&) = delete;
  pread_copier& operator=(const pread_copier&) = delete;

  /// Reads bytes [begin, end) of the file (end ≤ its size at open) into device memory at `dst` (dst[0] is
  /// byte `begin`); begin a multiple of the request. Thread t reads part t of the range (whole requests) and
  /// copies as it goes; returns once every copy has completed, so a kernel launched afterwards on any stream
  /// sees the bytes. Throws the first failure: run_error (the path and byte offset), cuda_error. Not
  /// reentrant: one read at a time.
  void read(std::uint64_t begin, std::uint64_t end, std::byte* dst);

  unsigned threads() const { return static_cast<unsigned>(lanes_.size()); }
  std::uint64_t request() const { return request_; }

 private:
  /// One thread's stream, pinned buffers and the event of each buffer's last copy (its reuse waits on it).
  struct lane {
    cuda_stream stream;
    std::vector<pinned_buffer<std::byte>> buffers;
    std::vector<std::unique_ptr<cuda_event>> copied;
  };

  const file_table& files_;
  std::uint32_t file_;
  std::uint64_t request_;
  std::string who_;
  std::vector<std::unique_ptr<lane>> lanes_;
};

}  // namespace xf::file_baseline
