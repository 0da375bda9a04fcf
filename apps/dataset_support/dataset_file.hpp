// The dataset files of the BigKernel reference applications (K-means, word count, transaction affinity):
// a whole file memory-mapped for a reference run, the writer the generators use, and the error that names
// the file and the byte offset at fault. Shared by apps/kmeans, apps/wordcount and apps/affinity.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

namespace xf::apps {

/// A dataset file that cannot be used: it cannot be opened, mapped or written, or its content is malformed.
/// what() is "PATH: byte offset N: REASON", or "PATH: REASON" when no single offset is at fault. The tools
/// exit with code 1 on it.
class dataset_error : public std::runtime_error {
 public:
  dataset_error(std::string path, std::optional<std::uint64_t> offset, const std::string& reason);
  const std::string& path() const noexcept { return path_; }
  std::optional<std::uint64_t> offset() const noexcept { return offset_; }
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string path_;
  std::optional<std::uint64_t> offset_;
  std::string reason_;
};

enum class map_access { read_only, read_write };

/// A whole file mapped into memory (MAP_SHARED, advised MADV_SEQUENTIAL: the references sweep it front to
/// back). Move-only owner; the bytes stay valid until it is destroyed or moved from. With read_write, stores
/// into writable_bytes() reach the file through the page cache (no msync: other processes see them at once,
/// the disk gets them when the kernel writes back). The size is the file's size when it was opened; a file
/// truncated by another process while mapped is not supported (SIGBUS). A 0-byte file maps to an empty
/// span. Const members are thread-safe; stores from several threads must touch disjoint bytes.
class mapped_file {
 public:
  /// Opens and maps `path`; dataset_error with the system's reason when it cannot.
  static mapped_file open(const std::string& path, map_access access = map_access::read_only);

  mapped_file() = default;
  ~mapped_file();
  mapped_file(mapped_file&& other) noexcept;
  mapped_file& operator=(mapped_file&& other) noexcept;
  mapped_file(const mapped_file&) = delete;
  mapped_file& operator=(const mapped_file&) = delete;

  std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
  /// The mapped bytes for stores; precondition_error unless opened read_write.
  std::span<std::byte> writable_bytes() const;
  std::uint64_t size() const noexcept { return size_; }
  const std::string& path() const noexcept { return path_; }

 private:
  void release() noexcept;

  std::string path_;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  map_access access_ = map_access::read_only;
};

/// Writes a new file front to back (created, or truncated when it exists; mode 0644 before the umask).
/// Errors are dataset_error naming the path and the offset of the failed write. Not thread-safe.
class dataset_writer {
 public:
  explicit dataset_writer(std::string path);
  ~dataset_writer();  // closes without throwing; call close() to see errors
  dataset_writer(const dataset_writer&) = delete;
  dataset_writer& operator=(const dataset_writer&) = delete;

  void write(std::span<const std::byte> data);
  /// Closes the file; dataset_error when the system reports a failure then. Idempotent.
  void close();
  std::uint64_t bytes_written() const noexcept { return written_; }
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t written_ = 0;
};

}  // namespace xf::apps
