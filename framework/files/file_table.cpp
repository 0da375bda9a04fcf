// file_table: opening with O_DIRECT where it works, and the read loop every file reader shares.
#include "framework/files/file_table.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include <spdlog/spdlog.h>

namespace xf {
namespace {

std::uint64_t round_up(std::uint64_t n, std::uint64_t to) {
  return (n + to - 1) / to * to;
}

/// The filesystem's alignment for direct reads of `fd` (statx's STATX_DIOALIGN, Linux 6.1), 0 when it
/// says direct reads are not supported, 4096 (the common block size) when it cannot say.
std::uint32_t direct_alignment(int fd) {
#ifdef STATX_DIOALIGN
  struct statx stx {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 && (stx.stx_mask & STATX_DIOALIGN) != 0) {
    return std::max(stx.stx_dio_offset_align, stx.stx_dio_mem_align);
  }
#else
  (void)fd;
#endif
  return 4096;
}

struct aligned_free {
  void operator()(std::byte* p) const { std::free(p); }
};

}  // namespace

read_outcome read_fully(int fd, std::uint64_t offset, std::uint64_t bytes, std::byte* dst,
                        std::uint32_t alignment) {
  const std::uint64_t length = round_up(bytes, alignment);
  read_outcome out;
  while (out.bytes < bytes) {
    const ssize_t got =
        ::pread(fd, dst + out.bytes, length - out.bytes, static_cast<off_t>(offset + out.bytes));
    if (got < 0) {
      if (errno == EINTR) continue;
      out.status = file_status::io_error;
      out.error = errno;
      return out;
    }
    if (got == 0) break;
    out.bytes += static_cast<std::uint64_t>(got);
    // A direct read returns short only at the end of the file: an unaligned position cannot be read on.
    if (out.bytes % alignment != 0) break;
  }
  if (out.bytes < bytes) {
    out.status = file_status::truncated;
  } else {
    out.bytes = bytes;  // a direct read of the rounded length may return more than asked
  }
  return out;
}

std::string describe_read_failure(const read_outcome& outcome, std::uint64_t offset,
                                  std::uint64_t size_at_open) {
  const std::uint64_t at = offset + outcome.bytes;
  switch (outcome.status) {
    case file_status::ok:
      return "read " + std::to_string(outcome.bytes) + " bytes at byte offset " + std::to_string(offset);
    case file_status::io_error:
      return "read failed at byte offset " + std::to_string(at) + ": " + std::strerror(outcome.error);
    case file_status::truncated:
      return "file ends at byte offset " + std::to_string(at) + ", before its size at start (" +
             std::to_string(size_at_open) + " bytes): truncated while being read";
    case file_status::timed_out:
      return "read at byte offset " + std::to_string(offset) + " did not complete in time";
    case file_status::stopped:
      return "read at byte offset " + std::to_string(offset) + " was not served: the run stopped";
  }
  return "unknown read status";
}

file_table::file_table(file_table_options options) : options_(options) {}

file_table::~file_table() {
  for (const opened_file& f : files_) ::close(f.fd);  // read-only descriptors: nothing to lose
}

const opened_file& file_table::file(std::uint32_t id) const {
  XF_EXPECTS(id < files_.size(), "a file id the table gave out");
  return files_[id];
}

std::uint32_t file_table::open(const std::string& path, const fault_site& site, access_advice advice) {
  auto fail = [&](const std::string& reason) { throw run_error(site, "file '" + path + "': " + reason); };
  opened_file f;
  f.path = path;
  const bool try_direct = options_.direct != direct_io_mode::off;
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (try_direct ? O_DIRECT : 0));
  if (f.fd < 0 && try_direct && errno == EINVAL) {
    if (options_.direct == direct_io_mode::on)
      fail("the filesystem refuses O_DIRECT (runtime.file_cache.direct: on)");
    f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } else if (f.fd >= 0) {
    f.direct = try_direct;
  }
  if (f.fd < 0) fail(std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) {
    const int err = errno;
    ::close(f.fd);
    fail(std::string("cannot stat: ") + std::strerror(err));
  }
  // A pipe or a device has no size to page, and reading it again would read other bytes.
  if (!S_ISREG(st.st_mode)) {
    ::close(f.fd);
    fail("not a regular file");
  }
  f.size = static_cast<std::uint64_t>(st.st_size);
  if (f.direct && !probe_direct(f)) {
    if (options_.direct == direct_io_mode::on) {
      ::close(f.fd);
      fail("direct reads fail on this filesystem (runtime.file_cache.direct: on)");
    }
    if (!logged_fallback_) {
      spdlog::info("file '{}': no O_DIRECT here; reading through the kernel's page cache", path);
      logged_fallback_ = true;
    }
    ::close(f.fd);
    f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (f.fd < 0) fail(std::string("cannot open: ") + std::strerror(errno));
    f.direct = false;
    f.alignment = 1;
  }
  if (!f.direct) {
    // Advice only: a filesystem that ignores it reads the same bytes.
    if (options_.advise_random || advice == access_advice::random) {
      (void)::posix_fadvise(f.fd, 0, 0, POSIX_FADV_RANDOM);
    } else if (advice == access_advice::sequential) {
      (void)::posix_fadvise(f.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    }
  }
  files_.push_back(f);
  return static_cast<std::uint32_t>(files_.size() - 1);
}

// Direct reads are refused at open by some filesystems and at the first read by others: read one aligned
// block to know before the run depends on it.
bool file_table::probe_direct(opened_file& f) const {
  const std::uint32_t alignment = direct_alignment(f.fd);
  if (alignment == 0 || alignment > options_.max_direct_alignment) return false;
  f.alignment = alignment;
  if (f.size == 0) return true;
  if (const injected_fault* fault = fault_in(f, 0, alignment);
      fault != nullptr && fault->delay.count() == 0 && fault->error == EINVAL) {
    return false;
  }
  std::unique_ptr<std::byte, aligned_free> block(
      static_cast<std::byte*>(std::aligned_alloc(alignment, alignment)));
  XF_EXPECTS(block != nullptr, "an aligned block for the O_DIRECT probe");
  const read_outcome probe =
      read_fully(f.fd, 0, std::min<std::uint64_t>(alignment, f.size), block.get(), alignment);
  return probe.status == file_status::ok || probe.error != EINVAL;
}

const file_table::injected_fault* file_table::fault_in(const opened_file& f, std::uint64_t offset,
                                                       std::uint64_t bytes) const {
  for (const injected_fault& fault : faults_) {
    if (fault.path == f.path && (!fault.direct_only || f.direct) && fault.byte_offset >= offset &&
        fault.byte_offset < offset + bytes) {
      return &fault;
    }
  }
  return nullptr;
}

void file_table::inject_fault(const std::string& path, std::uint64_t byte_offset, int error,
                              bool direct_only) {
  faults_.push_back({path, byte_offset, error, direct_only});
}

void file_table::inject_delay(const std::string& path, std::uint64_t byte_offset,
                              std::chrono::milliseconds delay) {
  XF_EXPECTS(delay.count() > 0, "a delay of some milliseconds");
  faults_.push_back({path, byte_offset, 0, false, delay});
}

read_outcome file_table::read(std::uint32_t id, std::uint64_t offset, std::uint64_t bytes, std::byte* dst,
                              std::uint64_t capacity) const {
  const opened_file& f = file(id);
  XF_EXPECTS(offset + bytes <= f.size, "a read inside the file's size at open");
  const std::uint64_t length = round_up(bytes, f.alignment);
  XF_EXPECTS(length <= capacity, "a buffer that holds the read rounded up to the file's alignment");
  XF_EXPECTS(offset % f.alignment == 0 && reinterpret_cast<std::uintptr_t>(dst) % f.alignment == 0,
             "a direct read at an aligned offset into an aligned buffer");
  const injected_fault* fault = fault_in(f, offset, bytes);
  if (fault != nullptr && fault->delay.count() > 0) {
    std::this_thread::sleep_for(fault->delay);
    fault = nullptr;
  }
  if (fault != nullptr) {
    // Nothing is read: the buffer's contents are unspecified after a failed read anyway.
    return {fault->error == 0 ? file_status::truncated : file_status::io_error, fault->byte_offset - offset,
            fault->error};
  }
  read_outcome out = read_fully(f.fd, offset, bytes, dst, f.alignment);
  if (out.status == file_status::ok) std::memset(dst + bytes, 0, length - bytes);
  return out;
}

run_error file_table::failure(std::uint32_t id, const read_outcome& outcome, std::uint64_t offset,
                              fault_site site) const {
  const opened_file& f = file(id);
  return run_error(std::move(site),
                   "file '" + f.path + "': " + describe_read_failure(outcome, offset, f.size));
}

run_error file_table::range_failure(const read_list& list, range_check check, std::uint32_t first_file,
                                    std::uint32_t file_count, fault_site site) const {
  const file_range& r = list[check.index];
  if (check.problem == range_problem::unknown_file) {
    const std::int64_t local = std::int64_t{r.file} - std::int64_t{first_file};
    return run_error(std::move(site), "the operator reads its file " + std::to_string(local) +
                                          ", but its files() lists " + std::to_string(file_count) +
                                          " file(s)");
  }
  const opened_file& f = file(r.file);
  return run_error(std::move(site), "file '" + f.path + "': the operator reads bytes [" +
                                        std::to_string(r.offset) + ", " + std::to_string(r.offset + r.bytes) +
                                        "), past its size (" + std::to_string(f.size) + " bytes)");
}

}  // namespace xf
