// file_sink: positioned writes into the partial file, the short-last-frame and holes rules, the final
// truncate, and the rename that makes the output visible.
#include "operators/sinks/file_sink.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>

#include "framework/core/errors.hpp"
#include "framework/core/fault_injection.hpp"

namespace xf {

namespace {
/// New files get rw-r--r-- (less the umask), as a shell redirection would create them.
constexpr mode_t new_file_mode = 0644;

/// Syncs the directory holding `path`, so that a rename into it survives a crash; errors are ignored where
/// the filesystem cannot sync a directory (EINVAL), reported otherwise.
int sync_directory_of(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  const int err = ::fsync(fd) == 0 || errno == EINVAL ? 0 : errno;
  ::close(fd);
  return err;
}
}  // namespace

file_sink::~file_sink() {
  if (fd_ >= 0) ::close(fd_);  // a run that failed or was interrupted: the partial file stays
}

void file_sink::fail(std::optional<std::uint64_t> offset, const std::string& reason) const {
  throw run_error({name_, topic_, offset}, "file '" + path_ + "': " + reason);
}

std::string file_sink::partial_note() const {
  return special_ ? "" : " (the output so far is in '" + partial_ + "')";
}

bool file_sink::run_cut_short() const {
  return (interrupted_ != nullptr && interrupted_->load(std::memory_order_relaxed)) ||
         (aborted_ != nullptr && aborted_->load(std::memory_order_relaxed));
}

void file_sink::on_start(const operator_setup& setup) {
  name_ = setup.name;
  if (setup.inputs.empty()) throw run_error({name_, "", std::nullopt}, "a file sink needs an input topic");
  topic_ = setup.inputs.front().name;
  frame_bytes_ = setup.inputs.front().frame_bytes;
  interrupted_ = setup.interrupted;
  aborted_ = setup.aborted;
  if (frame_bytes_ == 0) fail(std::nullopt, "the input topic has a frame size of 0");
  partial_ = path_ + ".partial";
  struct stat st {};
  special_ = ::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  if (special_) {
    // A device or a FIFO: it has no length to set and cannot be replaced by a rename.
    if (S_ISDIR(st.st_mode)) fail(std::nullopt, "is a directory");
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) fail(std::nullopt, std::string("cannot open for writing: ") + std::strerror(errno));
    sequential_ = ::lseek(fd_, 0, SEEK_CUR) < 0;
    // Several threads would hand it frames out of order, and waiting for an offset that never comes (a
    // void frame) would hang the run.
    if (sequential_ && setup.threads > 1)
      fail(std::nullopt,
           "cannot seek (a FIFO or a pipe), so frames must come in order: give this file sink "
           "threads: 1, not " +
               std::to_string(setup.threads));
    return;
  }
  open_partial(setup);
}

void file_sink::open_partial(const operator_setup& setup) {
  first_offset_ = setup.resume_offset;
  resumed_ = first_offset_ > 0;
  if (!resumed_) {
    fd_ = ::open(partial_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, new_file_mode);
    if (fd_ < 0)
      fail(std::nullopt, "cannot open " + partial_ + " for writing: " + std::string(std::strerror(errno)));
    return;
  }
  // Resumed: the frames below the resume offset are in the earlier run's file. A completed file whose
  // checkpoint was not rewritten yet (killed between the rename and the checkpoint's last commit) holds
  // them too: it goes back to being the partial output, and the replayed frames rewrite what they wrote.
  struct stat st {};
  if (::stat(partial_.c_str(), &st) != 0 && errno == ENOENT && ::stat(path_.c_str(), &st) == 0 &&
      ::rename(path_.c_str(), partial_.c_str()) != 0)
    fail(std::nullopt,
         "cannot move the completed output back to '" + partial_ + "' to resume: " + std::strerror(errno));
  fd_ = ::open(partial_.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd_ < 0)
    fail(std::nullopt, "cannot resume: '" + partial_ + "', the earlier run's partial output, " +
                           (errno == ENOENT ? std::string("is gone")
                                            : std::string("cannot be opened: ") + std::strerror(errno)) +
                           " (frames below offset " + std::to_string(first_offset_) +
                           " were committed to it)");
}

