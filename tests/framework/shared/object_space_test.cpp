// Shared objects over the host accelerator: under every protocol, writes from several threads survive
// calls and syncs (the host copy always equals a reference that applies the same writes and "kernels"),
// lazy update moves only what the CPU touched, and rolling update flushes its oldest dirty block early.
#include "framework/shared/object_space.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

namespace xf::shared {
namespace {

constexpr std::size_t block = 4096;

object_space_options small_blocks(protocol p) {
  object_space_options o;
  o.default_protocol = p;
  o.block_bytes = block;
  o.rolling_step = 2;
  return o;
}

/// The "kernel": adds `delta` to every byte of each object's accelerator copy.
void add_on_accelerator(object_space& space,
                        const std::vector<std::pair<unsigned char*, std::size_t>>& objects,
                        unsigned char delta) {
  for (const auto& [host, bytes] : objects) {
    auto* copy = static_cast<unsigned char*>(space.accelerator_address(host));
    for (std::size_t i = 0; i < bytes; ++i) copy[i] = static_cast<unsigned char>(copy[i] + delta);
  }
}

/// An accelerator whose transfers may not be made in signal context (as a GPU's): a fault hands them to
/// the space's transfer agent, whose thread this one knows from bind_thread().
class agent_only_accelerator final : public accelerator {
 public:
  void* allocate(std::size_t bytes) override { return inner_.allocate(bytes); }
  void release(void* copy) noexcept override { inner_.release(copy); }
  void to_accelerator(void* copy, const void* host, std::size_t bytes) override {
    count();
    inner_.to_accelerator(copy, host, bytes);
  }
  void finish_to_accelerator() override { count(); }
  void to_host(void* host, const void* copy, std::size_t bytes) override {
    count();
    inner_.to_host(host, copy, bytes);
  }
  bool transfers_signal_safe() const override { return false; }
  void bind_thread() override { agent_.store(std::this_thread::get_id()); }
  int by_agent() const { return by_agent_.load(); }

