// Files whose every byte the file cache tests can check: byte i of file f is pattern_byte(f, i), a pattern
// no two nearby pages (or files) share, so a page read from the wrong place or the wrong file shows.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/scratch_dir.hpp"

namespace xf::test {

inline std::byte pattern_byte(std::uint32_t file, std::uint64_t i) {
  return static_cast<std::byte>(((i + 977 * file) * 2654435761u) >> 13);
}

inline std::vector<std::byte> pattern(std::uint32_t file, std::uint64_t bytes) {
  std::vector<std::byte> data(bytes);
  for (std::uint64_t i = 0; i < bytes; ++i) data[i] = pattern_byte(file, i);
  return data;
}

/// Writes pattern(file, bytes) to `name` in `dir`; returns its path.
inline std::string write_pattern_file(const scratch_dir& dir, const std::string& name, std::uint32_t file,
                                      std::uint64_t bytes) {
  const std::string path = dir.file(name);
  const std::vector<std::byte> data = pattern(file, bytes);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  return path;
}

}  // namespace xf::test
