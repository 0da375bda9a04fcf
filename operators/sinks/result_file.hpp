// Where a GPU sink's finish writes its result: a path held in the operator's trivially copyable params
// (GPU operators' params are copied to the device as bytes, so no std::string), and the write itself.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace xf {

/// A file path of at most 511 bytes, NUL-terminated; empty: no file.
struct result_path {
  char text[512] = {};
  bool empty() const noexcept { return text[0] == '\0'; }
};

/// operator_schema::parsed's parser for a result_path: "" or the problem.
const char* parse_result_path(const std::string& text, result_path& out);

/// Writes `bytes` to `path` (replaced whole: a temporary file renamed over it, so a reader never sees a
/// partial result); std::runtime_error naming the path and the system's reason when it cannot.
void write_result_file(const result_path& path, std::string_view bytes);

}  // namespace xf
