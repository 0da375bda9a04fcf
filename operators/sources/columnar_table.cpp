// Table files: the header's encoding and checks, the writer's frame pool, and the reader's pread of frames.
#include "operators/sources/columnar_table.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "framework/core/errors.hpp"
#include "framework/model/spec_validation.hpp"

namespace xf {
namespace {

/// The largest file offset: frames past it could not be addressed by pread.
constexpr std::uint64_t max_table_file_bytes = static_cast<std::uint64_t>(std::numeric_limits<off_t>::max());

void put_le32(std::byte* at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}
void put_le64(std::byte* at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) at[i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}
std::uint32_t get_le32(const std::byte* at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<std::uint32_t>(at[i]);
  return v;
}
std::uint64_t get_le64(const std::byte* at) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<std::uint64_t>(at[i]);
  return v;
}

std::string errno_text(int error) {
  return std::strerror(error);
}

run_error table_file_error(const std::string& path, const std::string& what) {
  return run_error({}, "table file '" + path + "': " + what);
}

/// A frame buffer aligned to a page (columnar_frame_header is 64-byte aligned), freed on scope exit.
struct table_frame_buffer {
  struct free_bytes {
    void operator()(std::byte* p) const noexcept { std::free(p); }
  };
  explicit table_frame_buffer(std::uint64_t bytes)
      : data(static_cast<std::byte*>(std::aligned_alloc(columnar_page_bytes, bytes))) {
    if (!data) throw std::bad_alloc();
  }
  std::unique_ptr<std::byte, free_bytes> data;
};

/// An owned file descriptor, closed on scope exit.
struct table_fd {
  int fd = -1;
  ~table_fd() {
    if (fd >= 0) ::close(fd);
  }
};

void pwrite_all(int fd, const std::byte* data, std::uint64_t bytes, std::uint64_t at, const std::string& path,
                const std::string& what) {
  while (bytes > 0) {
    const ssize_t n = ::pwrite(fd, data, bytes, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw table_file_error(path, "writing " + what + " at byte " + std::to_string(at) + ": " +
                                       (n < 0 ? errno_text(errno) : std::string("no bytes written")));
    data += n;
    bytes -= static_cast<std::uint64_t>(n);
    at += static_cast<std::uint64_t>(n);
  }
}

/// Reads `bytes` at `at`; returns how many it read before the file ended. Throws on a failing read.
std::uint64_t pread_some(int fd, std::byte* data, std::uint64_t bytes, std::uint64_t at,
                         const std::string& path, const std::string& what) {
  std::uint64_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pread(fd, data + done, bytes - done, static_cast<off_t>(at + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw table_file_error(
          path, "reading " + what + " at byte " + std::to_string(at + done) + ": " + errno_text(errno));
    if (n == 0) break;
    done += static_cast<std::uint64_t>(n);
  }
  return done;
}

std::array<std::byte, table_header_bytes> encode_table_header(const table_schema& schema, std::uint64_t rows,
                                                              std::uint64_t frames,
                                                              std::uint64_t frame_bytes) {
  std::array<std::byte, table_header_bytes> h{};
  std::memcpy(h.data(), table_magic, sizeof table_magic);
  put_le32(h.data() + 8, table_version);
  put_le32(h.data() + 12, schema.rows_per_frame);
  put_le32(h.data() + 16, static_cast<std::uint32_t>(schema.columns.size()));
  put_le64(h.data() + 24, rows);
  put_le64(h.data() + 32, frames);
  put_le64(h.data() + 40, frame_bytes);
  for (std::size_t c = 0; c < schema.columns.size(); ++c) {
    std::byte* d = h.data() + table_descriptors_at + c * table_descriptor_bytes;
    const table_column& col = schema.columns[c];
    std::memcpy(d, col.name.data(), col.name.size());  // geometry_of checked it fits with a zero after it
    d[48] = static_cast<std::byte>(col.layout.element);
    put_le32(d + 52, col.layout.chars);
    put_le32(d + 56, col.layout.bloom_bits);
    put_le32(d + 60, col.layout.bloom_hashes);
  }
  return h;
}

}  // namespace

std::string column_type_name(const column_layout& layout) {
  return layout.chars != 0 ? "char(" + std::to_string(layout.chars) + ")"
                           : std::string(name_of(layout.element));
}

std::string column_text(const table_column& column) {
  std::string text = "'" + column.name + "' " + column_type_name(column.layout);
  if (column.layout.bloom_bits != 0 || column.layout.bloom_hashes != 0)
    text += ", bloom " + std::to_string(column.layout.bloom_bits) + " bits " +
            std::to_string(column.layout.bloom_hashes) + " hashes";
  return text;
}

columnar_geometry geometry_of(const table_schema& schema) {
  const source_pos where{"table schema", 0, 0};
  std::set<std::string, std::less<>> names;
  for (std::size_t c = 0; c < schema.columns.size(); ++c) {
    const table_column& col = schema.columns[c];
    const std::string which = "column " + std::to_string(c) + " '" + col.name + "': ";
    if (col.name.size() >= table_name_bytes)
      throw config_error(where, which + "the name has " + std::to_string(col.name.size()) +
                                    " bytes; a table column's name has at most " +
                                    std::to_string(table_name_bytes - 1));
    if (!is_valid_name(col.name))
      throw config_error(where,
                         which +
                             "not a valid column name (use letters, digits, '_' and '-', starting with "
                             "a letter or '_')");
    if (!names.insert(col.name).second) throw config_error(where, which + "a duplicate column name");
    if (col.layout.chars != 0 && col.layout.element != element_type::u8)
      throw config_error(
          where, which + "a char(N) column's element is u8, not " + std::string(name_of(col.layout.element)));
  }
  std::vector<column_layout> layouts;
  for (const table_column& col : schema.columns) layouts.push_back(col.layout);
  columnar_geometry g{};
  if (std::string why = make_columnar_geometry(layouts, schema.rows_per_frame, g); !why.empty())
    throw config_error(where, why);
  return g;
}

void write_columnar_table(const std::string& path, const table_schema& schema, std::uint64_t rows,
                          const std::function<void(std::uint64_t first_row, std::uint32_t rows,
                                                   const columnar_writer& frame)>& fill,
                          unsigned threads) {
  const columnar_geometry g = geometry_of(schema);
  const std::uint64_t frame_bytes = g.frame_bytes();
  const std::uint64_t frames = rows / g.rows_per_frame + (rows % g.rows_per_frame != 0 ? 1 : 0);
  if (frames > (max_table_file_bytes - table_header_bytes) / frame_bytes)
    throw table_file_error(path, std::to_string(rows) + " rows take " + std::to_string(frames) +
                                     " frames of " + std::to_string(frame_bytes) +
                                     " bytes: more than a file can hold");

  const std::string partial = path + ".partial";
  table_fd file{::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
  if (file.fd < 0) throw table_file_error(partial, "cannot create it: " + errno_text(errno));
  try {
    const auto header = encode_table_header(schema, rows, frames, frame_bytes);
    pwrite_all(file.fd, header.data(), header.size(), 0, partial, "the header");

    // Each worker fills whole frames in a buffer of its own and writes each at its place in the file, so
    // the file's frames are in table order whichever fill finishes first.
    const unsigned workers =
        static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, frames)));
    std::atomic<std::uint64_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr failure;
    std::mutex failure_mutex;
    auto work = [&] {
      try {
        table_frame_buffer buffer(frame_bytes);
        const columnar_writer writer(g, buffer.data.get());
        for (std::uint64_t k = next.fetch_add(1); k < frames && !failed.load(); k = next.fetch_add(1)) {
          const std::uint64_t first_row = k * g.rows_per_frame;
          const auto in_frame =
              static_cast<std::uint32_t>(std::min<std::uint64_t>(g.rows_per_frame, rows - first_row));
          std::memset(buffer.data.get(), 0, frame_bytes);
          fill(first_row, in_frame, writer);
          writer.finish(in_frame);
          pwrite_all(file.fd, buffer.data.get(), frame_bytes, table_header_bytes + k * frame_bytes, partial,
                     "frame " + std::to_string(k));
        }
      } catch (...) {
        std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        failed.store(true);
      }
    };
    if (workers == 1) {
      work();
    } else {
      std::vector<std::thread> pool;
      for (unsigned t = 0; t < workers; ++t) pool.emplace_back(work);
      for (std::thread& t : pool) t.join();
    }
    if (failure) std::rethrow_exception(failure);
    const int fd = file.fd;
    file.fd = -1;
    if (::close(fd) != 0) throw table_file_error(partial, "closing it: " + errno_text(errno));
    if (::rename(partial.c_str(), path.c_str()) != 0)
      throw table_file_error(path, "renaming '" + partial + "' to it: " + errno_text(errno));
  } catch (...) {
    ::unlink(partial.c_str());
    throw;
  }
}

