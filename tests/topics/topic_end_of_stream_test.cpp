// End of stream always terminates: with no frames, with sources that end at different offsets (a source
// that claimed past its data publishes a void), with publishers closing in random order. Every worker
// of every group gets `ended` exactly once, for an offset ≥ the end, and every offset below the end
// exactly once before that.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/support/topic_fixture.hpp"
#include "topics/topic_driver.hpp"

namespace {

using namespace xf;
using namespace xf::test;

constexpr std::uint64_t eos_salt = 0xe05;

/// How one publisher of a round behaves.
struct publisher_plan {
  std::uint64_t frames;  ///< frames it publishes (at whatever offsets it claims)
  bool claims_past;      ///< then claims one more offset and voids it (input ended after the claim)
  unsigned close_delay;  ///< yields before closing: scrambles the closing order
};

struct round_shape {
  std::uint32_t capacity, groups, workers;
  std::vector<publisher_plan> publishers;
};

/// One round: publishers follow their plans, subscribers drain; checks every worker's view of the end.
void run_round(const round_shape& s, std::uint64_t seed) {
  const auto publishers = static_cast<std::uint32_t>(s.publishers.size());
  host_topic_memory memory;
  topic t(test_topic("eos", s.capacity, s.groups, publishers), memory);
  const topic_view& v = t.view();
  std::uint64_t frames = 0, voids = 0;
  for (const publisher_plan& p : s.publishers) {
    frames += p.frames;
    voids += p.claims_past ? 1 : 0;
  }
  const std::uint64_t end = frames + voids;  // every claimed offset is published, frame or void
  std::atomic<bool> abort{false};
  failure_log failures;
  offset_ledger is_frame(end + 64);  // marked by the publisher before it publishes a frame
  std::vector<offset_ledger> delivered;
  for (std::uint32_t g = 0; g < s.groups; ++g) delivered.emplace_back(end + 64);
  std::vector<std::atomic<std::uint64_t>> frames_seen(s.groups), voids_seen(s.groups);
  std::atomic<std::uint64_t> ended_workers{0};
  bool joined = false;
  {
    worker_team team(abort, failures);
    // Subscribers first: they wait on a topic nobody has published to yet.
    for (std::uint32_t g = 0; g < s.groups; ++g)
      for (std::uint32_t w = 0; w < s.workers; ++w) {
        const std::string who = "group " + std::to_string(g) + " worker " + std::to_string(w);
        team.spawn(who, [&, g, w, who] {
          rng r(seed * 131 + g * 16 + w);
          while (true) {
            const delivery d = next_frame(v, g, abort);
            if (d.ended) {
              if (d.offset < end)
                failures.add(who + ": ended at " + std::to_string(d.offset) + " below the end " +
                             std::to_string(end));
              ended_workers.fetch_add(1);
              return;
            }
            if (d.offset >= end)
              failures.add(who + ": delivered " + std::to_string(d.offset) + " past the end");
            if (delivered[g].mark(d.offset) != 0)
              failures.add(who + ": " + std::to_string(d.offset) + " twice");
            if (d.is_void() == is_frame.marked(d.offset))
              failures.add(who + ": offset " + std::to_string(d.offset) +
                           (d.is_void() ? " void" : " a frame") + " but published otherwise");
            if (d.is_void()) {
              voids_seen[g].fetch_add(1);
            } else {
              if (!frame_matches(d.data(v), v.frame_bytes, d.offset, eos_salt))
                failures.add(who + ": offset " + std::to_string(d.offset) + " content wrong");
              frames_seen[g].fetch_add(1);
            }
            r.maybe_yield(4);
            v.release(g, d.offset);
          }
        });
      }
    for (std::uint32_t p = 0; p < publishers; ++p) {
      const std::string who = "publisher " + std::to_string(p);
      team.spawn(who, [&, p, who] {
        const publisher_plan& plan = s.publishers[p];
        rng r(seed * 977 + p);
        std::uint64_t last_end = 0;  // one past the last offset this publisher published
        for (std::uint64_t i = 0; i < plan.frames; ++i) {
          const publish_ticket ticket = reserve_claimed(v, "eos", abort);
          write_frame(ticket.data, v.frame_bytes, ticket.offset, eos_salt);
          is_frame.mark(ticket.offset);
          r.maybe_yield(4);
          publish_frame(v, ticket, 64, ticket.offset);
          last_end = ticket.offset + 1;
        }
        if (plan.claims_past) {
          const publish_ticket ticket = reserve_claimed(v, "eos", abort);
          publish_void(v, ticket);
          last_end = ticket.offset + 1;
        }
        for (unsigned i = 0; i < plan.close_delay; ++i) std::this_thread::yield();
        v.close(last_end);
      });
    }
    joined = team.join();
  }
  CHECK_MESSAGE(failures.count() == 0, failures.str());
  REQUIRE(joined);
  CHECK(v.end() == end);
  CHECK(ended_workers.load() == std::uint64_t{s.groups} * s.workers);
  for (std::uint32_t g = 0; g < s.groups; ++g) {
    CAPTURE(g);
    CHECK(delivered[g].exactly_once(end) == "");
    CHECK(frames_seen[g].load() == frames);
    CHECK(voids_seen[g].load() == voids);
  }
}

round_shape random_round(rng& r) {
  round_shape s;
  const std::uint32_t capacities[] = {1, 2, 3, 5, 64};
  s.capacity = capacities[r.below(5)];
  s.groups = 1 + static_cast<std::uint32_t>(r.below(3));
  s.workers = 1 + static_cast<std::uint32_t>(r.below(3));
  const std::uint64_t publishers = 1 + r.below(6);
  for (std::uint64_t p = 0; p < publishers; ++p) {
    // A third publish nothing; some of those still claim (and void) one offset.
    const std::uint64_t frames = r.below(3) == 0 ? 0 : r.below(40);
    s.publishers.push_back({frames, r.below(2) == 0, static_cast<unsigned>(r.below(50))});
  }
  return s;
}

}  // namespace

