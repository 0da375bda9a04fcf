// Where a GPU sink's finish writes its result: a path held in the operator's trivially copyable params
// (path_text: GPU operators' params are copied to the device as bytes, so no std::string), and the write.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "framework/files/path_text.hpp"

namespace xf {

/// A result file written as it is formatted: the text goes to `<path>.partial` a buffer at a time, and
/// `commit` syncs it and renames it over `path`, so a reader never sees a partial result and a result of
/// millions of rows is never held whole in memory. Errors are std::runtime_error naming the path, the
/// system's reason and where the partial file was left.
class result_file_writer {
 public:
  explicit result_file_writer(const path_text& path);
  result_file_writer(const result_file_writer&) = delete;
  result_file_writer& operator=(const result_file_writer&) = delete;
  ~result_file_writer();

  /// The buffer formatting appends to; `flush_if_full` writes it out once it holds `buffer_bytes`.
  std::string& buffer() { return buffer_; }
  void flush_if_full() {
    if (buffer_.size() >= buffer_bytes) flush();
  }
  /// Writes what is buffered, syncs the file and renames it over the path.
  void commit();

  static constexpr std::size_t buffer_bytes = std::size_t{1} << 20;

 private:
  void flush();
  [[noreturn]] void fail(const std::string& what, int err);

  std::string target_, temporary_, buffer_;
  std::uint64_t written_ = 0;
  int fd_ = -1;
};

/// Writes `bytes` to `path` whole through a result_file_writer.
void write_result_file(const path_text& path, std::string_view bytes);

}  // namespace xf