columnar_table_file::columnar_table_file(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw table_file_error(path, "cannot open it: " + errno_text(errno));
  try {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) throw table_file_error(path, "cannot stat it: " + errno_text(errno));
    if (!S_ISREG(st.st_mode)) throw table_file_error(path, "not a regular file");
    const auto file_bytes = static_cast<std::uint64_t>(st.st_size);
    if (file_bytes < table_header_bytes)
      throw table_file_error(path, "it has " + std::to_string(file_bytes) + " bytes, fewer than the " +
                                       std::to_string(table_header_bytes) + " of a table header");
    std::array<std::byte, table_header_bytes> h{};
    if (pread_some(fd_, h.data(), h.size(), 0, path, "the header") != h.size())
      throw table_file_error(path, "the header ends early (the file shrank while opened)");
    if (std::memcmp(h.data(), table_magic, sizeof table_magic) != 0)
      throw table_file_error(path, "not a table file (its first 8 bytes are not \"XFTABLE1\")");
    if (const std::uint32_t version = get_le32(h.data() + 8); version != table_version)
      throw table_file_error(path, "table format version " + std::to_string(version) +
                                       "; this build reads version " + std::to_string(table_version));
    schema_.rows_per_frame = get_le32(h.data() + 12);
    const std::uint32_t column_count = get_le32(h.data() + 16);
    rows_ = get_le64(h.data() + 24);
    frames_ = get_le64(h.data() + 32);
    const std::uint64_t frame_bytes_written = get_le64(h.data() + 40);
    if (column_count == 0 || column_count > columnar_max_columns)
      throw table_file_error(path, "the header says " + std::to_string(column_count) +
                                       " columns; a table has 1 to " + std::to_string(columnar_max_columns));
    for (std::uint32_t c = 0; c < column_count; ++c) {
      const std::byte* d = h.data() + table_descriptors_at + std::size_t{c} * table_descriptor_bytes;
      const std::string which = "column " + std::to_string(c) + "'s descriptor: ";
      const auto* name = reinterpret_cast<const char*>(d);
      const std::size_t length = ::strnlen(name, table_name_bytes);
      if (length == table_name_bytes) throw table_file_error(path, which + "the name is not zero-terminated");
      const auto element = static_cast<std::uint8_t>(d[48]);
      if (element > static_cast<std::uint8_t>(element_type::f64))
        throw table_file_error(path, which + "element " + std::to_string(element) + " is no element type");
      table_column col;
      col.name.assign(name, length);
      col.layout.element = static_cast<element_type>(element);
      col.layout.chars = get_le32(d + 52);
      col.layout.bloom_bits = get_le32(d + 56);
      col.layout.bloom_hashes = get_le32(d + 60);
      schema_.columns.push_back(std::move(col));
    }
    try {
      geometry_ = geometry_of(schema_);
    } catch (const config_error& e) {
      throw table_file_error(path, "its schema makes no columnar frame: " + e.first().message);
    }
    if (frame_bytes_written != geometry_.frame_bytes())
      throw table_file_error(path, "the header says frames of " + std::to_string(frame_bytes_written) +
                                       " bytes; its columns make frames of " +
                                       std::to_string(geometry_.frame_bytes()));
    const std::uint64_t expected_frames =
        rows_ / schema_.rows_per_frame + (rows_ % schema_.rows_per_frame != 0 ? 1 : 0);
    if (frames_ != expected_frames)
      throw table_file_error(path, "the header says " + std::to_string(frames_) + " frames; " +
                                       std::to_string(rows_) + " rows of " +
                                       std::to_string(schema_.rows_per_frame) + " a frame make " +
                                       std::to_string(expected_frames));
    if (frames_ > (max_table_file_bytes - table_header_bytes) / geometry_.frame_bytes())
      throw table_file_error(
          path, "the header says " + std::to_string(frames_) + " frames: more than a file can hold");
    const std::uint64_t expected_bytes = table_header_bytes + frames_ * geometry_.frame_bytes();
    if (file_bytes != expected_bytes)
      throw table_file_error(path, "it has " + std::to_string(file_bytes) + " bytes; its header says " +
                                       std::to_string(frames_) + " frames of " +
                                       std::to_string(geometry_.frame_bytes()) + " bytes after the header, " +
                                       std::to_string(expected_bytes) +
                                       (file_bytes < expected_bytes ? " (truncated?)" : ""));
  } catch (...) {
    ::close(fd_);
    fd_ = -1;
    throw;
  }
}

