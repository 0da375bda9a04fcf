// Fuzz target: a table file (docs/table-format.md) as xeflow-table and table_source open it: the header's
// checks (columnar_table_file), then every frame read, checked and printed as CSV (table_to_csv, which reads
// the values through the columnar view). The input is the file; it lives in a memfd, so a fuzzer's millions
// of runs touch no disk.
#include <sys/mman.h>
#include <unistd.h>

#include <ostream>
#include <streambuf>
#include <string>

#include "framework/core/errors.hpp"
#include "operators/sources/columnar_table.hpp"
#include "operators/sources/table_csv.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace xf::fuzz {
namespace {

/// A file descriptor closed at scope's end.
struct memory_file {
  int fd = ::memfd_create("xeflow-fuzz-table", MFD_CLOEXEC);
  ~memory_file() {
    if (fd >= 0) ::close(fd);
  }
  memory_file() = default;
  memory_file(const memory_file&) = delete;
  memory_file& operator=(const memory_file&) = delete;
};

/// An ostream that keeps nothing: the CSV's text only has to be made.
struct discard_buffer : std::streambuf {
  int_type overflow(int_type c) override { return traits_type::not_eof(c); }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

}  // namespace
}  // namespace xf::fuzz

XF_FUZZ_TARGET(table_file) {
  memory_file file;
  fuzz_expect(file.fd >= 0, "memfd_create failed");
  for (std::size_t done = 0; done < data.size();) {
    const ssize_t n = ::write(file.fd, data.data() + done, data.size() - done);
    fuzz_expect(n > 0, "writing the memfd failed");
    done += static_cast<std::size_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(file.fd);
  try {
    const columnar_table_file table(path);
    fuzz_expect(table.frames() * table.frame_bytes() + table_header_bytes == data.size(),
                "a table file opened whose length is not its header's");
    discard_buffer sink;
    std::ostream out(&sink);
    table_to_csv(table, out, true);
  } catch (const run_error&) {
  }
  return 0;
}