TEST_CASE("topic.end_of_stream_without_frames") {
  // Publishers close at once (end 0): every waiting worker must still return.
  for (std::uint64_t i = 0; i < 100; ++i) {
    round_shape s{static_cast<std::uint32_t>(1 + i % 3), 3, 3, {}};
    for (unsigned p = 0; p < 1 + i % 5; ++p)
      s.publishers.push_back({0, false, static_cast<unsigned>((p * 7 + i) % 20)});
    run_round(s, i);
  }
}

TEST_CASE("topic.end_of_stream_only_voids") {
  // Each publisher claims one offset and finds its input already ended.
  for (std::uint64_t i = 0; i < 100; ++i) {
    round_shape s{static_cast<std::uint32_t>(1 + i % 4), 2, 2, {}};
    for (unsigned p = 0; p < 1 + i % 6; ++p)
      s.publishers.push_back({0, true, static_cast<unsigned>((p * 5 + i) % 20)});
    run_round(s, i);
  }
}

TEST_CASE("topic.end_of_stream_sources_end_apart") {
  // Sources with different amounts of data, some voiding a claimed offset at the tail, closing in
  // random order; random capacities, groups and workers.
  rng r(2024);
  const std::uint64_t rounds = stress_frames(600);
  for (std::uint64_t i = 0; i < rounds; ++i) {
    const round_shape s = random_round(r);
    CAPTURE(i);
    run_round(s, i);
  }
}

TEST_CASE("topic.stream_starts_at_its_first_offset") {
  // A resumed run's topic starts at K: the first claim is K, every group's first take is K (times the
  // items a kernel operator that splits frames takes per offset), the first capacity slots are free at
  // once, and the ring wraps on from there as it would have in an uninterrupted run.
  for (const std::uint64_t first : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{3}, std::uint64_t{4},
                                    std::uint64_t{17}, std::uint64_t{1000003}}) {
    CAPTURE(first);
    constexpr std::uint32_t capacity = 4;
    host_topic_memory memory;
    topic_config config = test_topic("resumed", capacity, 2, 1);
    config.first_offset = first;
    topic t(config, memory);
    const topic_view& v = t.view();
    CHECK(t.published_mark() == first);
    for (std::uint64_t o = first; o < first + capacity; ++o) CHECK(v.slot_free(o));
    CHECK_FALSE(v.slot_free(first + capacity));
    std::atomic<bool> abort{false};
    constexpr std::uint64_t frames = 3 * capacity + 1;
    for (std::uint64_t n = 0; n < frames; ++n) {
      const publish_ticket ticket = reserve_claimed(v, "resumed", abort);
      REQUIRE(ticket.offset == first + n);
      ticket.data[0] = static_cast<std::byte>(n);
      publish_frame(v, ticket, 1, ticket.offset);
      for (std::uint32_t g = 0; g < 2; ++g) {
        const delivery d = next_frame(v, g, abort);
        REQUIRE_FALSE(d.ended);
        CHECK(d.offset == first + n);
        CHECK(d.data(v)[0] == static_cast<std::byte>(n));
        v.release(g, d.offset);
      }
    }
    v.close(first + frames);
    for (std::uint32_t g = 0; g < 2; ++g) CHECK(next_frame(v, g, abort).ended);
    CHECK(t.frames_in_use() == capacity);
  }
  // Neither a publisher that publishes nothing nor a close below the first offset ends it before it.
  host_topic_memory memory;
  topic_config config = test_topic("resumed_empty", 2, 1, 1);
  config.first_offset = 9;
  config.group_items_per_offset = {3};
  topic t(config, memory);
  const topic_view& v = t.view();
  v.close(0);
  CHECK(v.end() == 9);
  CHECK(v.take(0) == 27);  // a group that takes three items an offset starts at item 9 · 3
}