columnar_table_file::~columnar_table_file() {
  if (fd_ >= 0) ::close(fd_);
}

columnar_table_file::columnar_table_file(columnar_table_file&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      schema_(std::move(other.schema_)),
      geometry_(other.geometry_),
      rows_(other.rows_),
      frames_(other.frames_) {}

columnar_table_file& columnar_table_file::operator=(columnar_table_file&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    schema_ = std::move(other.schema_);
    geometry_ = other.geometry_;
    rows_ = other.rows_;
    frames_ = other.frames_;
  }
  return *this;
}

std::uint32_t columnar_table_file::rows_in_frame(std::uint64_t k) const {
  const std::uint64_t first = k * schema_.rows_per_frame;
  return k < frames_
             ? static_cast<std::uint32_t>(std::min<std::uint64_t>(schema_.rows_per_frame, rows_ - first))
             : 0;
}

void columnar_table_file::read_frame(std::uint64_t k, std::byte* frame) const {
  read_span(k, frame, {0, frame_bytes()});
  check_frame(k, frame);
}

std::uint64_t columnar_table_file::read_frame_parts(std::uint64_t k, std::byte* frame,
                                                    const frame_selector& select,
                                                    std::vector<frame_range>& parts) const {
  const std::uint64_t index_bytes = std::uint64_t{geometry_.index_pages} * columnar_page_bytes;
  read_span(k, frame, {0, index_bytes});
  check_frame(k, frame);
  parts.clear();
  select(frame, parts);
  join_ranges(parts, 0, part_read_gap_bytes);
  std::uint64_t bytes = index_bytes;
  for (frame_range part : parts) {
    // The index pages are in place: read what follows them.
    if (part.offset < index_bytes) {
      const std::uint64_t end = part.offset + part.bytes;
      if (end <= index_bytes) continue;
      part = {index_bytes, end - index_bytes};
    }
    if (part.offset >= frame_bytes()) continue;
    part.bytes = std::min(part.bytes, frame_bytes() - part.offset);
    read_span(k, frame, part);
    bytes += part.bytes;
  }
  return bytes;
}

