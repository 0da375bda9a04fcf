// A file path inside a GPU operator's params, which must be trivially copyable (they are copied into the
// kernel's parameter arena): a fixed array, NUL-terminated. The file readers name their files
// with it, the GPU sinks their result files.
#pragma once

#include <cstring>
#include <string>

namespace xf {

/// A file path of at most 511 bytes, NUL-terminated; empty: no file.
struct path_text {
  char text[512] = {};
  bool empty() const noexcept { return text[0] == '\0'; }
  std::string str() const { return text; }
};

/// operator_schema::parsed's parser for a path_text: "" or the problem.
inline const char* parse_path_text(const std::string& text, path_text& out) {
  if (text.size() >= sizeof out.text) return "a path of at most 511 bytes";
  if (text.find('\0') != std::string::npos) return "a path without NUL bytes";
  std::memcpy(out.text, text.data(), text.size());
  out.text[text.size()] = '\0';
  return "";
}

}  // namespace xf
