// mapped_file over POSIX open/fstat/mmap.
#include "operators/sources/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "framework/errors.hpp"

namespace xf {
namespace {

std::string describe(const std::optional<std::uint64_t>& offset, const std::string& reason) {
  return offset ? "byte offset " + std::to_string(*offset) + ": " + reason : reason;
}

std::string system_reason(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
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
      throw dataset_error(path, std::nullopt, "no memory dataset is registered under '" + std::string(name) + "'");
    if (writable && !it->second.writable)
      throw dataset_error(path, std::nullopt, "the memory was handed over read-only, and this operator writes");
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
  if (data_ != nullptr && !borrowed_) ::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace xf
