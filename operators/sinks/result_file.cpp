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

void write_result_file(const path_text& path, std::string_view bytes) {
  const std::string target = path.text;
  const std::string temporary = target + ".partial";
  int fd = -1;
  // The partial file stays: it shows how far the write got, and the error says where it is.
  auto fail = [&](const std::string& what, int err) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("result file '" + target + "': " + what + ": " + std::strerror(err) +
                             " (what was written is in '" + temporary + "')");
  };
  fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    throw std::runtime_error("result file '" + target + "': cannot create " + temporary + ": " +
                             std::strerror(errno));
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t put = 0;
    if (inject::armed(inject::site::sink_write))
      if (const auto fault = inject::fires(inject::site::sink_write, done, bytes.size())) {
        const std::size_t before = fault->at - done;
        if (before > 0 && ::write(fd, bytes.data() + done, before) > 0) done += before;
        errno = fault->what == inject::kind::enospc ? ENOSPC : EIO;
        put = -1;
      }
    if (put == 0) put = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (put < 0) {
      if (errno == EINTR) continue;
      fail("write failed at byte offset " + std::to_string(done), errno);
    }
    done += static_cast<std::size_t>(put);
  }
  // Synced before the rename: a crash after it must not leave the name over bytes never written.
  if (::fsync(fd) != 0) fail("fsync failed", errno);
  const int closed = ::close(fd);
  fd = -1;
  if (closed != 0) fail("close failed", errno);
  if (std::rename(temporary.c_str(), target.c_str()) != 0) fail("cannot rename " + temporary, errno);
  std::string dir = std::filesystem::path(target).parent_path().string();
  const int dir_fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    (void)::fsync(dir_fd);  // best effort: the file itself is synced
    ::close(dir_fd);
  }
}

}  // namespace xf
