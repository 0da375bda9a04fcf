// file_table: opening (O_DIRECT where the filesystem takes it, buffered where not), reads at the end of a
// file, truncation while reading, and the errors' words.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

#include "framework/files/file_table.hpp"
#include "tests/framework/files/pattern_file.hpp"

namespace xf {
namespace {

std::string write_pattern_file(const test::scratch_dir& dir, const std::string& name, std::uint64_t bytes) {
  return test::write_pattern_file(dir, name, 0, bytes);
}

struct aligned_buffer {
  explicit aligned_buffer(std::size_t bytes)
      : data(static_cast<std::byte*>(std::aligned_alloc(4096, bytes)), std::free), size(bytes) {
    std::memset(data.get(), 0xAA, bytes);
  }
  std::unique_ptr<std::byte, decltype(&std::free)> data;
  std::size_t size;
};

bool matches_pattern(const std::byte* got, std::uint64_t first, std::uint64_t bytes) {
  for (std::uint64_t i = 0; i < bytes; ++i) {
    if (got[i] != test::pattern_byte(0, first + i)) return false;
  }
  return true;
}

const fault_site site{"reader", "frames", 7};

}  // namespace

TEST_CASE("file_table: a missing file or a directory is a run error naming the operator and the path") {
  test::scratch_dir dir;
  file_table table;
  CHECK_THROWS_WITH_AS(table.open(dir.file("absent.bin"), site),
                       doctest::Contains("operator 'reader', topic 'frames', offset 7"), run_error);
  CHECK_THROWS_WITH_AS(table.open(dir.file("absent.bin"), site),
                       doctest::Contains("absent.bin': cannot open: No such file or directory"), run_error);
  CHECK_THROWS_WITH_AS(table.open(dir.file(""), site), doctest::Contains("not a regular file"), run_error);
  CHECK(table.count() == 0);
}

TEST_CASE("file_table: reads every byte, in pieces, direct where the filesystem allows it") {
  test::scratch_dir dir;
  const std::uint64_t size = 3 * 65536 + 10000;  // a last page that is partly past the end
  const std::string path = write_pattern_file(dir, "data.bin", size);
  for (const direct_io_mode mode : {direct_io_mode::automatic, direct_io_mode::off}) {
    CAPTURE(static_cast<int>(mode));
    file_table table({.direct = mode});
    const std::uint32_t id = table.open(path, site);
    const opened_file& f = table.file(id);
    CHECK(id == 0);
    CHECK(f.size == size);
    if (mode == direct_io_mode::off) CHECK_FALSE(f.direct);
    CHECK((f.direct ? f.alignment >= 512 && f.alignment <= 4096 : f.alignment == 1));
    MESSAGE("O_DIRECT on this filesystem: " << std::string(f.direct ? "yes" : "no (buffered)"));
    aligned_buffer buffer(65536);
    for (std::uint64_t offset = 0; offset < size; offset += 65536) {
      const std::uint64_t bytes = std::min<std::uint64_t>(65536, size - offset);
      const read_outcome out = table.read(id, offset, bytes, buffer.data.get(), buffer.size);
      REQUIRE(out.status == file_status::ok);
      CHECK(out.bytes == bytes);
      CHECK(matches_pattern(buffer.data.get(), offset, bytes));
    }
    // The last page: what follows the file's end up to the aligned length is zero under O_DIRECT, and
    // untouched when buffered (nothing past `bytes` is read then).
    const std::uint64_t last = size - size % 4096;
    std::memset(buffer.data.get(), 0xAA, buffer.size);
    const read_outcome tail = table.read(id, last, size - last, buffer.data.get(), buffer.size);
    REQUIRE(tail.status == file_status::ok);
    CHECK(tail.bytes == size - last);
    CHECK(matches_pattern(buffer.data.get(), last, size - last));
    const std::byte after = buffer.data.get()[size - last];
    CHECK(after == (f.direct ? std::byte{0} : std::byte{0xAA}));
  }
}

TEST_CASE(
    "file_table: a filesystem that refuses direct reads is read buffered, or is an error under direct: on") {
  test::scratch_dir dir;
  const std::string path = write_pattern_file(dir, "data.bin", 20000);
  file_table automatic;
  automatic.inject_fault(path, 0, EINVAL, /*direct_only=*/true);  // what overlayfs answers a direct read
  const std::uint32_t id = automatic.open(path, site);
  CHECK_FALSE(automatic.file(id).direct);
  aligned_buffer buffer(8192);
  const read_outcome out = automatic.read(id, 4096, 8192, buffer.data.get(), buffer.size);
  CHECK(out.status == file_status::ok);
  CHECK(matches_pattern(buffer.data.get(), 4096, 8192));

  file_table strict({.direct = direct_io_mode::on});
  strict.inject_fault(path, 0, EINVAL, true);
  CHECK_THROWS_WITH_AS(strict.open(path, site), doctest::Contains("runtime.file_cache.direct: on"),
                       run_error);
}

TEST_CASE("file_table: a failing read and a file truncated while read name the path and the byte offset") {
  test::scratch_dir dir;
  const std::uint64_t size = 40960;
  const std::string path = write_pattern_file(dir, "data.bin", size);
  file_table table;
  table.inject_fault(path, 12345, EIO);
  const std::uint32_t id = table.open(path, site);
  aligned_buffer buffer(16384);

  const read_outcome failed = table.read(id, 8192, 8192, buffer.data.get(), buffer.size);
  CHECK(failed.status == file_status::io_error);
  const run_error error = table.failure(id, failed, 8192, site);
  CHECK(std::string(error.what()).find("operator 'reader', topic 'frames', offset 7") != std::string::npos);
  CHECK(error.reason() == "file '" + path + "': read failed at byte offset 12345: Input/output error");
  // The pages before the fault read as usual.
  CHECK(table.read(id, 0, 8192, buffer.data.get(), buffer.size).status == file_status::ok);

  // Truncated for real: the table keeps the size at open, and a read past the new end says so.
  REQUIRE(::truncate(path.c_str(), 30000) == 0);
  const read_outcome past = table.read(id, 32768, 8192, buffer.data.get(), buffer.size);
  CHECK(past.status == file_status::truncated);
  CHECK(table.failure(id, past, 32768, site).reason() ==
        "file '" + path +
            "': file ends at byte offset 32768, before its size at start (40960 bytes): truncated "
            "while being read");
  const read_outcome across = table.read(id, 24576, 8192, buffer.data.get(), buffer.size);
  CHECK(across.status == file_status::truncated);
  CHECK(across.bytes == 30000 - 24576);
  CHECK(matches_pattern(buffer.data.get(), 24576, 30000 - 24576));
}

TEST_CASE("file_table: a read past the size at open or into too small a buffer is the caller's error") {
  test::scratch_dir dir;
  const std::string path = write_pattern_file(dir, "data.bin", 10000);
  file_table table;
  const std::uint32_t id = table.open(path, site);
  aligned_buffer buffer(8192);
  CHECK_THROWS_AS(table.read(id, 8192, 4096, buffer.data.get(), buffer.size), precondition_error);
  if (table.file(id).direct) {
    // 1808 bytes at 8192 read a whole aligned block (512 bytes or more): the buffer must hold it.
    CHECK_THROWS_AS(table.read(id, 8192, 1808, buffer.data.get(), 1809), precondition_error);
  }
  CHECK_THROWS_AS((void)table.file(1), precondition_error);
}

TEST_CASE("read_fully: the end of the file is a short count, not an error, only when asked past it") {
  test::scratch_dir dir;
  const std::string path = write_pattern_file(dir, "data.bin", 5000);
  const int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  std::vector<std::byte> buffer(8192);
  const read_outcome whole = read_fully(fd, 1000, 4000, buffer.data());
  CHECK(whole.status == file_status::ok);
  CHECK(whole.bytes == 4000);
  CHECK(matches_pattern(buffer.data(), 1000, 4000));
  const read_outcome past = read_fully(fd, 1000, 6000, buffer.data());
  CHECK(past.status == file_status::truncated);
  CHECK(past.bytes == 4000);
  CHECK(describe_read_failure(past, 1000, 7000) ==
        "file ends at byte offset 5000, before its size at start (7000 bytes): truncated while being read");
  ::close(fd);
}

}  // namespace xf
