// mapped_file and dataset_writer over POSIX open/mmap/write.
#include "apps/dataset_support/dataset_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "framework/errors.hpp"

namespace xf::apps {
namespace {

std::string describe(const std::optional<std::uint64_t>& offset, const std::string& reason) {
  return offset ? "byte offset " + std::to_string(*offset) + ": " + reason : reason;
}

std::string system_reason(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

}  // namespace

dataset_error::dataset_error(std::string path, std::optional<std::uint64_t> offset, const std::string& reason)
    : std::runtime_error(path + ": " + describe(offset, reason)),
      path_(std::move(path)),
      offset_(offset),
      reason_(reason) {}

mapped_file mapped_file::open(const std::string& path, map_access access) {
  const bool writable = access == map_access::read_write;
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
      access_(other.access_) {}

mapped_file& mapped_file::operator=(mapped_file&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    access_ = other.access_;
  }
  return *this;
}

std::span<std::byte> mapped_file::writable_bytes() const {
  XF_EXPECTS(access_ == map_access::read_write, path_ + " is mapped read-only");
  return {data_, size_};
}

void mapped_file::release() noexcept {
  if (data_ != nullptr) ::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

dataset_writer::dataset_writer(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw dataset_error(path_, std::nullopt, system_reason("cannot create"));
}

dataset_writer::~dataset_writer() {
  if (fd_ >= 0) ::close(fd_);
}

void dataset_writer::write(std::span<const std::byte> data) {
  XF_EXPECTS(fd_ >= 0, "write after close of " + path_);
  while (!data.empty()) {
    const ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw dataset_error(path_, written_, n < 0 ? system_reason("cannot write") : "cannot write");
    written_ += static_cast<std::uint64_t>(n);
    data = data.subspan(static_cast<std::size_t>(n));
  }
}

void dataset_writer::close() {
  if (fd_ < 0) return;
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) throw dataset_error(path_, std::nullopt, system_reason("cannot close"));
}

}  // namespace xf::apps
