// The doorbell ring between blocks and I/O threads (framework/files/request_ring.hpp): order, full and
// empty, and many producers and consumers at once with every request taken exactly once.
#include "framework/files/request_ring.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace {

struct ring_under_test {
  std::vector<xf::request_ring_cell> cells;
  std::uint64_t head = 0, tail = 0;
  xf::request_ring_view view;

  explicit ring_under_test(std::uint64_t capacity)
      : cells(capacity), view{cells.data(), capacity, &head, &tail} {
    xf::reset_request_ring(view);
  }
};

}  // namespace

TEST_CASE("request_ring.first_in_first_out_until_full_then_empty") {
  ring_under_test r(4);
  std::uint32_t slot = 0;
  CHECK_FALSE(xf::try_pop_request(r.view, &slot));
  for (std::uint32_t s = 10; s < 14; ++s) CHECK(xf::try_push_request(r.view, s));
  CHECK_FALSE(xf::try_push_request(r.view, 99));  // four rung, none read
  for (std::uint32_t s = 10; s < 14; ++s) {
    REQUIRE(xf::try_pop_request(r.view, &slot));
    CHECK(slot == s);
  }
  CHECK_FALSE(xf::try_pop_request(r.view, &slot));
  // Round after round over the same cells.
  for (std::uint32_t round = 0; round < 100; ++round) {
    CHECK(xf::try_push_request(r.view, round));
    CHECK(xf::try_push_request(r.view, round + 1000));
    REQUIRE(xf::try_pop_request(r.view, &slot));
    CHECK(slot == round);
    REQUIRE(xf::try_pop_request(r.view, &slot));
    CHECK(slot == round + 1000);
  }
}

TEST_CASE("request_ring.producer_that_has_not_written_its_cell_holds_back_consumers_not_the_ring") {
  // A consumer never reads a cell past one still being written: positions are taken in order.
  ring_under_test r(2);
  std::uint32_t slot = 0;
  REQUIRE(xf::try_push_request(r.view, 1));
  REQUIRE(xf::try_pop_request(r.view, &slot));
  // Simulate a producer that took position 1 and stalls before writing: advance head by hand.
  r.head = 2;
  CHECK_FALSE(xf::try_pop_request(r.view, &slot));  // position 1 not written: nothing to take
  // The producer of position 2 finds cell 0 free (its round-1 consumer read it) and rings.
  CHECK(xf::try_push_request(r.view, 7));
  CHECK_FALSE(xf::try_push_request(r.view, 8));  // cell 1 still waits for position 1's producer
  CHECK_FALSE(xf::try_pop_request(r.view, &slot));
  // The stalled producer writes position 1 at last.
  r.cells[1].request_slot = 5;
  std::atomic_ref<std::uint64_t>(r.cells[1].seq).store(2, std::memory_order_release);
  REQUIRE(xf::try_pop_request(r.view, &slot));
  CHECK(slot == 5);
  REQUIRE(xf::try_pop_request(r.view, &slot));
  CHECK(slot == 7);
}

TEST_CASE("request_ring.many_blocks_and_io_threads_take_every_request_once") {
  // 6 producers (blocks) ring 20000 requests each through 16 cells; 3 consumers take them. Each request's
  // payload is written before its push and checked after its pop.
  constexpr std::uint32_t producers = 6, consumers = 3, per_producer = 20000;
  ring_under_test r(16);
  std::vector<std::uint64_t> payload(producers * per_producer);
  std::vector<std::atomic<std::uint32_t>> taken(payload.size());
  std::atomic<std::uint64_t> done{0}, bad{0};
  std::vector<std::thread> threads;
  for (std::uint32_t p = 0; p < producers; ++p)
    threads.emplace_back([&, p] {
      for (std::uint32_t i = 0; i < per_producer; ++i) {
        const std::uint32_t slot = p * per_producer + i;
        payload[slot] = slot * 3 + 1;
        while (!xf::try_push_request(r.view, slot)) std::this_thread::yield();
      }
    });
  for (std::uint32_t c = 0; c < consumers; ++c)
    threads.emplace_back([&] {
      std::uint32_t slot = 0;
      while (done.load() < payload.size()) {
        if (!xf::try_pop_request(r.view, &slot)) {
          std::this_thread::yield();
          continue;
        }
        if (slot >= payload.size() || payload[slot] != std::uint64_t{slot} * 3 + 1) bad.fetch_add(1);
        if (slot < payload.size()) taken[slot].fetch_add(1);
        done.fetch_add(1);
      }
    });
  for (auto& t : threads) t.join();
  CHECK(bad.load() == 0);
  std::uint64_t once = 0;
  for (auto& t : taken) once += t.load() == 1;
  CHECK(once == payload.size());
  std::uint32_t slot = 0;
  CHECK_FALSE(xf::try_pop_request(r.view, &slot));
  CHECK(r.head == payload.size());
  CHECK(r.tail == payload.size());
}
