// The host I/O threads (framework/files/io_service.hpp) behind the request ring: readers on several threads
// ring requests of every size, large ones split in chunks among the threads, and every byte arrives;
// a failing read, a malformed request and a hung read each end in an answer and one run error; stop()
// answers what it leaves behind.
#include "framework/files/io_service.hpp"

#include <doctest/doctest.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <numeric>
#include <thread>
#include <vector>

#include "tests/framework/files/pattern_file.hpp"

namespace xf {
namespace {

fault_site io_site_of(std::uint32_t op, std::uint64_t frame_offset);

/// A pattern file of `bytes` in a scratch directory and the table it is opened in (as file 0) once the
/// test has injected what it needs.
struct pattern_file_table {
  test::scratch_dir dir;
  std::string path;
  file_table files;
  explicit pattern_file_table(std::uint64_t bytes)
      : path(test::write_pattern_file(dir, "data.bin", 0, bytes)) {}
  void open() { REQUIRE(files.open(path, io_site_of(1, 0)) == 0); }
};

/// The ring, the slots and their staging, in host memory (the host executor's layout).
struct request_rig {
  std::vector<request_ring_cell> cells;
  std::uint64_t head = 0, tail = 0;
  std::vector<request_slot> slots;
  std::unique_ptr<std::byte, decltype(&std::free)> staging;
  std::uint64_t staging_bytes;

  request_rig(std::uint32_t slot_count, std::uint64_t staging_per_slot)
      : cells(64),
        slots(slot_count),
        staging(static_cast<std::byte*>(std::aligned_alloc(4096, slot_count * staging_per_slot)), std::free),
        staging_bytes(staging_per_slot) {
    reset_request_ring(ring());
  }
  request_ring_view ring() { return {cells.data(), cells.size(), &head, &tail}; }
  request_slots_view view() { return {slots, staging.get(), staging_bytes}; }
  const std::byte* staged(std::uint32_t slot) const { return staging.get() + slot * staging_bytes; }

  /// What a reader does: write the request, ring (retrying while the ring is full), return its seq.
  std::uint64_t ring_request(std::uint32_t slot, std::uint64_t offset, std::uint64_t bytes,
                             std::uint64_t frame_offset = 0, std::uint32_t file = 0) {
    const std::uint64_t seq = write_request(slots[slot], file, offset, bytes, /*op=*/1, frame_offset);
    while (!try_push_request(ring(), slot)) std::this_thread::yield();
    return seq;
  }
  /// Waits (bounded) for the answer to `seq` on `slot`.
  request_outcome wait(std::uint32_t slot, std::uint64_t seq) {
    request_outcome out{};
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!request_done(slots[slot], seq, &out)) {
      if (std::chrono::steady_clock::now() > give_up) FAIL("no answer to slot " << slot << " seq " << seq);
      std::this_thread::yield();
    }
    return out;
  }
};

fault_site io_site_of(std::uint32_t op, std::uint64_t frame_offset) {
  return {op == 1 ? "reader" : "?", "frames", frame_offset};
}

}  // namespace

