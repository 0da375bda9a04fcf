// The frame heap's free bitmap under concurrency: threads allocate and free frames while holding no
// more than the heap has in all; no frame is ever handed to two holders and alloc never fails. Heap
// sizes include bitmaps that end in a partial word (65, 130 frames).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/support/topic_fixture.hpp"
#include "topics/topic_view.hpp"

namespace {

using namespace xf;
using namespace xf::test;

void churn_heap(std::uint32_t frames, std::uint32_t threads, std::uint64_t rounds) {
  CAPTURE(frames);
  CAPTURE(threads);
  host_topic_memory memory;
  topic t(test_topic("heap", frames, 1, 1), memory);
  const topic_view& v = t.view();
  REQUIRE(v.heap_frames == frames);
  std::atomic<bool> abort{false};
  failure_log failures;
  // owner[f]: 0 when free, else the holder's id + 1; a second holder would find it taken.
  std::vector<std::atomic<std::uint32_t>> owner(frames);
  std::atomic<std::uint32_t> peak{0}, held{0};
  bool joined = false;
  {
    worker_team team(abort, failures);
    for (std::uint32_t id = 0; id < threads; ++id) {
      // Quotas sum to the heap size: every alloc must find a frame.
      const std::uint32_t quota = frames / threads + (id < frames % threads ? 1 : 0);
      const std::string who = "thread " + std::to_string(id);
      team.spawn(who, [&, id, quota, who] {
        rng r(id);
        std::vector<std::uint32_t> mine;
        for (std::uint64_t round = 0; round < rounds && !abort.load(std::memory_order_relaxed); ++round) {
          const std::uint64_t want = r.below(quota + 1);
          while (mine.size() < want) {
            const std::uint32_t f = v.alloc_frame(r.next());
            if (f == no_frame) {
              failures.add(who + ": no frame with " + std::to_string(held.load()) + " held of " +
                           std::to_string(frames));
              abort.store(true);
              return;
            }
            if (f >= frames) failures.add(who + ": frame " + std::to_string(f) + " out of range");
            std::uint32_t expected = 0;
            if (!owner[f].compare_exchange_strong(expected, id + 1))
              failures.add(who + ": frame " + std::to_string(f) + " also held by " +
                           std::to_string(expected - 1));
            write_frame(v.frame_data(f), v.frame_bytes, f, id);
            const std::uint32_t now = held.fetch_add(1) + 1;
            std::uint32_t seen = peak.load();
            while (now > seen && !peak.compare_exchange_weak(seen, now)) {
            }
            mine.push_back(f);
          }
          r.maybe_yield(2);
          while (mine.size() > want / 2) {  // free some, in random order
            const std::size_t i = r.below(mine.size());
            const std::uint32_t f = mine[i];
            mine[i] = mine.back();
            mine.pop_back();
            if (!frame_matches(v.frame_data(f), v.frame_bytes, f, id))
              failures.add(who + ": frame " + std::to_string(f) + " written by someone else while held");
            owner[f].store(0);
            held.fetch_sub(1);
            v.free_frame(f);
          }
        }
        for (std::uint32_t f : mine) {
          owner[f].store(0);
          held.fetch_sub(1);
          v.free_frame(f);
        }
      });
    }
    joined = team.join();
  }
  CHECK_MESSAGE(failures.count() == 0, failures.str());
  REQUIRE(joined);
  CHECK(peak.load() <= frames);
  CHECK(t.frames_in_use() == 0);
}

}  // namespace

TEST_CASE("frame_heap.exhaustion_and_reuse") {
  for (std::uint32_t frames : {1u, 3u, 64u, 65u, 130u}) {
    CAPTURE(frames);
    host_topic_memory memory;
    topic t(test_topic("heap", frames, 1, 1), memory);
    const topic_view& v = t.view();
    std::vector<bool> got(frames, false);
    for (std::uint32_t i = 0; i < frames; ++i) {
      const std::uint32_t f = v.alloc_frame(i * 7);
      REQUIRE(f < frames);
      CHECK_FALSE(got[f]);
      got[f] = true;
    }
    CHECK(t.frames_in_use() == frames);
    CHECK(v.alloc_frame(0) == no_frame);  // never a bit past heap_frames in the last, partial word
    v.free_frame(frames - 1);
    CHECK(v.alloc_frame(0) == frames - 1);
    for (std::uint32_t f = 0; f < frames; ++f) v.free_frame(f);
    CHECK(t.frames_in_use() == 0);
  }
}

TEST_CASE("frame_heap.concurrent_alloc_free") {
  const std::uint64_t rounds = stress_frames(20'000);
  churn_heap(1, 3, rounds);
  churn_heap(3, 4, rounds);
  churn_heap(64, 5, rounds);
  churn_heap(65, 5, rounds);
  churn_heap(130, 6, rounds / 2);
}
