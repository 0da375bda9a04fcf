// dataset_writer over POSIX open/write.
#include "apps/dataset_support/dataset_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "framework/core/errors.hpp"

namespace xf::apps {
namespace {

std::string system_reason(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

}  // namespace

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
