// The blocking driver's steps one at a time, on one thread: ticket life cycle, deliveries, errors and
// the waited-time counters.
#include <doctest/doctest.h>

#include <string>

#include "tests/support/topic_fixture.hpp"
#include "topics/topic_driver.hpp"

namespace {

using namespace xf;
using namespace xf::test;

}  // namespace

TEST_CASE("topic_driver.publish_then_deliver") {
  host_topic_memory memory;
  topic t(test_topic("one", 2, 1, 1), memory);
  const topic_view& v = t.view();
  std::atomic<bool> abort{false};
  std::uint64_t blocked_ns = 0, waited_ns = 0;

  const publish_ticket ticket = reserve_claimed(v, "one", abort, &blocked_ns);
  CHECK(ticket.offset == 0);
  REQUIRE(ticket.has_frame());
  CHECK(ticket.data == v.frame_data(ticket.frame));
  CHECK(t.frames_in_use() == 1);
  write_frame(ticket.data, v.frame_bytes, 0, 1);
  publish_frame(v, ticket, 100, 42);
  v.close(1);

  const delivery d = next_frame(v, 0, abort, &waited_ns);
  CHECK_FALSE(d.ended);
  CHECK(d.offset == 0);
  REQUIRE(d.slot != nullptr);
  CHECK_FALSE(d.is_void());
  CHECK(d.slot->bytes == 100);
  CHECK(d.slot->tag == 42);
  CHECK(frame_matches(d.data(v), v.frame_bytes, 0, 1));
  v.release(0, d.offset);

  const delivery last = next_frame(v, 0, abort, &waited_ns);
  CHECK(last.ended);
  CHECK(last.offset == 1);
  CHECK(last.slot == nullptr);
  CHECK(last.data(v) == nullptr);
  CHECK(blocked_ns == 0);  // nothing had to wait
  CHECK(waited_ns == 0);
}

TEST_CASE("topic_driver.publish_void_returns_the_frame") {
  host_topic_memory memory;
  topic t(test_topic("voids", 2, 1, 1), memory);
  const topic_view& v = t.view();
  std::atomic<bool> abort{false};

  const publish_ticket claimed = reserve_claimed(v, "voids", abort);
  CHECK(t.frames_in_use() == 1);
  publish_void(v, claimed);  // a source that claimed, then found its input ended
  CHECK(t.frames_in_use() == 0);

  const publish_ticket passed_on = reserve_void_at(v, 1, abort);  // a 1:1 operator passing a void on
  CHECK_FALSE(passed_on.has_frame());
  CHECK(passed_on.data == nullptr);
  CHECK(t.frames_in_use() == 0);
  publish_void(v, passed_on);
  v.close(2);

  for (std::uint64_t o = 0; o < 2; ++o) {
    const delivery d = next_frame(v, 0, abort);
    CHECK(d.offset == o);
    CHECK(d.is_void());
    CHECK(d.data(v) == nullptr);
    v.release(0, d.offset);
  }
  CHECK(next_frame(v, 0, abort).ended);
}

TEST_CASE("topic_driver.reserve_reclaims_the_previous_frame") {
  host_topic_memory memory;
  topic t(test_topic("reuse", 1, 1, 1), memory);
  const topic_view& v = t.view();
  std::atomic<bool> abort{false};
  for (std::uint64_t o = 0; o < 10; ++o) {
    const publish_ticket ticket = reserve_at(v, "reuse", o, abort);
    CHECK(ticket.offset == o);
    CHECK(ticket.frame == 0);  // one slot, one frame: always the same one
    CHECK(t.frames_in_use() == 1);
    write_frame(ticket.data, v.frame_bytes, o, 3);
    publish_frame(v, ticket, 64, o);
    const delivery d = next_frame(v, 0, abort);
    CHECK(d.offset == o);
    CHECK(frame_matches(d.data(v), v.frame_bytes, o, 3));
    v.release(0, d.offset);
  }
}

TEST_CASE("topic_driver.broken_heap_invariant_names_the_topic") {
  host_topic_memory memory;
  topic t(test_topic("leaky", 2, 1, 1), memory);
  const topic_view& v = t.view();
  std::atomic<bool> abort{false};
  // Leak every frame of the heap: the invariant "one frame per slot" no longer holds.
  CHECK(v.alloc_frame(0) != no_frame);
  CHECK(v.alloc_frame(0) != no_frame);
  CHECK(v.alloc_frame(0) == no_frame);
  std::string message;
  try {
    reserve_claimed(v, "leaky", abort);
  } catch (const precondition_error& e) {
    message = e.what();
  }
  CHECK(message.find("topic 'leaky'") != std::string::npos);
  CHECK(message.find("offset 0") != std::string::npos);
}

TEST_CASE("topic_driver.publish_frame_rejects_a_void_ticket") {
  host_topic_memory memory;
  topic t(test_topic("void_ticket", 1, 1, 1), memory);
  std::atomic<bool> abort{false};
  const publish_ticket ticket = reserve_void_at(t.view(), 0, abort);
  CHECK_THROWS_AS(publish_frame(t.view(), ticket, 64, 0), precondition_error);
}

// The abort flag unwinds waits only: a step that need not wait completes, so a worker that is already
// past its last wait finishes its frame cleanly.
TEST_CASE("topic_driver.abort_only_interrupts_waits") {
  host_topic_memory memory;
  topic t(test_topic("aborting", 1, 1, 1), memory);
  const topic_view& v = t.view();
  std::atomic<bool> abort{true};
  const publish_ticket ticket = reserve_claimed(v, "aborting", abort);
  publish_frame(v, ticket, 64, 0);
  const delivery d = next_frame(v, 0, abort);
  CHECK(d.offset == 0);
  CHECK_FALSE(d.ended);
  // Offset 1 is not released-for yet (group 0 still holds 0) and offset 1 is not published: both wait.
  CHECK_THROWS_AS(reserve_claimed(v, "aborting", abort), run_aborted);
  CHECK_THROWS_AS(next_frame(v, 0, abort), run_aborted);
}
