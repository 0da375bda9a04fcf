// file_source: streams a file as consecutive frame-size chunks, read with pread so that any number of
// threads can produce any frame at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "framework/files/file_table.hpp"
#include "framework/model/operator_schema.hpp"
#include "operators/sources/stream_geometry.hpp"

namespace xf {

/// The stream is the file's first `size` bytes, `size` taken at on_start: frame o is bytes
/// [o·frame_bytes, …) of it, the last one possibly short; a 0-byte file is an empty stream. Bytes appended
/// after on_start are not streamed. A file that gets shorter than its size at on_start while it is read
/// (truncated) or a failing read is a run_error naming the operator, the path and the byte offset —
/// never a short frame. produce is thread-safe.
class file_source final : public cpu_source {
 public:
  struct params {
    std::string path;
  };

  static void describe(operator_schema<params>& s) {
    s.describe(
        "reads a file as consecutive frames (pread, any thread may read any frame); the last may be short");
    s.param(&params::path, "path", "file to read; its size at start is the stream's length", required);
  }

  explicit file_source(const params& p) : path_(p.path) {}

  /// Opens the file; run_error naming the operator and path (with the system's reason) when it cannot.
  void on_start(const operator_setup& setup) override;
  bool produce(std::uint64_t offset, frame_out& out) override;
  void on_stop() override;

  const stream_geometry& geometry() const noexcept { return geometry_; }

 private:
  std::string path_;
  std::string name_;
  std::string topic_;
  std::optional<file_table> file_;  ///< from on_start to on_stop; the file is its id 0
  stream_geometry geometry_;
};

}  // namespace xf
