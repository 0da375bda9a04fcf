// file_sink: positioned writes, the short-last-frame rule, and the final truncate.
#include "operators/sinks/file_sink.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "framework/core/errors.hpp"

namespace xf {

namespace {
/// New files get rw-r--r-- (less the umask), as a shell redirection would create them.
constexpr mode_t new_file_mode = 0644;
}  // namespace

file_sink::~file_sink() {
  if (fd_ >= 0) ::close(fd_);  // a run that failed before on_stop: nothing left to report
}

void file_sink::fail(std::optional<std::uint64_t> offset, const std::string& reason) const {
  throw run_error({name_, topic_, offset}, "file '" + path_ + "': " + reason);
}

void file_sink::on_start(const operator_setup& setup) {
  name_ = setup.name;
  if (setup.inputs.empty()) throw run_error({name_, "", std::nullopt}, "a file sink needs an input topic");
  topic_ = setup.inputs.front().name;
  frame_bytes_ = setup.inputs.front().frame_bytes;
  if (frame_bytes_ == 0) fail(std::nullopt, "the input topic has a frame size of 0");
  interrupted_ = setup.interrupted;
  aborted_ = setup.aborted;
  open_output(setup);
}

void file_sink::open_output(const operator_setup& setup) {
  struct stat st {};
  in_place_ = ::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  written_path_ = in_place_ ? path_ : path_ + ".partial";
  resumed_ = setup.resume_offset > 0 && !in_place_;
  if (!resumed_) {
    fd_ = ::open(written_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, new_file_mode);
    if (fd_ < 0)
      fail(std::nullopt, "cannot open '" + written_path_ + "' for writing: " + std::strerror(errno));
    return;
  }
  // Resumed: the frames below the resume offset are in the earlier run's file. A completed file whose
  // checkpoint was not rewritten yet (killed between the rename and the checkpoint's last commit) holds
  // them too: it goes back to being the partial output, and the replayed frames rewrite what they wrote.
  struct stat partial {};
  if (::stat(written_path_.c_str(), &partial) != 0 && errno == ENOENT && ::stat(path_.c_str(), &st) == 0 &&
      ::rename(path_.c_str(), written_path_.c_str()) != 0)
    fail(std::nullopt, "cannot move the completed output back to '" + written_path_ +
                           "' to resume: " + std::strerror(errno));
  fd_ = ::open(written_path_.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd_ < 0)
    fail(std::nullopt, "cannot resume: '" + written_path_ + "', the earlier run's partial output, " +
                           (errno == ENOENT ? std::string("is gone")
                                            : std::string("cannot be opened: ") + std::strerror(errno)) +
                           " (frames below offset " + std::to_string(setup.resume_offset) +
                           " were committed to it)");
}

void file_sink::make_durable() {
  if (fd_ >= 0 && ::fdatasync(fd_) != 0) {
    const int err = errno;
    fail(std::nullopt, "fdatasync of '" + written_path_ + "' failed: " + std::strerror(err));
  }
}

void file_sink::check_short_frame_is_last() const {
  const std::uint64_t short_offset = short_offset_.load();
  const std::uint64_t end = delivered_end_.load();
  if (short_offset != no_short_frame && end > short_offset + 1) {
    fail(short_offset, "a short frame (" + std::to_string(short_bytes_.load()) +
                           " bytes) is not the last: offset " + std::to_string(end - 1) + " follows it");
  }
}

void file_sink::on_frame(std::uint64_t offset, const frame_in& in) {
  XF_EXPECTS(fd_ >= 0, "file_sink::on_frame before on_start or after on_stop");
  if (in.bytes > frame_bytes_) {
    fail(offset, "frame of " + std::to_string(in.bytes) + " bytes exceeds the frame size " +
                     std::to_string(frame_bytes_));
  }
  const auto max_off = static_cast<std::uint64_t>(std::numeric_limits<off_t>::max());
  if (offset > (max_off - frame_bytes_) / frame_bytes_)
    fail(offset, "byte position beyond the largest file offset");

  if (in.bytes < frame_bytes_) {
    short_bytes_.store(in.bytes, std::memory_order_relaxed);
    std::uint64_t seen = no_short_frame;
    if (!short_offset_.compare_exchange_strong(seen, offset) && seen != offset) {
      fail(std::min(seen, offset), "two short frames (offsets " + std::to_string(std::min(seen, offset)) +
                                       " and " + std::to_string(std::max(seen, offset)) +
                                       "): only the last may be short");
    }
  }
  std::uint64_t end = delivered_end_.load();
  while (end < offset + 1 && !delivered_end_.compare_exchange_weak(end, offset + 1)) {
  }
  check_short_frame_is_last();

  const std::uint64_t position = offset * frame_bytes_;
  std::uint64_t done = 0;
  while (done < in.bytes) {  // pwrite may write less than asked (signals, quotas): continue where it stopped
    const ssize_t put = ::pwrite(fd_, in.data + done, in.bytes - done, static_cast<off_t>(position + done));
    if (put < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      fail(offset,
           "write failed at byte offset " + std::to_string(position + done) + ": " + std::strerror(err));
    }
    done += static_cast<std::uint64_t>(put);
  }
  frames_.fetch_add(1, std::memory_order_relaxed);
  bytes_.fetch_add(in.bytes, std::memory_order_relaxed);
}

void file_sink::on_stop() {
  if (fd_ < 0) return;
  const int fd = fd_;
  fd_ = -1;
  struct closer {
    int fd;
    ~closer() {
      if (fd >= 0) ::close(fd);
    }
  } on_error{fd};
  check_short_frame_is_last();
  const std::uint64_t short_offset = short_offset_.load();
  const std::uint64_t length =
      short_offset != no_short_frame
          ? short_offset * frame_bytes_ + short_bytes_.load(std::memory_order_relaxed)
          : delivered_end_.load() * frame_bytes_;
  const auto set = [](const std::atomic<bool>* flag) {
    return flag != nullptr && flag->load(std::memory_order_relaxed);
  };
  const bool complete = !set(interrupted_) && !set(aborted_);
  // Only a complete stream knows its length. An incomplete one leaves the partial output as it is: a
  // resumed run may have received fewer frames than an earlier run wrote and committed. A resumed run that
  // received no frame (every frame was committed before it) finds the length already the stream's.
  const bool keep_length = !complete || (resumed_ && delivered_end_.load() == 0);
  if (!in_place_ && !keep_length && ::ftruncate(fd, static_cast<off_t>(length)) != 0) {
    const int err = errno;
    fail(std::nullopt, "cannot truncate to " + std::to_string(length) + " bytes: " + std::strerror(err));
  }
  if (complete && !in_place_ && ::fsync(fd) != 0) {
    const int err = errno;
    fail(std::nullopt, "fsync of '" + written_path_ + "' failed: " + std::strerror(err));
  }
  on_error.fd = -1;
  // close reports write-back errors some file systems defer (NFS): a lost write must fail the run.
  if (::close(fd) != 0) fail(std::nullopt, std::string("close failed: ") + std::strerror(errno));
  if (!complete || in_place_) return;  // the .partial stays: a resumed run goes on from it
  if (::rename(written_path_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    fail(std::nullopt, "cannot rename '" + written_path_ + "' onto it: " + std::strerror(err));
  }
  // The rename is durable once the directory is.
  const std::size_t slash = path_.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path_.substr(0, slash);
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

operator_counters file_sink::counters() const {
  return {{"frames", frames_.load(std::memory_order_relaxed)},
          {"bytes", bytes_.load(std::memory_order_relaxed)}};
}

}  // namespace xf