void columnar_table_file::read_span(std::uint64_t k, std::byte* frame, frame_range span) const {
  const std::string which = "frame " + std::to_string(k);
  if (fd_ < 0) throw table_file_error(path_, "reading " + which + " of a table file that was moved from");
  if (k >= frames_)
    throw table_file_error(path_,
                           "reading " + which + " of a table of " + std::to_string(frames_) + " frames");
  const std::uint64_t at = table_header_bytes + k * frame_bytes() + span.offset;
  const std::uint64_t got = pread_some(fd_, frame + span.offset, span.bytes, at, path_, which);
  if (got != span.bytes)
    throw table_file_error(path_, which + " ends at byte " + std::to_string(at + got) + " of the file, " +
                                      std::to_string(span.bytes - got) +
                                      " bytes early (the file shrank after it was opened)");
}

void columnar_table_file::check_frame(std::uint64_t k, const std::byte* frame) const {
  const std::string which = "frame " + std::to_string(k);
  const columnar_frame_header& h = columnar_header(frame);
  if (h.magic != columnar_magic)
    throw table_file_error(path_, which + " is not a columnar frame (bad magic)");
  if (h.column_count != geometry_.column_count)
    throw table_file_error(path_, which + " has " + std::to_string(h.column_count) +
                                      " columns; the table has " + std::to_string(geometry_.column_count));
  if (h.rows != rows_in_frame(k))
    throw table_file_error(path_, which + " holds " + std::to_string(h.rows) + " rows; the table's frame " +
                                      std::to_string(k) + " holds " + std::to_string(rows_in_frame(k)));
  if ((h.flags & columnar_frame_header::index_valid) == 0)
    throw table_file_error(path_, which + "'s index pages are not built (flag index_valid is clear)");
}

}  // namespace xf
