// The direct backend of file_pages: a stage's ranges read synchronously, each into a buffer of
// its own, for a file reader placed `on: cpu` and for the verify sinks' replays of a GPU reader. Reads go
// through the run's file_table (O_DIRECT where it is open so: each range is widened to the file's
// alignment and the span points inside), so a replay reads the very bytes the cache did.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "framework/core/errors.hpp"
#include "framework/files/file_api.hpp"
#include "framework/files/file_table.hpp"

namespace xf {

class direct_reads {
 public:
  explicit direct_reads(const file_table& files);

  /// Reads every range of `list` (run-global file ids) and returns the view over them, valid until the
  /// next call. A range past its file's size at open, or a failed read, is a run_error at `site` naming
  /// the path and the byte offset.
  file_pages read(const read_list& list, const fault_site& site);

 private:
  struct freer {
    void operator()(std::byte* p) const;
  };
  struct buffer {
    std::unique_ptr<std::byte, freer> data;
    std::uint64_t capacity = 0;
  };

  const file_table& files_;
  std::vector<std::uint64_t> sizes_;
  buffer buffers_[read_list::capacity];
  file_span spans_[read_list::capacity]{};
};

}  // namespace xf
