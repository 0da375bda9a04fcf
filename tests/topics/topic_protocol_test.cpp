// Stress of the topic protocol through topic_driver: many claiming publishers × many subscriber groups of
// many workers, and a source → map → sink chain. Every check is a ledger or a checksum, never a timing:
// each group sees each offset exactly once with the content its publisher wrote, and a publisher never
// reuses a slot before every group released its previous occupant.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/support/topic_fixture.hpp"
#include "topics/topic_driver.hpp"

namespace {

using namespace xf;
using namespace xf::test;

constexpr std::uint64_t salt_a = 0xa, salt_b = 0xb;

/// Checks one delivered frame of a topic whose offsets below `frames` carry write_frame(o, salt) and
/// whose tail (a void per publisher that claimed past the data) is void. Holds the frame a little while
/// (a yield) and checks again: a frame overwritten while held fails the second check.
void check_delivery(const topic_view& v, const delivery& d, std::uint64_t frames, std::uint64_t salt, rng& r,
                    failure_log& failures, const std::string& who) {
  const std::string at = who + ", offset " + std::to_string(d.offset) + ": ";
  if (d.slot->tag != d.offset) failures.add(at + "tag " + std::to_string(d.slot->tag));
  if (d.offset >= frames) {
    if (!d.is_void()) failures.add(at + "a frame past the data (want void)");
    return;
  }
  if (d.is_void()) {
    failures.add(at + "void inside the data");
    return;
  }
  if (d.slot->bytes != pattern_bytes(d.offset, v.frame_bytes))
    failures.add(at + "bytes " + std::to_string(d.slot->bytes));
  if (!frame_matches(d.data(v), v.frame_bytes, d.offset, salt))
    failures.add(at + "content wrong on delivery");
  r.maybe_yield(4);
  if (!frame_matches(d.data(v), v.frame_bytes, d.offset, salt)) failures.add(at + "overwritten while held");
}

/// A subscriber worker: drains group g, marking each offset, until end of stream. Returns the checksum
/// of the patterns it saw.
std::uint64_t drain_group(const topic_view& v, std::uint32_t g, bool single_worker, std::uint64_t frames,
                          std::uint64_t end, std::uint64_t salt, offset_ledger& delivered,
                          offset_ledger& released, const std::atomic<bool>& abort, failure_log& failures,
                          const std::string& who, std::uint64_t seed) {
  rng r(seed);
  std::uint64_t last = no_offset, sum = 0;
  while (true) {
    const delivery d = next_frame(v, g, abort);
    if (d.ended) {
      if (d.offset < end) failures.add(who + ": ended at offset " + std::to_string(d.offset) + " < end");
      if (v.end() != end) failures.add(who + ": end of stream " + std::to_string(v.end()));
      return sum;
    }
    if (single_worker && last != no_offset && d.offset <= last)
      failures.add(who + ": offset " + std::to_string(d.offset) + " after " + std::to_string(last));
    last = d.offset;
    if (delivered.mark(d.offset) != 0) failures.add(who + ": offset " + std::to_string(d.offset) + " twice");
    check_delivery(v, d, frames, salt, r, failures, who);
    if (d.offset < frames) sum += pattern(d.offset, salt);
    released.mark(d.offset);  // before the release: a publisher that sees the slot free sees this mark
    v.release(g, d.offset);
  }
}

/// A publisher's promise: the previous occupant of `offset`'s slot was released by every group.
void check_slot_released(const topic_view& v, std::uint64_t offset,
                         const std::vector<offset_ledger>& released, failure_log& failures,
                         const std::string& who) {
  if (offset < v.capacity) return;
  for (std::uint32_t g = 0; g < v.groups; ++g)
    if (!released[g].marked(offset - v.capacity))
      failures.add(who + ": reused the slot of offset " + std::to_string(offset - v.capacity) +
                   " before group " + std::to_string(g) + " released it");
}

/// A claiming source: publishes frames until the claimed offset reaches `frames`, voids that offset
/// (a source finding its input ended after claiming), closes with one past it.
void run_source(const topic_view& v, const char* topic_name, std::uint64_t frames, std::uint64_t salt,
                const std::vector<offset_ledger>& released, const std::atomic<bool>& abort,
                failure_log& failures, const std::string& who, std::uint64_t seed) {
  rng r(seed);
  while (true) {
    const publish_ticket t = reserve_claimed(v, topic_name, abort);
    check_slot_released(v, t.offset, released, failures, who);
    if (t.offset >= frames) {
      publish_void(v, t);
      v.close(t.offset + 1);
      return;
    }
    write_frame(t.data, v.frame_bytes, t.offset, salt);
    r.maybe_yield(16);
    publish_frame(v, t, pattern_bytes(t.offset, v.frame_bytes), t.offset);
  }
}

std::uint64_t expected_sum(std::uint64_t frames, std::uint64_t salt) {
  std::uint64_t sum = 0;
  for (std::uint64_t o = 0; o < frames; ++o) sum += pattern(o, salt);
  return sum;
}

struct fan_out_shape {
  std::uint32_t capacity, publishers, groups, workers;
  std::uint64_t frames;
};

void run_fan_out(const fan_out_shape& s) {
  CAPTURE(s.capacity);
  CAPTURE(s.publishers);
  CAPTURE(s.groups);
  CAPTURE(s.workers);
  CAPTURE(s.frames);
  host_topic_memory memory;
  topic t(test_topic("fan_out", s.capacity, s.groups, s.publishers), memory);
  const topic_view& v = t.view();
  const std::uint64_t end =
      s.frames + s.publishers;  // each publisher voids the one offset it claims past the data
  std::atomic<bool> abort{false};
  failure_log failures;
  std::vector<offset_ledger> delivered, released;
  for (std::uint32_t g = 0; g < s.groups; ++g) {
    delivered.emplace_back(end + 64);
    released.emplace_back(end + 64);
  }
  std::vector<std::atomic<std::uint64_t>> sums(s.groups);
  bool joined = false;
  {
    worker_team team(abort, failures);
    for (std::uint32_t p = 0; p < s.publishers; ++p) {
      const std::string who = "publisher " + std::to_string(p);
      team.spawn(who, [&, p, who] {
        run_source(v, "fan_out", s.frames, salt_a, released, abort, failures, who, p);
      });
    }
    for (std::uint32_t g = 0; g < s.groups; ++g)
      for (std::uint32_t w = 0; w < s.workers; ++w) {
        const std::string who = "group " + std::to_string(g) + " worker " + std::to_string(w);
        team.spawn(who, [&, g, w, who] {
          sums[g] += drain_group(v, g, s.workers == 1, s.frames, end, salt_a, delivered[g], released[g],
                                 abort, failures, who, 1000 + g * 16 + w);
        });
      }
    joined = team.join();
  }
  CHECK_MESSAGE(failures.count() == 0, failures.str());
  REQUIRE(joined);
  const std::uint64_t want = expected_sum(s.frames, salt_a);
  for (std::uint32_t g = 0; g < s.groups; ++g) {
    CAPTURE(g);
    CHECK(delivered[g].exactly_once(end) == "");
    CHECK(sums[g].load() == want);
  }
  CHECK(v.end() == end);
  CHECK(t.frames_in_use() <= s.capacity);  // at rest the last `capacity` offsets keep their frames
}

}  // namespace

