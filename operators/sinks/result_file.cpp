// Result files of GPU sinks.
#include "operators/sinks/result_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "framework/core/fault_injection.hpp"

namespace xf {

result_file_writer::result_file_writer(const path_text& path)
    : target_(path.text), temporary_(target_ + ".partial") {
  fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw std::runtime_error("result file '" + target_ + "': cannot create " + temporary_ + ": " +
                             std::strerror(errno));
  buffer_.reserve(buffer_bytes + buffer_bytes / 8);
}

result_file_writer::~result_file_writer() {
  // Not committed (an error, or the finish threw): the partial file stays, as the error said.
  if (fd_ >= 0) ::close(fd_);
}

void result_file_writer::fail(const std::string& what, int err) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  throw std::runtime_error("result file '" + target_ + "': " + what + ": " + std::strerror(err) +
                           " (what was written is in '" + temporary_ + "')");
}

void result_file_writer::flush() {
  std::size_t done = 0;
  const std::uint64_t total = written_ + buffer_.size();
  while (done < buffer_.size()) {
    ssize_t put = 0;
    if (inject::armed(inject::site::sink_write))
      if (const auto fault = inject::fires(inject::site::sink_write, written_ + done, total)) {
        const std::size_t before = fault->at - (written_ + done);
        if (before > 0 && ::write(fd_, buffer_.data() + done, before) > 0) done += before;
        errno = fault->what == inject::kind::enospc ? ENOSPC : EIO;
        put = -1;
      }
    if (put == 0) put = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (put < 0) {
      if (errno == EINTR) continue;
      fail("write failed at byte offset " + std::to_string(written_ + done), errno);
    }
    done += static_cast<std::size_t>(put);
  }
  written_ = total;
  buffer_.clear();
}

void result_file_writer::commit() {
  flush();
  // Synced before the rename: a crash after it must not leave the name over bytes never written.
  if (::fsync(fd_) != 0) fail("fsync failed", errno);
  const int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0) fail("close failed", errno);
  if (std::rename(temporary_.c_str(), target_.c_str()) != 0) fail("cannot rename " + temporary_, errno);
  std::string dir = std::filesystem::path(target_).parent_path().string();
  const int dir_fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    (void)::fsync(dir_fd);  // best effort: the file itself is synced
    ::close(dir_fd);
  }
}

void write_result_file(const path_text& path, std::string_view bytes) {
  result_file_writer out(path);
  out.buffer().assign(bytes);
  out.commit();
}

}  // namespace xf
