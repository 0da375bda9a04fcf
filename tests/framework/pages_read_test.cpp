// The page choice of a columnar topic's readers: the union of their pages, and readers whose index keeps
// everything resting (framework/model/pages_read.hpp).
#include "framework/model/pages_read.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <thread>

namespace xf {
namespace {

/// A page reader of frames of 8 pages: the index is page 0, its column pages 1-7, and `keeps` says how
/// many of those its index keeps. Counts how often it read the index.
class counting_reader final : public host_kernel_op {
 public:
  std::atomic<std::uint32_t> keeps{7};
  mutable std::atomic<std::uint64_t> index_reads{0};

  void run(const frame_call&, element_type, std::uint32_t, std::uint32_t) const override {}
  bool reads_pages() const override { return true; }
  void pages_read(const std::byte*, std::vector<frame_range>& out) const override {
    index_reads.fetch_add(1);
    out.push_back({0, 4096 * (1 + std::uint64_t{keeps.load()})});
  }
  bool pages_bound(const std::byte*, std::vector<frame_range>& out) const override {
    out.push_back({0, 4096 * 8});
    return true;
  }
};

std::uint64_t bytes_chosen(const frame_selector& select) {
  std::vector<frame_range> out;
  select(nullptr, out);
  std::uint64_t sum = 0;
  for (const frame_range& r : out) sum += r.bytes;
  return sum;
}

}  // namespace

TEST_CASE("pages_read.a_reader_whose_index_keeps_everything_rests_and_probes") {
  counting_reader reader;
  const frame_selector select = pages_read_by({&reader}, 16);
  for (int f = 0; f < 16; ++f) CHECK(bytes_chosen(select) == 8 * 4096);
  CHECK(reader.index_reads == 16);
  // Resting: the columns whole, the index read once in index_probe_every frames.
  for (std::uint32_t f = 0; f < 10 * index_probe_every; ++f) CHECK(bytes_chosen(select) == 8 * 4096);
  CHECK(reader.index_reads == 16 + 10);
  // The index starts to help: the next probe wakes the reader, which reads every frame's index again.
  reader.keeps = 1;
  std::uint32_t taken_whole = 0;
  for (std::uint32_t f = 0; f < index_probe_every; ++f) taken_whole += bytes_chosen(select) == 8 * 4096;
  CHECK(taken_whole == index_probe_every - 1);
  const std::uint64_t reads = reader.index_reads;
  for (int f = 0; f < 100; ++f) CHECK(bytes_chosen(select) == 2 * 4096);
  CHECK(reader.index_reads == reads + 100);
}

TEST_CASE("pages_read.an_index_that_leaves_enough_behind_is_read_for_every_frame") {
  counting_reader reader;
  reader.keeps = 6;  // leaves 1 page of 8 behind: an eighth, more than index_helps_share's sixteenth
  const frame_selector select = pages_read_by({&reader}, 4);
  for (int f = 0; f < 200; ++f) CHECK(bytes_chosen(select) == 7 * 4096);
  CHECK(reader.index_reads == 200);
}

TEST_CASE("pages_read.rest_zero_reads_every_index_and_readers_rest_apart") {
  counting_reader never, barren, helpful;
  helpful.keeps = 2;
  const frame_selector all = pages_read_by({&never}, 0);
  for (int f = 0; f < 500; ++f) bytes_chosen(all);
  CHECK(never.index_reads == 500);
  // Two readers: the union, joined; one rests while the other keeps reading its index.
  const frame_selector both = pages_read_by({&barren, &helpful}, 8);
  for (int f = 0; f < 8 + 64; ++f) {
    std::vector<frame_range> out;
    both(nullptr, out);
    REQUIRE(out.size() == 1);
    CHECK(out[0].bytes == 8 * 4096);
  }
  CHECK(barren.index_reads == 8 + 2);
  CHECK(helpful.index_reads == 8 + 64);
}

TEST_CASE("pages_read.threads_choosing_at_once_rest_and_take_every_page") {
  counting_reader reader;
  const frame_selector select = pages_read_by({&reader}, 16);
  std::atomic<std::uint64_t> wrong{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&] {
      for (int f = 0; f < 20000; ++f) wrong += bytes_chosen(select) != 8 * 4096;
    });
  for (auto& t : threads) t.join();
  CHECK(wrong == 0);
  // 80 000 frames: the first 16 or so, then about one in index_probe_every.
  CHECK(reader.index_reads < 16 + 4 + 80000 / index_probe_every + 64);
}

}  // namespace xf
