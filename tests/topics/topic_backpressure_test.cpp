// Backpressure and abort: a stalled group holds publishers back at exactly `capacity` offsets ahead of
// it (the heap never holds more than `capacity` frames) until it resumes; a run abort unwinds every
// blocked publisher and subscriber. Only generous bounds on time: the point is that waits return.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "framework/core/backoff.hpp"
#include "tests/support/topic_fixture.hpp"
#include "topics/topic_driver.hpp"

namespace {

using namespace xf;
using namespace xf::test;
using std::chrono::steady_clock;

constexpr std::uint64_t backpressure_salt = 0xbac;

void run_stalled_group(std::uint32_t capacity) {
  CAPTURE(capacity);
  constexpr std::uint32_t publishers = 3;
  const std::uint64_t stall_at = 500;  // the slow group stops after releasing offsets [0, stall_at)
  const std::uint64_t frames = stall_at + capacity + stress_frames(20'000);
  const std::uint64_t end = frames + publishers;
  host_topic_memory memory;
  topic t(test_topic("backpressure", capacity, 2, publishers), memory);
  const topic_view& v = t.view();
  std::atomic<bool> abort{false}, gate{false}, done{false};
  failure_log failures;
  std::atomic<std::uint64_t> published{0}, slow_released{0}, fast_seen{0}, blocked_ns{0}, samples{0};
  std::vector<offset_ledger> delivered;
  delivered.emplace_back(end + 64);
  delivered.emplace_back(end + 64);
  bool joined = false;
  {
    worker_team team(abort, failures);
    for (std::uint32_t p = 0; p < publishers; ++p) {
      const std::string who = "publisher " + std::to_string(p);
      team.spawn(who, [&, p] {
        rng r(p);
        std::uint64_t mine_blocked = 0;
        while (true) {
          const publish_ticket ticket = reserve_claimed(v, "backpressure", abort, &mine_blocked);
          if (ticket.offset >= frames) {
            publish_void(v, ticket);
            v.close(ticket.offset + 1);
            break;
          }
          write_frame(ticket.data, v.frame_bytes, ticket.offset, backpressure_salt);
          r.maybe_yield(8);
          publish_frame(v, ticket, 64, ticket.offset);
          published.fetch_add(1);  // after the publish: the watcher's count never runs ahead
        }
        blocked_ns += mine_blocked;
      });
    }
    auto subscriber = [&](std::uint32_t g, const std::string& who) {
      while (true) {
        const delivery d = next_frame(v, g, abort);
        if (d.ended) return;
        if (delivered[g].mark(d.offset) != 0) failures.add(who + ": " + std::to_string(d.offset) + " twice");
        if (d.offset < frames && !frame_matches(d.data(v), v.frame_bytes, d.offset, backpressure_salt))
          failures.add(who + ": offset " + std::to_string(d.offset) + " content wrong");
        if (g == 1) {
          const std::uint64_t released = slow_released.fetch_add(1) + 1;  // before the release
          v.release(g, d.offset);
          if (released == stall_at) wait_until([&] { return gate.load(); }, abort);
        } else {
          v.release(g, d.offset);
          fast_seen.fetch_add(1);
        }
      }
    };
    team.spawn("fast group", [&] { subscriber(0, "fast group"); });
    team.spawn("slow group", [&] { subscriber(1, "slow group"); });
    team.spawn("watcher", [&] {
      while (!done.load() && !abort.load()) {
        // Published first, released second: released only grows, so p ≤ r + capacity must hold.
        const std::uint64_t p = published.load(), r = slow_released.load();
        if (p > r + capacity)
          failures.add("watcher: " + std::to_string(p) + " published with " + std::to_string(r) +
                       " released");
        const std::uint32_t in_use = t.frames_in_use();
        if (in_use > capacity) failures.add("watcher: " + std::to_string(in_use) + " frames in use");
        samples.fetch_add(1);
        std::this_thread::yield();
      }
    });

    // The slow group stalls; publishers fill the `capacity` slots ahead of it, then must block.
    const std::uint64_t ahead = stall_at + capacity;
    CHECK(wait_for([&] { return fast_seen.load() == ahead && published.load() == ahead; }, abort));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // room to misbehave, if they could
    CHECK(published.load() == ahead);
    CHECK(fast_seen.load() == ahead);
    CHECK(slow_released.load() == stall_at);
    CHECK(t.frames_in_use() == capacity);
    CHECK(v.poll(ahead) == poll_result::pending);
    gate.store(true);  // resume: everything drains
    CHECK(wait_for([&] { return delivered[1].marked(end - 1) && delivered[0].marked(end - 1); }, abort));
    done.store(true);
    joined = team.join();
  }
  CHECK_MESSAGE(failures.count() == 0, failures.str());
  REQUIRE(joined);
  CHECK(published.load() == frames);
  CHECK(delivered[0].exactly_once(end) == "");
  CHECK(delivered[1].exactly_once(end) == "");
  CHECK(blocked_ns.load() > 0);  // publishers did wait (no bound on how long)
  CHECK(samples.load() > 0);
}

/// Runs `blocked` on a thread, sets the abort flag once the thread is deep in its wait, and returns
/// how long the thread took to unwind with run_aborted (fails if it unwound any other way).
steady_clock::duration unwind_time(std::atomic<bool>& abort, const std::function<void()>& blocked) {
  failure_log failures;
  std::atomic<bool> aborted{false};
  std::atomic<steady_clock::rep> returned_at{0};
  worker_team team(abort, failures);
  team.spawn("blocked", [&] {
    try {
      blocked();
      failures.add("returned without run_aborted");
    } catch (const run_aborted&) {
      aborted.store(true);
    }
    returned_at.store(steady_clock::now().time_since_epoch().count());
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // past spinning and yielding: sleeping
  CHECK(team.finished() == 0);
  const auto set_at = steady_clock::now();
  abort.store(true);
  const bool joined = team.join(std::chrono::seconds(30));
  CHECK_MESSAGE(failures.count() == 0, failures.str());
  REQUIRE(joined);
  CHECK(aborted.load());
  return steady_clock::duration(returned_at.load()) - set_at.time_since_epoch();
}

}  // namespace

TEST_CASE("topic.publish_blocks_when_full") {
  for (std::uint32_t capacity : {1u, 4u, 65u}) run_stalled_group(capacity);
}

TEST_CASE("topic.abort_unblocks_a_blocked_publisher") {
  host_topic_memory memory;
  topic t(test_topic("full", 1, 1, 1), memory);
  const topic_view& v = t.view();
  std::atomic<bool> abort{false};
  publish_frame(v, reserve_claimed(v, "full", abort), 64, 0);  // nobody takes it: offset 1 must wait
  const auto took = unwind_time(abort, [&] { reserve_claimed(v, "full", abort); });
  MESSAGE("publisher unwound " << std::chrono::duration<double, std::milli>(took).count()
                               << " ms after abort");
  CHECK(took < std::chrono::seconds(5));
}

TEST_CASE("topic.abort_unblocks_a_blocked_subscriber") {
  host_topic_memory memory;
  topic t(test_topic("empty", 1, 1, 1), memory);
  const topic_view& v = t.view();
  std::atomic<bool> abort{false};
  const auto took = unwind_time(abort, [&] { next_frame(v, 0, abort); });
  MESSAGE("subscriber unwound " << std::chrono::duration<double, std::milli>(took).count()
                                << " ms after abort");
  CHECK(took < std::chrono::seconds(5));
}

TEST_CASE("topic.abort_unwinds_every_worker") {
  // A group stalls holding an offset: publishers block on backpressure, the other group on frames that
  // never come. One abort unwinds them all.
  host_topic_memory memory;
  topic t(test_topic("stuck", 2, 2, 3), memory);
  const topic_view& v = t.view();
  std::atomic<bool> abort{false};
  failure_log failures;
  std::atomic<std::uint64_t> unwound{0};
  worker_team team(abort, failures);
  team.expect_abort();
  auto counted = [&](std::function<void()> body) {
    return [&unwound, body = std::move(body)] {
      try {
        body();
      } catch (const run_aborted&) {
        unwound.fetch_add(1);
        throw;
      }
    };
  };
  for (int p = 0; p < 3; ++p)
    team.spawn("publisher", counted([&] {
                 while (true) publish_frame(v, reserve_claimed(v, "stuck", abort), 64, 0);
               }));
  for (std::uint32_t w = 0; w < 2; ++w)
    team.spawn("reader", counted([&] {
                 while (true) {
                   const delivery d = next_frame(v, 0, abort);
                   if (d.ended) return;
                   v.release(0, d.offset);
                 }
               }));
  team.spawn("holder", counted([&] {
               const delivery d = next_frame(v, 1, abort);  // takes offset 0 and never releases it
               if (d.ended) failures.add("holder: ended at once");
               wait_until([] { return false; }, abort);
             }));
  CHECK(wait_for([&] { return v.poll(1) == poll_result::ready; }, abort));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(team.finished() == 0);
  abort.store(true);
  const bool joined = team.join(std::chrono::seconds(30));
  CHECK_MESSAGE(failures.count() == 0, failures.str());
  REQUIRE(joined);
  CHECK(unwound.load() == 6);
}