 private:
  void count() {
    if (std::this_thread::get_id() == agent_.load()) by_agent_.fetch_add(1);
  }
  host_accelerator inner_;
  std::atomic<std::thread::id> agent_{};
  std::atomic<int> by_agent_{0};
};

void every_write_survives(accelerator& device, protocol p, unsigned rounds) {
  {
    object_space space(device, small_blocks(p));
    const std::vector<std::size_t> sizes = {100 * 1024 + 3, 1, 37 * 1024};
    std::vector<std::pair<unsigned char*, std::size_t>> objects;
    std::vector<std::vector<unsigned char>> reference;
    for (std::size_t bytes : sizes) {
      objects.emplace_back(static_cast<unsigned char*>(space.allocate(bytes)), bytes);
      reference.emplace_back(bytes, 0);
    }
    const unsigned threads = 4;
    for (unsigned round = 0; round < rounds; ++round) {
      CAPTURE(round);
      // Every thread writes its own bytes (index % threads) in a random order, and reads others' back.
      std::vector<std::thread> workers;
      std::vector<int> wrong(threads, 0);
      for (unsigned t = 0; t < threads; ++t)
        workers.emplace_back([&, t] {
          std::mt19937_64 rng(round * 131 + t);
          for (int n = 0; n < 3000; ++n) {
            const std::size_t o = rng() % objects.size();
            const std::size_t mine =
                (objects[o].second + threads - 1 - t) / threads;  // bytes i % threads == t
            if (mine == 0) continue;
            const std::size_t i = (rng() % mine) * threads + t;
            if (objects[o].first[i] != reference[o][i]) ++wrong[t];  // a read first: the kernel's result
            const auto v = static_cast<unsigned char>(rng());
            objects[o].first[i] = v;
            reference[o][i] = v;
          }
        });
      for (auto& w : workers) w.join();
      for (unsigned t = 0; t < threads; ++t) CHECK(wrong[t] == 0);
      space.call([&] { add_on_accelerator(space, objects, 3); });
      for (auto& r : reference)
        for (auto& v : r) v = static_cast<unsigned char>(v + 3);
      space.sync();
    }
    for (std::size_t o = 0; o < objects.size(); ++o)
      CHECK(std::memcmp(objects[o].first, reference[o].data(), objects[o].second) == 0);
    for (auto& [host, bytes] : objects) space.release(host);
  }
}

TEST_CASE("object_space.every_protocol_keeps_every_write_across_calls_and_syncs") {
  for (protocol p : {protocol::batch, protocol::lazy, protocol::rolling}) {
    CAPTURE(name_of(p));
    host_accelerator device;
    every_write_survives(device, p, 4);
  }
}

TEST_CASE("object_space.faults_hand_transfers_that_are_not_signal_safe_to_the_agent") {
  for (protocol p : {protocol::batch, protocol::lazy, protocol::rolling}) {
    CAPTURE(name_of(p));
    agent_only_accelerator device;
    every_write_survives(device, p, 2);  // each fault's hand-off costs two context switches
    // Batch update never faults; the others fetch invalid ranges (and rolling update flushes early)
    // from the fault handler, which may not call this accelerator itself.
    if (p == protocol::batch)
      CHECK(device.by_agent() == 0);
    else
      CHECK(device.by_agent() > 0);
  }
}

TEST_CASE("object_space.lazy_update_moves_only_what_the_cpu_touched") {
  host_accelerator device;
  object_space space(device, small_blocks(protocol::lazy));
  auto* a = static_cast<unsigned char*>(space.allocate(64 * 1024));
  auto* b = static_cast<unsigned char*>(space.allocate(64 * 1024));
  CHECK(a[5] == 0);  // read_only after allocation: no fault, nothing moves
  CHECK(space.counters().faults == 0);
  a[5] = 1;  // a write fault: a is dirty
  space.call([] {});
  CHECK(space.counters().bytes_to_accelerator == 64 * 1024);  // a only
  space.sync();
  CHECK(space.counters().bytes_to_host == 0);  // nothing comes back before the CPU asks
  CHECK(b[7] == 0);                            // b comes back, whole
  CHECK(space.counters().bytes_to_host == 64 * 1024);
  CHECK(a[5] == 1);
  CHECK(space.counters().bytes_to_host == 2 * 64 * 1024);
  b[7] = 2;
  space.call([] {});
  CHECK(space.counters().bytes_to_accelerator == 2 * 64 * 1024);  // b only: a was only read
  CHECK(space.counters().faults == 4);
}

TEST_CASE("object_space.batch_update_moves_everything_every_time") {
  host_accelerator device;
  object_space space(device, small_blocks(protocol::batch));
  auto* a = static_cast<unsigned char*>(space.allocate(3 * block));
  space.allocate(block);
  space.call([] {});
  space.sync();
  space.call([] {});
  space.sync();
  CHECK(space.counters().bytes_to_accelerator == 2 * 4 * block);
  CHECK(space.counters().bytes_to_host == 2 * 4 * block);
  CHECK(space.counters().faults == 0);
  a[0] = 1;
  CHECK(a[0] == 1);
}

TEST_CASE("object_space.rolling_update_flushes_its_oldest_dirty_block_early") {
  host_accelerator device;
  object_space space(device, small_blocks(protocol::rolling));
  auto* a = static_cast<unsigned char*>(space.allocate(8 * block));
  CHECK(space.rolling_size() == 2);  // one allocation: one step
  for (std::size_t b = 0; b < 5; ++b) a[b * block] = static_cast<unsigned char>(b + 1);
  CHECK(space.counters().evictions == 3);  // blocks 0, 1, 2 went early
  CHECK(space.counters().bytes_to_accelerator == 3 * block);
  a[0] = 9;  // block 0 is dirty again (read_only after its eviction)
  space.call([] {});
  CHECK(space.counters().bytes_to_accelerator == (3 + 3) * block);  // 3 early, then 4 and 0 at the call
  space.sync();
  CHECK(a[4 * block] == 5);  // one block back, not the object
  CHECK(space.counters().bytes_to_host == block);
  space.allocate(block);
  CHECK(space.rolling_size() == 4);
}

TEST_CASE("object_space.addresses_and_misuse") {
  host_accelerator device;
  object_space space(device, small_blocks(protocol::lazy));
  auto* a = static_cast<unsigned char*>(space.allocate(100));
  CHECK(space.accelerator_address(a + 99) == static_cast<unsigned char*>(space.accelerator_address(a)) + 99);
  CHECK_THROWS_AS(space.accelerator_address(a + 100), std::invalid_argument);
  CHECK_THROWS_AS(space.release(a + 1), std::invalid_argument);
  CHECK_THROWS_AS(space.allocate(0), std::invalid_argument);
  object_space_options bad;
  bad.block_bytes = 1000;
  CHECK_THROWS_AS(object_space(device, bad), std::invalid_argument);
  space.release(a);
  CHECK_THROWS_AS(space.accelerator_address(a), std::invalid_argument);
}

}  // namespace
}  // namespace xf::shared
