// A topology's shared object, alone: versions by offset, the horizon, buffer reuse only once readers left,
// and what each protocol moves at a publish.
#include "framework/shared/versioned_object.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

namespace xf::shared {
namespace {

struct fixture {
  version_words words{};
  std::unique_ptr<versioned_object> object;
  fixture(std::uint64_t bytes, std::uint32_t versions, protocol p, std::span<const std::byte> initial = {}) {
    versioned_object_config c;
    c.name = "table";
    c.bytes = bytes;
    c.versions = versions;
    c.proto = p;
    c.initial = initial;
    object = std::make_unique<versioned_object>(c, &words);
  }
  /// The bytes the reader of frame `offset` sees (ready already).
  std::vector<std::byte> read(std::uint64_t offset) const {
    const version_table_view v = object->host_view();
    REQUIRE(v.ready(offset));
    const std::byte* d = v.data(v.buffer_for(offset));
    return {d, d + v.bytes};
  }
  std::uint64_t number(std::uint64_t offset) const {
    const version_table_view v = object->host_view();
    return v.number(v.buffer_for(offset));
  }
};

void no_readers(std::uint64_t) {}

std::vector<std::byte> filled(std::uint64_t bytes, std::uint8_t value) {
  return std::vector<std::byte>(bytes, std::byte{value});
}

}  // namespace

TEST_CASE("versioned_object: each frame reads the latest version published at or below its offset") {
  for (const protocol p : {protocol::batch, protocol::lazy, protocol::rolling}) {
    CAPTURE(name_of(p));
    const std::vector<std::byte> initial = filled(10000, 7);
    fixture f(10000, 3, p, initial);
    CHECK(f.object->horizon() == 0);  // frame 0 waits for the writer to start
    CHECK_FALSE(f.object->host_view().ready(0));
    f.object->promise(1);
    CHECK(f.read(0) == initial);
    CHECK_FALSE(f.object->host_view().ready(1));

    std::memset(f.object->working_copy().data(), 1, 10000);
    CHECK(f.object->publish(5, no_readers) == 1);
    CHECK(f.object->horizon() == 6);
    std::memset(f.object->working_copy().data() + 4096, 2, 100);  // one block under rolling update
    CHECK(f.object->publish(9, no_readers) == 2);
    f.object->promise(20);
    for (std::uint64_t o = 0; o < 20; ++o) {
      CAPTURE(o);
      const std::uint64_t want = o < 5 ? 0 : o < 9 ? 1 : 2;
      CHECK(f.number(o) == want);
      std::vector<std::byte> expected = want == 0 ? initial : filled(10000, 1);
      if (want == 2) std::memset(expected.data() + 4096, 2, 100);
      CHECK(f.read(o) == expected);
    }
    CHECK_FALSE(f.object->host_view().ready(20));
    CHECK_THROWS_AS(f.object->publish(19, no_readers), std::invalid_argument);  // below the horizon
    f.object->close();
    CHECK(f.object->host_view().ready(~std::uint64_t{0} - 1));
  }
}

TEST_CASE("versioned_object: the protocol decides what a publish moves") {
  const std::uint64_t bytes = 64 * 1024;  // 16 blocks of 4 KiB
  for (const protocol p : {protocol::batch, protocol::lazy, protocol::rolling}) {
    CAPTURE(name_of(p));
    fixture f(bytes, 2, p);
    f.object->working_copy()[100] = std::byte{1};
    f.object->publish(1, no_readers);  // a fresh buffer: all of it
    CHECK(f.object->counters().bytes_moved == bytes);
    f.object->working_copy()[5000] = std::byte{2};  // block 1
    f.object->publish(2, no_readers);               // buffer 0 held version 0: blocks 0 and 1 changed since
    const versioned_object_counters c = f.object->counters();
    if (p == protocol::rolling) {
      CHECK(c.bytes_moved == bytes + 2 * 4096);
      CHECK(c.bytes_written == 2 * 4096);
    } else {
      CHECK(c.bytes_moved == 2 * bytes);
      CHECK(c.bytes_written == 2 * bytes);
    }
    f.object->publish(3, no_readers);  // nothing written since
    const versioned_object_counters idle = f.object->counters();
    if (p == protocol::batch)
      CHECK(idle.bytes_written == 3 * bytes);  // batch update sends everything every time
    else
      CHECK(idle.bytes_written == c.bytes_written);
    std::vector<std::byte> expected(bytes);
    expected[100] = std::byte{1};
    expected[5000] = std::byte{2};
    CHECK(f.read(3) == expected);
  }
}

TEST_CASE("versioned_object: a writer may replace version 0 at offset 0 before it promises 1") {
  fixture f(4096, 2, protocol::lazy);
  f.object->working_copy()[0] = std::byte{9};
  CHECK(f.object->publish(0, no_readers) == 1);
  CHECK(f.number(0) == 1);  // both versions start at 0: the later one counts
  f.object->promise(6);
  CHECK(f.read(5)[0] == std::byte{9});
  CHECK_THROWS_AS(f.object->publish(0, no_readers), std::invalid_argument);
}

TEST_CASE("versioned_object: the horizon follows the writer's finished frames") {
  fixture f(4096, 2, protocol::rolling);
  f.object->finished_frame(1);
  CHECK(f.object->horizon() == 1);  // frame 0 is not finished
  f.object->finished_frame(0);
  CHECK(f.object->horizon() == 3);  // frames 0 and 1 are: versions below 3 are final
  f.object->finished_frame(0);      // again: ignored
  CHECK(f.object->horizon() == 3);
  f.object->promise(2);  // never lowers it
  CHECK(f.object->horizon() == 3);
}

TEST_CASE("versioned_object: a buffer is reused only once the readers of its version left") {
  fixture f(4096, 2, protocol::lazy);
  std::vector<std::uint64_t> asked;
  const auto record = [&](std::uint64_t below) { asked.push_back(below); };
  f.object->publish(10, record);  // buffer 1: fresh
  f.object->publish(20, record);  // buffer 0 held version 0, read by frames below 10
  f.object->publish(30, record);  // buffer 1 held version 1, read by frames below 20
  CHECK(asked == std::vector<std::uint64_t>{10, 20});
  // A waiting function that throws abandons the publish: nothing changes.
  const auto fail = [](std::uint64_t) { throw std::runtime_error("aborted"); };
  CHECK_THROWS_AS(f.object->publish(40, fail), std::runtime_error);
  CHECK(f.number(35) == 3);
}

TEST_CASE("versioned_object: readers on other threads never see a torn or early version") {
  // The writer stamps every byte of version n with n; readers of frames at random offsets check that every
  // byte equals the number of the version their offset asks for, while the writer publishes and waits for
  // them to release frames below each reused buffer's successor.
  constexpr std::uint64_t bytes = 3 * 4096 + 100, frames = 4000, every = 40;
  fixture f(bytes, 2, protocol::rolling);
  std::atomic<std::uint64_t> released{0};  // every frame below it is released by the readers
  std::atomic<bool> bad{false};
  std::atomic<std::uint64_t> next{0};
  std::vector<std::uint64_t> done(frames, 0);
  std::mutex done_mutex;
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t)
    readers.emplace_back([&] {
      const version_table_view v = f.object->host_view();
      for (std::uint64_t o; (o = next.fetch_add(1)) < frames;) {
        while (!v.ready(o)) std::this_thread::yield();
        const std::uint32_t b = v.buffer_for(o);
        const std::uint64_t n = v.number(b);
        if (n != o / every) bad = true;
        const std::byte* d = v.data(b);
        for (std::uint64_t i = 0; i < bytes; i += 97)
          if (d[i] != static_cast<std::byte>(n)) bad = true;
        std::lock_guard lock(done_mutex);
        done[o] = 1;
        std::uint64_t r = released.load();
        while (r < frames && done[r]) ++r;
        released = r;
      }
    });
  for (std::uint64_t o = 0; o < frames; ++o) {
    if (o % every == every - 1) {
      std::memset(f.object->working_copy().data(), static_cast<int>((o + 1) / every), bytes);
      f.object->publish(o + 1, [&](std::uint64_t below) {
        while (released.load() < below) std::this_thread::yield();
      });
    }
    f.object->finished_frame(o);
  }
  f.object->close();
  for (std::thread& t : readers) t.join();
  CHECK_FALSE(bad.load());
  CHECK(f.object->counters().versions == frames / every);
}

}  // namespace xf::shared
