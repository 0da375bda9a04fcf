// The files a reader opens at start: what its `files(params, list)` lists, in order, so that its
// `file_id{k}` is the k-th. Host code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "framework/files/path_text.hpp"

namespace xf {

/// How a reader will walk a file (posix_fadvise's analogue): `random` turns the cache's readahead off for
/// it, `sequential` starts it at once.
enum class access_advice : std::uint32_t { normal, sequential, random };

class file_list {
 public:
  struct entry {
    std::string path;
    access_advice advice;
  };
  void add(const path_text& path, access_advice advice = access_advice::normal) { add(path.str(), advice); }
  void add(std::string path, access_advice advice = access_advice::normal) {
    entries_.push_back({std::move(path), advice});
  }
  const std::vector<entry>& entries() const { return entries_; }

 private:
  std::vector<entry> entries_;
};

}  // namespace xf
