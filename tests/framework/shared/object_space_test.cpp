// Shared objects over the host accelerator: under every protocol, writes from several threads survive
// calls and syncs (the host copy always equals a reference that applies the same writes and "kernels"),
// lazy update moves only what the CPU touched, and rolling update flushes its oldest dirty block early.
#include "framework/shared/object_space.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include <unistd.h>

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

TEST_CASE("object_space.bulk_calls_move_whole_ranges_without_faults") {
  for (protocol p : {protocol::batch, protocol::lazy, protocol::rolling}) {
    CAPTURE(name_of(p));
    host_accelerator device;
    object_space space(device, small_blocks(p));
    const std::size_t bytes = 10 * block + 100;
    auto* a = static_cast<unsigned char*>(space.allocate(bytes));
    auto* b = static_cast<unsigned char*>(space.allocate(bytes));
    std::vector<unsigned char> ref_a(bytes, 0), ref_b(bytes, 0);
    // The "kernel" adds 1 to both, so the accelerator's copies differ from what the host last saw.
    space.call([&] { add_on_accelerator(space, {{a, bytes}, {b, bytes}}, 1); });
    space.sync();
    for (auto& v : ref_a) v = 1;
    for (auto& v : ref_b) v = 1;
    const object_space_counters before = space.counters();

    // memset over whole ranges: nothing fetched under lazy update; a partial range is fetched first.
    space.memset(a, 9, 4 * block);
    std::memset(ref_a.data(), 9, 4 * block);
    space.memset(a + 5 * block + 10, 7, 20);
    std::memset(ref_a.data() + 5 * block + 10, 7, 20);
    // memcpy in every direction: plain to object, object to object, object to plain.
    std::vector<unsigned char> plain(3 * block + 5);
    for (std::size_t i = 0; i < plain.size(); ++i) plain[i] = static_cast<unsigned char>(i * 7);
    space.memcpy(b + 17, plain.data(), plain.size());
    std::memcpy(ref_b.data() + 17, plain.data(), plain.size());
    space.memcpy(a + 6 * block, b, 2 * block);
    std::memcpy(ref_a.data() + 6 * block, ref_b.data(), 2 * block);
    std::vector<unsigned char> back(bytes);
    space.memcpy(back.data(), a, bytes);
    CHECK(back == ref_a);
    const object_space_counters after = space.counters();
    CHECK(after.faults == before.faults);  // the library's view: no fault per page
    if (p == protocol::lazy) {
      // Lazy ranges are whole objects: the partial memset fetched a (once), the partial memcpy into b
      // fetched b (once); the whole-range memset fetched nothing.
      CHECK(after.bytes_to_host - before.bytes_to_host == 2 * ((bytes + 4095) / 4096 * 4096));
    }
    // The host's writes reach the "kernel", and the kernel's results come back.
    space.call([&] { add_on_accelerator(space, {{a, bytes}, {b, bytes}}, 2); });
    space.sync();
    for (auto& v : ref_a) v = static_cast<unsigned char>(v + 2);
    for (auto& v : ref_b) v = static_cast<unsigned char>(v + 2);
    CHECK(std::memcmp(a, ref_a.data(), bytes) == 0);
    CHECK(std::memcmp(b, ref_b.data(), bytes) == 0);
    CHECK_THROWS_AS(space.memset(a + bytes - 10, 0, 11), std::invalid_argument);
    space.release(a);
    space.release(b);
  }
}

TEST_CASE("object_space.files_read_into_and_written_from_objects") {
  for (protocol p : {protocol::batch, protocol::lazy, protocol::rolling}) {
    CAPTURE(name_of(p));
    host_accelerator device;
    object_space space(device, small_blocks(p));
    const std::size_t bytes = 6 * block;
    auto* o = static_cast<unsigned char*>(space.allocate(bytes));
    space.call([&] { add_on_accelerator(space, {{o, bytes}}, 3); });  // the accelerator's copy: all 3
    space.sync();
    char path[] = "/tmp/xeflow-shared-file-XXXXXX";
    const int fd = ::mkstemp(path);
    REQUIRE(fd >= 0);
    ::unlink(path);
    std::vector<unsigned char> data(2 * block + 50);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 13 + 1);
    REQUIRE(::pwrite(fd, data.data(), data.size(), 0) == static_cast<ssize_t>(data.size()));
    // Asks for 4 blocks from offset 0 into the object at block 1: the file ends 2 blocks + 50 bytes in.
    CHECK(space.read_file(fd, o + block, 4 * block, 0) == data.size());
    std::vector<unsigned char> want(bytes, 3);
    std::memcpy(want.data() + block, data.data(), data.size());
    CHECK(std::memcmp(o, want.data(), bytes) == 0);  // past the file's end the object kept its bytes
    // And back out: the object's first 3 blocks to the file at offset 100.
    CHECK(space.write_file(fd, o, 3 * block, 100) == 3 * block);
    std::vector<unsigned char> file(3 * block);
    REQUIRE(::pread(fd, file.data(), file.size(), 100) == static_cast<ssize_t>(file.size()));
    CHECK(std::memcmp(file.data(), want.data(), file.size()) == 0);
    ::close(fd);
    space.release(o);
  }
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
