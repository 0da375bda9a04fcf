// The dataset files of the BigKernel reference applications (K-means, word count, transaction affinity):
// the writer the generators use; the mapping and the error naming the file and byte offset at fault are the
// library's (operators/sources/mapped_file.hpp: the prefetch source maps datasets the same way). Shared by
// apps/kmeans, apps/wordcount and apps/affinity.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

#include "operators/sources/mapped_file.hpp"

namespace xf::apps {

// The library's, under the names the applications use.
using xf::dataset_error;
using xf::map_access;
using xf::mapped_file;

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