TEST_CASE("io_service: readers on four threads get every byte of requests from 4 KiB to 1 MiB") {
  const std::uint64_t size = 8 << 20;
  pattern_file_table t(size);
  t.open();
  constexpr std::uint32_t readers = 4, slots_per_reader = 2;
  request_rig rig(readers * slots_per_reader, 1 << 20);
  io_service service(t.files, rig.ring(), rig.view(), io_site_of, {.threads = 3, .chunk_bytes = 64 << 10});
  service.start();

  std::atomic<std::uint64_t> bad{0}, requested{0}, requests{0};
  std::vector<std::thread> threads;
  for (std::uint32_t reader = 0; reader < readers; ++reader) {
    threads.emplace_back([&, reader] {
      std::uint64_t state = reader + 1;
      for (int i = 0; i < 150; ++i) {
        state = state * 6364136223846793005u + 1442695040888963407u;
        // Page-aligned offsets, lengths of 1..256 pages, clipped to the file: many split into chunks.
        const std::uint64_t pages = 1 + (state >> 33) % 256;
        const std::uint64_t offset = ((state >> 13) % (size / 4096)) * 4096;
        const std::uint64_t bytes = std::min(pages * 4096, size - offset);
        const std::uint32_t slot =
            reader * slots_per_reader + static_cast<std::uint32_t>(i % slots_per_reader);
        const std::uint64_t seq = rig.ring_request(slot, offset, bytes, static_cast<std::uint64_t>(i));
        const request_outcome out = rig.wait(slot, seq);
        const std::byte* got = rig.staged(slot);
        bool same = out.status == file_status::ok && out.bytes == bytes;
        for (std::uint64_t b = 0; same && b < bytes; ++b) same = got[b] == test::pattern_byte(0, offset + b);
        if (!same) bad.fetch_add(1);
        requested.fetch_add(bytes);
        requests.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  service.stop();
  CHECK(bad.load() == 0);
  CHECK_FALSE(service.poll().has_value());
  const std::vector<io_thread_stats> stats = service.stats();
  REQUIRE(stats.size() == 3);
  io_thread_stats sum;
  for (const io_thread_stats& s : stats) {
    sum.requests += s.requests;
    sum.chunks += s.chunks;
    sum.bytes += s.bytes;
  }
  CHECK(sum.requests == requests.load());
  CHECK(sum.bytes == requested.load());
  CHECK(sum.chunks > sum.requests);  // requests over 64 KiB were split
  MESSAGE("chunks per thread: " << stats[0].chunks << " " << stats[1].chunks << " " << stats[2].chunks);
}

TEST_CASE("io_service: one request's chunks are read by idle threads, and the last one answers") {
  // One 1 MiB request of 16 chunks and three threads: the answer comes once, after every chunk.
  pattern_file_table t(2 << 20);
  t.open();
  request_rig rig(1, 1 << 20);
  io_service service(t.files, rig.ring(), rig.view(), io_site_of, {.threads = 3, .chunk_bytes = 64 << 10});
  service.start();
  for (int round = 0; round < 20; ++round) {
    const std::uint64_t offset = static_cast<std::uint64_t>(round % 2) << 20;
    std::memset(rig.staging.get(), 0, rig.staging_bytes);
    const request_outcome out = rig.wait(0, rig.ring_request(0, offset, 1 << 20));
    REQUIRE(out.status == file_status::ok);
    CHECK(out.bytes == std::uint64_t{1} << 20);
    bool same = true;
    for (std::uint64_t b = 0; same && b < (1 << 20); ++b)
      same = rig.staged(0)[b] == test::pattern_byte(0, offset + b);
    CHECK(same);
  }
  service.stop();
  std::uint64_t chunks = 0;
  for (const io_thread_stats& s : service.stats()) chunks += s.chunks;
  CHECK(chunks == 20 * 16);
}

TEST_CASE("io_service: a failed read answers its reader and is the run's error; later requests are refused") {
  pattern_file_table t(1 << 20);
  t.files.inject_fault(t.path, 300000, EIO);
  t.open();
  request_rig rig(2, 256 << 10);
  io_service service(t.files, rig.ring(), rig.view(), io_site_of, {.threads = 2, .chunk_bytes = 64 << 10});
  service.start();
  CHECK(rig.wait(0, rig.ring_request(0, 0, 256 << 10, 41)).status == file_status::ok);
  CHECK_FALSE(service.poll().has_value());
  // 256 KiB at 262144 in four chunks: the first (262144..327680) holds the fault, the others read.
  const request_outcome failed = rig.wait(1, rig.ring_request(1, 262144, 256 << 10, 42));
  CHECK(failed.status == file_status::io_error);
  CHECK(failed.bytes == 0);
  const std::optional<run_error> error = service.poll();
  REQUIRE(error.has_value());
  CHECK(error->site().str() == "operator 'reader', topic 'frames', offset 42");
  CHECK(error->reason() == "file '" + t.path + "': read failed at byte offset 300000: Input/output error");
  CHECK(rig.wait(0, rig.ring_request(0, 0, 4096)).status == file_status::stopped);
  service.stop();
  const std::optional<run_error> after_stop = service.poll();
  REQUIRE(after_stop.has_value());
  CHECK(after_stop->reason() == error->reason());  // the first error stays the error
}

TEST_CASE("io_service: a request past the file's end or larger than its staging is refused, naming why") {
  pattern_file_table t(100000);
  t.open();
  SUBCASE("past the end") {
    request_rig rig(1, 64 << 10);
    io_service service(t.files, rig.ring(), rig.view(), io_site_of, {.threads = 1});
    service.start();
    CHECK(rig.wait(0, rig.ring_request(0, 98304, 4096, 5)).status == file_status::io_error);
    const std::optional<run_error> error = service.poll();
    REQUIRE(error.has_value());
    CHECK(error->reason() ==
          "file '" + t.path +
              "': a request for 4096 bytes at byte offset 98304 runs past its size (100000 bytes)");
  }
  SUBCASE("larger than staging") {
    request_rig rig(1, 64 << 10);
    io_service service(t.files, rig.ring(), rig.view(), io_site_of, {.threads = 1});
    service.start();
    CHECK(rig.wait(0, rig.ring_request(0, 0, 65536 + 4096, 5)).status == file_status::io_error);
    const std::optional<run_error> error = service.poll();
    REQUIRE(error.has_value());
    CHECK(error->reason().find("larger than a slot's 65536 bytes of staging") != std::string::npos);
  }
  SUBCASE("a file never opened") {
    request_rig rig(1, 64 << 10);
    io_service service(t.files, rig.ring(), rig.view(), io_site_of, {.threads = 1});
    service.start();
    CHECK(rig.wait(0, rig.ring_request(0, 0, 4096, 5, /*file=*/3)).status == file_status::io_error);
    const std::optional<run_error> error = service.poll();
    REQUIRE(error.has_value());
    CHECK(error->reason() == "a request names file id 3, not opened");
  }
}

TEST_CASE("io_service: the watchdog fails a read that hangs, and its reader stops waiting") {
  pattern_file_table t(1 << 20);
  t.files.inject_delay(t.path, 500000, std::chrono::milliseconds(2000));
  t.open();
  request_rig rig(1, 64 << 10);
  io_service service(t.files, rig.ring(), rig.view(), io_site_of,
                     {.threads = 1, .watchdog = std::chrono::milliseconds(50)});
  service.start();
  const std::uint64_t seq = rig.ring_request(0, 491520, 16384, 9);
  std::optional<run_error> error;
  const auto start = std::chrono::steady_clock::now();
  while (!(error = service.poll())) {
    REQUIRE(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(1500));  // not after the read
  CHECK(error->site().str() == "operator 'reader', topic 'frames', offset 9");
  CHECK(error->reason().find("file '" + t.path +
                             "': read of 16384 bytes at byte offset 491520 has not completed after") == 0);
  CHECK(rig.wait(0, seq).status == file_status::timed_out);
  service.stop();  // joins the thread once its read returns; its late answer is dropped
  request_outcome out{};
  CHECK(request_done(rig.slots[0], seq, &out));
  CHECK(out.status == file_status::timed_out);
}

TEST_CASE("io_service: stop() answers every request it leaves") {
  pattern_file_table t(1 << 20);
  t.open();
  request_rig rig(3, 64 << 10);
  io_service service(t.files, rig.ring(), rig.view(), io_site_of, {.threads = 2});
  std::vector<std::uint64_t> seqs;
  for (std::uint32_t s = 0; s < 3; ++s) seqs.push_back(rig.ring_request(s, s * 65536, 65536));
  service.stop();  // never started: all three still in the ring
  for (std::uint32_t s = 0; s < 3; ++s) CHECK(rig.wait(s, seqs[s]).status == file_status::stopped);
  CHECK_FALSE(service.poll().has_value());
}

}  // namespace xf
