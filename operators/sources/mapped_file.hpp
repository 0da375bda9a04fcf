// A dataset file mapped whole into memory, and the error that names a dataset file and the byte offset at
// fault: what the prefetch source reads records from (and writes fields back into), and what the
// BigKernel applications' CPU references run on (apps/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace xf {

/// A dataset file that cannot be used: it cannot be opened, mapped or written, or its content is malformed.
/// what() is "PATH: byte offset N: REASON", or "PATH: REASON" when no single offset is at fault. The apps'
/// tools exit with code 1 on it.
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

/// Memory a program hands over instead of a file: registered under a name, the dataset operators
/// (prefetch_source and prefetch_writeback, prefetch_varlen_source, text_source, the address stage) open it
/// as `path: memory:NAME` — no copy, no file. `writable` lets a write-back store into it. The memory must
/// stay valid, and unchanged but for write-backs, until every run using it has ended; unregister it after.
/// Thread-safe. Registering a name again replaces it.
void register_memory_dataset(const std::string& name, std::span<std::byte> bytes, bool writable = true);
void register_memory_dataset(const std::string& name, std::span<const std::byte> bytes);
void unregister_memory_dataset(const std::string& name);
/// The prefix that names a registered memory dataset in a path.
inline constexpr std::string_view memory_dataset_prefix = "memory:";

/// A whole file mapped into memory (MAP_SHARED, advised MADV_SEQUENTIAL: the references sweep it front to
/// back). Move-only owner; the bytes stay valid until it is destroyed or moved from. With read_write, stores
/// into writable_bytes() reach the file through the page cache (no msync: other processes see them at once,
/// the disk gets them when the kernel writes back). The size is the file's size when it was opened; a file
/// truncated by another process while mapped cannot be read past its new end (SIGBUS): the process then
/// ends with exit code 1 and a message naming the file and the byte offset (a SIGBUS handler installed
/// with the first mapping; up to 64 mappings at once are watched). A 0-byte file maps to an empty span.
/// Const members are thread-safe; stores from several threads must touch disjoint bytes.
class mapped_file {
 public:
  /// Opens and maps `path`; dataset_error with the system's reason when it cannot. A path "memory:NAME"
  /// opens the memory registered under NAME instead (register_memory_dataset): dataset_error when nothing
  /// is, or when read_write is asked of read-only memory.
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
  /// Writes the stores made through writable_bytes() to the file (msync); dataset_error when the system
  /// reports a failure. Nothing to do for a read-only mapping.
  void sync() const;
  const std::string& path() const noexcept { return path_; }

 private:
  void release() noexcept;

  std::string path_;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  map_access access_ = map_access::read_only;
  bool borrowed_ = false;  ///< a registered memory dataset: not ours to unmap or sync
};

}  // namespace xf
