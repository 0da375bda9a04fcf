// file_source: opening the file and reading frames with pread.
#include "operators/sources/file_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "framework/errors.hpp"

namespace xf {

file_source::~file_source() {
  if (fd_ >= 0) ::close(fd_);  // nothing to report from a destructor; on_stop closes in a normal run
}

void file_source::fail(std::uint64_t offset, const std::string& reason) const {
  throw run_error({name_, topic_, offset}, "file '" + path_ + "': " + reason);
}

void file_source::on_start(const operator_setup& setup) {
  name_ = setup.name;
  const topic_info& out = source_output_topic(setup);
  topic_ = out.name;
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    throw run_error({name_, topic_, std::nullopt},
                    "cannot open file '" + path_ + "': " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    throw run_error({name_, topic_, std::nullopt}, "cannot stat file '" + path_ + "': " + std::strerror(err));
  }
  // pread on a pipe or a device has no fixed length to frame, and replaying it would read other bytes.
  if (!S_ISREG(st.st_mode)) {
    throw run_error({name_, topic_, std::nullopt}, "'" + path_ + "' is not a regular file");
  }
  geometry_ = {out.frame_bytes, static_cast<std::uint64_t>(st.st_size)};
}

bool file_source::produce(std::uint64_t offset, frame_out& out) {
  frame_span span;
  if (!geometry_.frame_at(offset, span)) return false;
  XF_EXPECTS(out.capacity >= span.bytes, "a source's output frame must hold the topic's frame size");
  XF_EXPECTS(fd_ >= 0, "file_source::produce before on_start or after on_stop");
  std::uint64_t done = 0;
  // pread may return fewer bytes than asked (signals, large requests): loop until the frame is whole.
  while (done < span.bytes) {
    const ssize_t got =
        ::pread(fd_, out.data + done, span.bytes - done, static_cast<off_t>(span.first_byte + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      fail(offset, "read failed at byte offset " + std::to_string(span.first_byte + done) + ": " +
                       std::strerror(err));
    }
    if (got == 0) {
      fail(offset, "file ends at byte offset " + std::to_string(span.first_byte + done) +
                       ", before its size at start (" + std::to_string(geometry_.total_bytes) +
                       " bytes): truncated while being read");
    }
    done += static_cast<std::uint64_t>(got);
  }
  out.bytes = span.bytes;
  return true;
}

void file_source::on_stop() {
  if (fd_ >= 0) {
    ::close(fd_);  // read-only descriptor: close cannot lose data, so its result carries nothing to report
    fd_ = -1;
  }
}

}  // namespace xf
