// mapped_file over POSIX open/fstat/mmap.
#include "operators/sources/mapped_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "framework/core/errors.hpp"

namespace xf {
namespace {

std::string describe(const std::optional<std::uint64_t>& offset, const std::string& reason) {
  return offset ? "byte offset " + std::to_string(*offset) + ": " + reason : reason;
}

std::string system_reason(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

// ---- a truncated file ends the process with a message, not a bare SIGBUS -------------------------------
// A mapped file that another process truncates makes every access past its new end a SIGBUS. Nothing can
// continue after that (the frame being gathered is gone), but the user should learn which file did it: the
// mappings are kept in a fixed table the handler reads (async-signal-safe: atomics and write(2) only).

struct mapping_entry {
  std::atomic<std::uintptr_t> begin{0};  // 0: a free entry
  std::atomic<std::size_t> size{0};
  char path[240] = {};
};
constexpr std::size_t max_watched_mappings = 64;
mapping_entry watched[max_watched_mappings];

void write_text(const char* text) {
  std::size_t n = 0;
  while (text[n] != '\0') ++n;
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, text, n);
    if (w <= 0) return;
    text += w;
    n -= static_cast<std::size_t>(w);
  }
}

void write_number(std::uint64_t v) {
  char digits[24];
  std::size_t at = sizeof digits;
  digits[--at] = '\0';
  do {
    digits[--at] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  write_text(digits + at);
}

void on_sigbus(int signal, siginfo_t* info, void*) {
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (const mapping_entry& e : watched) {
    const std::uintptr_t begin = e.begin.load(std::memory_order_acquire);
    if (begin == 0 || address < begin || address - begin >= e.size.load(std::memory_order_relaxed)) continue;
    write_text("xeflow: error: dataset '");
    write_text(e.path);
    write_text("': byte offset ");
    write_number(address - begin);
    write_text(
        ": the file shrank while it was mapped (truncated or replaced by another process); the run "
        "cannot continue\n");
    ::_exit(1);
  }
  // Not one of ours: the default action.
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

void watch_mapping(const std::byte* data, std::size_t size, const std::string& path) {
  static std::once_flag installed;
  std::call_once(installed, [] {
    struct sigaction action {};
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGBUS, &action, nullptr);
  });
  for (mapping_entry& e : watched) {
    std::uintptr_t expected = 0;
    // Claim a free entry with a placeholder, fill it, then publish the real address.
    if (!e.begin.compare_exchange_strong(expected, 1, std::memory_order_acquire)) continue;
    const std::size_t n = std::min(path.size(), sizeof e.path - 1);
    std::memcpy(e.path, path.data(), n);
    e.path[n] = '\0';
    e.size.store(size, std::memory_order_relaxed);
    e.begin.store(reinterpret_cast<std::uintptr_t>(data), std::memory_order_release);
    return;
  }
  // More than 64 mappings at once: this one goes unwatched (a bare SIGBUS if it is truncated).
}

void unwatch_mapping(const std::byte* data) {
  for (mapping_entry& e : watched) {
    std::uintptr_t expected = reinterpret_cast<std::uintptr_t>(data);
    if (e.begin.compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) return;
  }
}

struct memory_dataset {
  std::byte* data;
  std::size_t size;
  bool writable;
};

std::mutex& memory_datasets_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, memory_dataset, std::less<>>& memory_datasets() {
  static std::map<std::string, memory_dataset, std::less<>> datasets;
  return datasets;
}

}  // namespace

void register_memory_dataset(const std::string& name, std::span<std::byte> bytes, bool writable) {
  std::lock_guard lock(memory_datasets_mutex());
  memory_datasets()[name] = {bytes.data(), bytes.size(), writable};
}

void register_memory_dataset(const std::string& name, std::span<const std::byte> bytes) {
  register_memory_dataset(name, {const_cast<std::byte*>(bytes.data()), bytes.size()}, false);
}

void unregister_memory_dataset(const std::string& name) {
  std::lock_guard lock(memory_datasets_mutex());
  memory_datasets().erase(name);
}

dataset_error::dataset_error(std::string path, std::optional<std::uint64_t> offset, const std::string& reason)
    : std::runtime_error(path + ": " + describe(offset, reason)),
      path_(std::move(path)),
      offset_(offset),
      reason_(reason) {}

mapped_file mapped_file::open(const std::string& path, map_access access) {
  const bool writable = access == map_access::read_write;
  if (path.starts_with(memory_dataset_prefix)) {
    const std::string_view name = std::string_view(path).substr(memory_dataset_prefix.size());
    std::lock_guard lock(memory_datasets_mutex());
    const auto it = memory_datasets().find(name);
    if (it == memory_datasets().end())
      throw dataset_error(path, std::nullopt,
                          "no memory dataset is registered under '" + std::string(name) + "'");
    if (writable && !it->second.writable)
      throw dataset_error(path, std::nullopt,
                          "the memory was handed over read-only, and this operator writes");
    mapped_file f;
    f.path_ = path;
    f.access_ = access;
    f.data_ = it->second.data;
    f.size_ = it->second.size;
    f.borrowed_ = true;
    return f;
  }
  const int fd = ::open(path.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) throw dataset_error(path, std::nullopt, system_reason("cannot open"));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const std::string reason = system_reason("cannot stat");
    ::close(fd);
    throw dataset_error(path, std::nullopt, reason);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw dataset_error(path, std::nullopt, "not a regular file");
  }
  mapped_file f;
  f.path_ = path;
  f.access_ = access;
  f.size_ = static_cast<std::size_t>(st.st_size);
  if (f.size_ > 0) {
    void* p = ::mmap(nullptr, f.size_, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      const std::string reason = system_reason("cannot map");
      ::close(fd);
      throw dataset_error(path, std::nullopt, reason);
    }
    f.data_ = static_cast<std::byte*>(p);
    ::madvise(p, f.size_, MADV_SEQUENTIAL);  // advice only: a failure changes nothing but read-ahead
    watch_mapping(f.data_, f.size_, path);
  }
  ::close(fd);  // the mapping keeps the file
  return f;
}

mapped_file::~mapped_file() {
  release();
}

mapped_file::mapped_file(mapped_file&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      access_(other.access_),
      borrowed_(other.borrowed_) {}

mapped_file& mapped_file::operator=(mapped_file&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    access_ = other.access_;
    borrowed_ = other.borrowed_;
  }
  return *this;
}

std::span<std::byte> mapped_file::writable_bytes() const {
  XF_EXPECTS(access_ == map_access::read_write, path_ + " is mapped read-only");
  return {data_, size_};
}

void mapped_file::sync() const {
  if (access_ != map_access::read_write || data_ == nullptr || borrowed_) return;
  if (::msync(data_, size_, MS_SYNC) != 0)
    throw dataset_error(path_, std::nullopt, system_reason("cannot sync"));
}

void mapped_file::release() noexcept {
  if (data_ != nullptr && !borrowed_) {
    unwatch_mapping(data_);
    ::munmap(data_, size_);
  }
  data_ = nullptr;
  size_ = 0;
}

}  // namespace xf