void file_sink::make_durable() {
  if (fd_ < 0 || special_) return;
  if (::fdatasync(fd_) != 0) {
    const int err = errno;
    fail(std::nullopt, "fdatasync of '" + partial_ + "' failed: " + std::strerror(err));
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
  if (!written_.insert(offset)) fail(offset, "offset " + std::to_string(offset) + " written twice");

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
  write_at(offset, offset * frame_bytes_, in.data, in.bytes);
  frames_.fetch_add(1, std::memory_order_relaxed);
  bytes_.fetch_add(in.bytes, std::memory_order_relaxed);
}

void file_sink::write_at(std::uint64_t offset, std::uint64_t position, const std::byte* data,
                         std::uint64_t bytes) {
  // A FIFO takes bytes in order, and its one thread receives increasing offsets: a gap is a frame that
  // never came (a void one), which the reader could not tell from the next.
  if (sequential_ && offset != next_offset_)
    fail(next_offset_, "offset " + std::to_string(next_offset_) + " was never written, and offset " +
                           std::to_string(offset) +
                           " cannot be written after a gap into a file that cannot seek");
  std::uint64_t done = 0;
  while (done < bytes) {  // pwrite may write less than asked (signals, quotas): continue where it stopped
    ssize_t put = 0;
    if (inject::armed(inject::site::sink_write)) {
      if (const auto fault =
              inject::fires(inject::site::sink_write, position + done, position + bytes, name_)) {
        // As the system would fail it: what precedes the byte is written, the byte itself is not.
        const std::uint64_t before = fault->at - (position + done);
        if (before > 0 && ::pwrite(fd_, data + done, before, static_cast<off_t>(position + done)) > 0)
          done += before;
        errno = fault->what == inject::kind::enospc ? ENOSPC : EIO;
        put = -1;
      }
    }
    if (put == 0)
      put = sequential_ ? ::write(fd_, data + done, bytes - done)
                        : ::pwrite(fd_, data + done, bytes - done, static_cast<off_t>(position + done));
    if (put < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      fail(offset, "write failed at byte offset " + std::to_string(position + done) + ": " +
                       std::strerror(err) + partial_note());
    }
    done += static_cast<std::uint64_t>(put);
  }
  if (sequential_) ++next_offset_;
}

void file_sink::on_stop() {
  if (fd_ < 0) return;
  check_short_frame_is_last();
  // A run cut short (interrupted, failed) stops wherever it was: holes are expected there, and the file
  // stays partial.
  if (run_cut_short() || special_) return;
  const std::uint64_t short_offset = short_offset_.load();
  const std::uint64_t end = delivered_end_.load();
  // A resumed run that received no frame (every frame was committed before it) finds the file complete.
  if (resumed_ && end == 0) return;
  const seen_offsets::missing_summary missing = written_.missing_in(first_offset_, end);
  if (missing.count > 0)
    fail(missing.first, "offset " + std::to_string(*missing.first) + " (bytes " +
                            std::to_string(*missing.first * frame_bytes_) + " to " +
                            std::to_string((*missing.first + 1) * frame_bytes_) + ") was never written: " +
                            std::to_string(missing.count) + " of the " + std::to_string(end - first_offset_) +
                            " offsets below the stream's end are missing (did two sources of different "
                            "lengths publish into one topic?)" +
                            partial_note());
  const std::uint64_t length =
      short_offset != no_short_frame
          ? short_offset * frame_bytes_ + short_bytes_.load(std::memory_order_relaxed)
          : end * frame_bytes_;
  if (::ftruncate(fd_, static_cast<off_t>(length)) != 0) {
    const int err = errno;
    fail(std::nullopt,
         "cannot truncate to " + std::to_string(length) + " bytes: " + std::strerror(err) + partial_note());
  }
}

void file_sink::on_commit() {
  if (fd_ < 0) return;
  const int fd = fd_;
  fd_ = -1;
  // fsync before the rename: a crash after it must not leave a complete-looking name over missing bytes.
  // close reports write-back errors some file systems defer (NFS): a lost write must fail the run.
  if (!special_ && ::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    fail(std::nullopt, std::string("fsync failed: ") + std::strerror(err) + partial_note());
  }
  if (::close(fd) != 0)
    fail(std::nullopt, std::string("close failed: ") + std::strerror(errno) + partial_note());
  if (special_) return;
  if (::rename(partial_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    fail(std::nullopt, "cannot rename " + partial_ + " onto it: " + std::strerror(err) + partial_note());
  }
  committed_ = true;
  if (const int err = sync_directory_of(path_); err != 0)
    fail(std::nullopt, std::string("cannot sync its directory after the rename: ") + std::strerror(err));
}

operator_counters file_sink::counters() const {
  return {{"frames", frames_.load(std::memory_order_relaxed)},
          {"bytes", bytes_.load(std::memory_order_relaxed)}};
}

}  // namespace xf