// Capacity 1: every publish waits for every group of the previous offset (the tightest hand-off).
TEST_CASE("topic.fan_out_capacity_1") {
  run_fan_out({1, 3, 2, 2, stress_frames(60'000)});
  run_fan_out({1, 2, 3, 1, stress_frames(60'000)});
}

TEST_CASE("topic.fan_out_capacity_2") {
  run_fan_out({2, 4, 2, 2, stress_frames(100'000)});
  run_fan_out({2, 1, 3, 1, stress_frames(100'000)});
}

TEST_CASE("topic.fan_out_capacity_3") {
  run_fan_out({3, 3, 3, 2, stress_frames(100'000)});
  run_fan_out({3, 5, 1, 4, stress_frames(100'000)});
}

TEST_CASE("topic.fan_out_capacity_64") {
  run_fan_out({64, 4, 3, 2, stress_frames(400'000)});
  run_fan_out({64, 2, 2, 1, stress_frames(400'000)});
}

// Heaps whose bitmap ends in a partial word (65 and 130 frames).
TEST_CASE("topic.fan_out_capacity_not_a_multiple_of_64") {
  run_fan_out({65, 4, 2, 2, stress_frames(200'000)});
  run_fan_out({130, 3, 2, 3, stress_frames(200'000)});
}

namespace {

struct chain_shape {
  std::uint32_t capacity_a, capacity_b, sources, maps, sink_groups, sink_workers;
  bool tap;  ///< a second, single-worker group on A
  std::uint64_t frames;
};

/// sources → A → 1:1 map (publishes at its input's offset) → B → sink groups. Each map worker closes B
/// with A's end once A ended for it, so B's end of stream is A's.
void run_chain(const chain_shape& s) {
  CAPTURE(s.capacity_a);
  CAPTURE(s.capacity_b);
  CAPTURE(s.sources);
  CAPTURE(s.maps);
  CAPTURE(s.sink_groups);
  CAPTURE(s.sink_workers);
  CAPTURE(s.tap);
  host_topic_memory memory;
  const std::uint32_t groups_a = s.tap ? 2 : 1;
  topic ta(test_topic("a", s.capacity_a, groups_a, s.sources), memory);
  topic tb(test_topic("b", s.capacity_b, s.sink_groups, s.maps), memory);
  const topic_view& a = ta.view();
  const topic_view& b = tb.view();
  const std::uint64_t end = s.frames + s.sources;
  std::atomic<bool> abort{false};
  failure_log failures;
  std::vector<offset_ledger> delivered_a, released_a, delivered_b, released_b;
  for (std::uint32_t g = 0; g < groups_a; ++g) {
    delivered_a.emplace_back(end + 64);
    released_a.emplace_back(end + 64);
  }
  for (std::uint32_t g = 0; g < s.sink_groups; ++g) {
    delivered_b.emplace_back(end + 64);
    released_b.emplace_back(end + 64);
  }
  std::vector<std::atomic<std::uint64_t>> sums(s.sink_groups);
  std::atomic<std::uint64_t> tap_sum{0};
  bool joined = false;
  {
    worker_team team(abort, failures);
    for (std::uint32_t p = 0; p < s.sources; ++p) {
      const std::string who = "source " + std::to_string(p);
      team.spawn(who,
                 [&, p, who] { run_source(a, "a", s.frames, salt_a, released_a, abort, failures, who, p); });
    }
    for (std::uint32_t m = 0; m < s.maps; ++m) {
      const std::string who = "map " + std::to_string(m);
      team.spawn(who, [&, m, who] {
        rng r(500 + m);
        while (true) {
          const delivery d = next_frame(a, 0, abort);
          if (d.ended) {
            b.close(a.end());
            return;
          }
          if (delivered_a[0].mark(d.offset) != 0)
            failures.add(who + ": offset " + std::to_string(d.offset) + " twice");
          if (d.is_void()) {
            const publish_ticket t = reserve_void_at(b, d.offset, abort);
            check_slot_released(b, t.offset, released_b, failures, who);
            publish_void(b, t);
          } else {
            check_delivery(a, d, s.frames, salt_a, r, failures, who);
            const publish_ticket t = reserve_at(b, "b", d.offset, abort);
            check_slot_released(b, t.offset, released_b, failures, who);
            write_frame(t.data, b.frame_bytes, d.offset, salt_b);
            r.maybe_yield(16);
            publish_frame(b, t, d.slot->bytes, d.slot->tag);
          }
          released_a[0].mark(d.offset);
          a.release(0, d.offset);
        }
      });
    }
    if (s.tap)
      team.spawn("tap", [&] {
        tap_sum += drain_group(a, 1, true, s.frames, end, salt_a, delivered_a[1], released_a[1], abort,
                               failures, "tap", 900);
      });
    for (std::uint32_t g = 0; g < s.sink_groups; ++g)
      for (std::uint32_t w = 0; w < s.sink_workers; ++w) {
        const std::string who = "sink group " + std::to_string(g) + " worker " + std::to_string(w);
        team.spawn(who, [&, g, w, who] {
          sums[g] += drain_group(b, g, s.sink_workers == 1, s.frames, end, salt_b, delivered_b[g],
                                 released_b[g], abort, failures, who, 2000 + g * 16 + w);
        });
      }
    joined = team.join();
  }
  CHECK_MESSAGE(failures.count() == 0, failures.str());
  REQUIRE(joined);
  CHECK(a.end() == end);
  CHECK(b.end() == end);
  CHECK(delivered_a[0].exactly_once(end) == "");
  if (s.tap) {
    CHECK(delivered_a[1].exactly_once(end) == "");
    CHECK(tap_sum.load() == expected_sum(s.frames, salt_a));
  }
  const std::uint64_t want = expected_sum(s.frames, salt_b);
  for (std::uint32_t g = 0; g < s.sink_groups; ++g) {
    CAPTURE(g);
    CHECK(delivered_b[g].exactly_once(end) == "");
    CHECK(sums[g].load() == want);
  }
}

}  // namespace

TEST_CASE("topic.chain_source_map_sink") {
  run_chain({1, 1, 2, 2, 2, 1, false, stress_frames(40'000)});
  run_chain({2, 3, 3, 3, 1, 2, true, stress_frames(60'000)});
  run_chain({64, 2, 2, 4, 2, 2, true, stress_frames(100'000)});
  run_chain({3, 65, 4, 2, 2, 1, false, stress_frames(100'000)});
}
