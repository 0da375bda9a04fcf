// A topic carried by a bridge (topics/bridge_endpoint.hpp) through a loopback carrier: a writer publishes
// into topic A, a local group and the bridge's group read it; the bridge's receiving end publishes into
// topic B, which fans out to two groups. Every group must see every offset once, in order, with the
// writer's bytes, fields and voids, and the end of stream; the carrier never holds an offset beyond the
// reader's credit. Capacity 1 on either side is the tightest case of the credit and the release.
#include <doctest/doctest.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <vector>

#include "framework/core/backoff.hpp"
#include "tests/support/carried_stream.hpp"
#include "topics/bridge_endpoint.hpp"

namespace {

using namespace xf;
using namespace xf::test;

const carried_stream stream{31};

/// One message of the loopback carrier: a frame (with a copy of its bytes) or the end of stream.
struct carried {
  outgoing_frame frame;
  std::vector<std::byte> bytes;
};

/// The carrier between the two ends: the writer's side pushes, the reader's side pops; the credit goes
/// back as an atomic word. Unbounded as a queue: the credit is what bounds it, and the test checks that.
class loopback {
 public:
  void push(carried c) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(c));
      most_ = std::max(most_, queue_.size());
    }
    ready_.notify_one();
  }
  /// The next message, or nothing when none came within 50 µs.
  std::optional<carried> pop() {
    std::unique_lock lock(mutex_);
    if (queue_.empty()) ready_.wait_for(lock, std::chrono::microseconds(50));
    if (queue_.empty()) return std::nullopt;
    carried c = std::move(queue_.front());
    queue_.pop_front();
    return c;
  }
  std::size_t most_queued() const {
    std::lock_guard lock(mutex_);
    return most_;
  }

  std::atomic<std::uint64_t> credit{0};

 private:
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<carried> queue_;
  std::size_t most_ = 0;
};

struct bridge_case {
  std::uint32_t writer_capacity;
  std::uint32_t reader_capacity;
  std::uint64_t frames;
};

void run_bridge(const bridge_case& c) {
  CAPTURE(c.writer_capacity);
  CAPTURE(c.reader_capacity);
  host_topic_memory memory;
  topic a(test_topic("a", c.writer_capacity, 2, 1), memory);  // group 0 local, group 1 the bridge
  topic b(test_topic("a (bridged)", c.reader_capacity, 2, 1), memory);
  const topic_view &va = a.view(), &vb = b.view();
  std::atomic<bool> abort{false};
  failure_log failures;
  loopback wire;
  std::atomic<std::uint64_t> beyond_credit{0};
  std::uint64_t seen[3] = {};
  {
    worker_team team(abort, failures);
    team.spawn("writer", [&] { stream.publish(va, "a", c.frames, abort); });
    team.spawn("a group 0", [&] { seen[0] = stream.read(va, 0, "a group 0", abort, failures); });
    team.spawn("bridge sender", [&] {
      bridge_sender sender(va, 1);
      rng r(5);
      for (;;) {
        std::optional<outgoing_frame> f;
        wait_until([&] { return (f = sender.next(wire.credit.load())).has_value(); }, abort);
        carried m{*f, {}};
        if (f->data != nullptr) m.bytes.assign(f->data, f->data + f->bytes);
        wire.push(std::move(m));
        if (f->ended) return;
        r.maybe_yield(4);
        sender.sent(f->offset);  // the bytes have left: the writer may reuse the slot
      }
    });
    team.spawn("bridge receiver", [&] {
      bridge_receiver receiver(vb, "a (bridged)");
      for (;;) {
        // The credit goes back as the reader's groups free slots, also while nothing arrives: the writer's
        // side may be waiting for exactly that.
        wire.credit.store(receiver.credit());
        const std::optional<carried> m = wire.pop();
        if (abort.load()) throw run_aborted();
        if (!m) continue;
        if (m->frame.ended) {
          receiver.end(m->frame.offset);
          return;
        }
        if (m->frame.offset >= receiver.credit()) beyond_credit.fetch_add(1);
        if (!m->bytes.empty())
          std::memcpy(receiver.frame_for(m->frame.offset), m->bytes.data(), m->bytes.size());
        receiver.publish(m->frame.offset, m->frame.bytes, m->frame.tag, m->frame.flags, m->frame.born_ns);
      }
    });
    team.spawn("b group 0", [&] { seen[1] = stream.read(vb, 0, "b group 0", abort, failures); });
    team.spawn("b group 1", [&] { seen[2] = stream.read(vb, 1, "b group 1", abort, failures); });
    team.join();
  }
  INFO(failures.str());
  CHECK(failures.count() == 0);
  CHECK(beyond_credit.load() == 0);
  // Frames in the carrier never outnumber the reader's slots (its credit), plus the end message.
  CHECK(wire.most_queued() <= c.reader_capacity + 1);
  for (const std::uint64_t n : seen) CHECK(n == c.frames);
  CHECK(vb.end() == c.frames);
}

}  // namespace

TEST_CASE("topic_bridge.carries_every_offset_in_order_with_its_fields_and_the_end") {
  const std::uint64_t frames = stress_frames(40'000);
  for (const bridge_case c : {bridge_case{8, 8, frames}, bridge_case{1, 1, frames / 4},
                              bridge_case{1, 16, frames / 4}, bridge_case{16, 1, frames / 4}})
    run_bridge(c);
}

TEST_CASE("topic_bridge.an_empty_stream_ends_on_both_sides") {
  run_bridge(bridge_case{4, 4, 0});
}

TEST_CASE("topic_bridge.the_receiver_refuses_what_a_broken_carrier_sends") {
  host_topic_memory memory;
  topic b(test_topic("b", 2, 1, 1), memory);
  bridge_receiver receiver(b.view(), "b");
  CHECK(receiver.credit() == 2);
  CHECK_THROWS_WITH_AS(receiver.frame_for(2), doctest::Contains("outside its credit [0, 2)"),
                       precondition_error);
  CHECK_THROWS_WITH_AS(receiver.publish(1, 8, 1, 0, 0), doctest::Contains("offset 1 where 0 was next"),
                       precondition_error);
  CHECK_THROWS_WITH_AS(receiver.publish(0, 8192, 0, 0, 0),
                       doctest::Contains("8192 bytes into a frame of 4096"), precondition_error);
  receiver.publish(0, 8, 0, 0, 0);
  CHECK_THROWS_WITH_AS(receiver.end(2), doctest::Contains("ended at offset 2 on the writer's side, and 1"),
                       precondition_error);
  // Credit comes back only as the local group releases: offset 2 needs offset 0's slot.
  CHECK(receiver.credit() == 2);
  b.view().release(0, 0);
  CHECK(receiver.credit() == 3);

  topic two_publishers(test_topic("c", 2, 1, 2), memory);
  CHECK_THROWS_WITH_AS(bridge_receiver(two_publishers.view(), "c"), doctest::Contains("only publisher"),
                       precondition_error);
}
