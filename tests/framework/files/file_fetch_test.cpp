// The fetch (framework/files/file_fetch.hpp) over a host-memory cache served by the real I/O threads: misses
// load and later reads hit; the page past a file's end is zeroed; the LRA share is reused; a full share
// makes an item drop its pins and retry; a failed read fails its reader and every later reader of the
// page; and many blocks reading random ranges through a cache smaller than the file see every byte right.
#include "framework/files/file_fetch.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "framework/files/io_service.hpp"
#include "tests/support/scratch_dir.hpp"

namespace xf {
namespace {

std::byte pattern_byte(std::uint32_t file, std::uint64_t i) {
  return static_cast<std::byte>(((i + 977 * file) * 2654435761u) >> 13);
}

std::string write_pattern_file(const test::scratch_dir& dir, std::uint32_t file, std::uint64_t bytes) {
  const std::string path = dir.file("data" + std::to_string(file) + ".bin");
  std::vector<std::byte> data(bytes);
  for (std::uint64_t i = 0; i < bytes; ++i) data[i] = pattern_byte(file, i);
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(bytes));
  return path;
}

template <class T>
using freed = std::unique_ptr<T, decltype(&std::free)>;

template <class T>
freed<T> aligned_array(std::size_t count, std::size_t alignment = 4096) {
  const std::size_t bytes = (count * sizeof(T) + alignment - 1) / alignment * alignment;
  auto* p = static_cast<T*>(std::aligned_alloc(alignment, bytes));
  std::memset(static_cast<void*>(p), 0, bytes);
  return freed<T>(p, std::free);
}

fault_site site_of(std::uint32_t op, std::uint64_t frame_offset) { return {"op" + std::to_string(op), "t", frame_offset}; }

/// A file cache in host memory over `sizes` files: `blocks` blocks with `share` page slots and
/// `requests_per_block` request slots each, 4 KiB pages, served by `io_threads` I/O threads.
struct host_cache_rig {
  test::scratch_dir dir;
  std::vector<std::string> paths;
  file_table files;
  std::vector<std::uint64_t> first_page, sizes;
  freed<page_slot> slots{nullptr, std::free};
  freed<std::byte> pages{nullptr, std::free};
  std::vector<std::uint32_t> table;
  std::vector<request_slot> requests;
  freed<std::byte> staging{nullptr, std::free};
  std::vector<request_ring_cell> cells;
  std::uint64_t head = 0, tail = 0;
  std::vector<fetch_block> blocks;
  file_cache_view view;
  std::unique_ptr<io_service> service;

  struct layout {
    std::vector<std::uint64_t> sizes;
    std::uint32_t blocks = 1, share = 16, requests_per_block = 4, io_threads = 2;
    std::uint64_t staging_bytes = 64 << 10;
  };

  explicit host_cache_rig(const layout& l, const std::function<void(host_cache_rig&)>& before_open = {}) {
    for (std::uint32_t f = 0; f < l.sizes.size(); ++f) paths.push_back(write_pattern_file(dir, f, l.sizes[f]));
    if (before_open) before_open(*this);
    first_page.push_back(0);
    for (std::uint32_t f = 0; f < l.sizes.size(); ++f) {
      files.open(paths[f], site_of(0, 0));
      first_page.push_back(first_page.back() + (l.sizes[f] + 4095) / 4096);
    }
    sizes = l.sizes;
    const std::uint32_t slot_count = l.blocks * l.share;
    slots = aligned_array<page_slot>(slot_count, 64);
    pages = aligned_array<std::byte>(std::size_t{slot_count} * 4096);
    table.assign(first_page.back(), 0);
    const std::uint32_t request_count = l.blocks * l.requests_per_block;
    requests.resize(request_count);
    staging = aligned_array<std::byte>(request_count * l.staging_bytes);
    std::uint64_t cells_needed = 1;
    while (cells_needed < request_count) cells_needed *= 2;
    cells.resize(cells_needed);
    view = {slots.get(), pages.get(), slot_count, 12, table.data(), first_page.data(), sizes.data(),
            static_cast<std::uint32_t>(sizes.size()), requests.data(), staging.get(), l.staging_bytes,
            request_ring_view{cells.data(), cells.size(), &head, &tail}};
    reset_request_ring(view.ring);
    for (std::uint32_t b = 0; b < l.blocks; ++b) {
      fetch_block block;
      block.lra = {b * l.share, l.share, 0};
      block.first_request = b * l.requests_per_block;
      block.request_count = l.requests_per_block;
      block.reset_requests();
      blocks.push_back(block);
    }
    service = std::make_unique<io_service>(files, view.ring, request_slots_view{requests, staging.get(), l.staging_bytes},
                                           site_of, io_service_options{.threads = l.io_threads, .chunk_bytes = 16 << 10});
    service->start();
  }

  fetch_status step(std::uint32_t block, fetch_item& item, fetch_counters& counters, std::uint64_t frame = 0) {
    return fetch_step(
        view, blocks[block], item, /*op=*/1, frame, counters,
        [](std::byte* dst, const std::byte* src, std::uint64_t n) { std::memcpy(dst, src, n); },
        [](std::byte* dst, std::uint64_t n) { std::memset(dst, 0, n); });
  }

  /// Steps until the item is resolved or failed (bounded).
  fetch_status fetch(std::uint32_t block, fetch_item& item, fetch_counters& counters) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (true) {
      const fetch_status s = step(block, item, counters);
      if (s != fetch_status::waiting) return s;
      if (std::chrono::steady_clock::now() > give_up) FAIL("the fetch did not finish");
      std::this_thread::yield();
    }
  }

  bool bytes_right(const fetch_item& item) const {
    for (std::uint32_t r = 0; r < item.range_count; ++r) {
      const file_range& range = item.ranges[r];
      for (std::uint64_t b = range.offset; b < range.offset + range.bytes; ++b) {
        const std::byte* got = fetched_byte(view, item, range.file, b);
        if (got == nullptr || *got != pattern_byte(range.file, b)) return false;
      }
    }
    return true;
  }
};

}  // namespace

TEST_CASE("file_fetch: a miss loads the pages, a second read of them hits, and bytes past the end are zero") {
  host_cache_rig rig({.sizes = {100000, 10000}});
  std::vector<std::uint32_t> entries(16);
  fetch_item item;
  // Pages 1–3 of file 0 and the last two (partial) pages of file 1.
  const file_range ranges[] = {{0, 5000, 10000}, {1, 8000, 2000}};
  item.begin(ranges, 2, entries.data(), 12);
  CHECK(item.page_count == 3 + 2);
  fetch_counters counters;
  REQUIRE(rig.fetch(0, item, counters) == fetch_status::resolved);
  CHECK(counters.misses == 5);
  CHECK(counters.hits == 0);
  CHECK(counters.requests == 2);  // one per range: their pages are consecutive
  CHECK(rig.bytes_right(item));
  const std::byte* last_page = rig.view.page_of(item.entries[4]);
  bool zero_tail = true;
  for (std::uint64_t b = 10000 - 8192; b < 4096; ++b) zero_tail = zero_tail && last_page[b] == std::byte{0};
  CHECK(zero_tail);
  fetch_release(rig.view, item);

  fetch_counters again;
  item.begin(ranges, 2, entries.data(), 12);
  CHECK(rig.step(0, item, again) == fetch_status::resolved);  // all resident: resolved in one step
  CHECK(again.hits == 5);
  CHECK(again.misses == 0);
  CHECK(rig.bytes_right(item));
  fetch_release(rig.view, item);
  for (std::uint32_t s = 0; s < rig.view.slot_count; ++s) CHECK(slot_pins(rig.view.slots[s]) == 0);
  CHECK_FALSE(rig.service->poll().has_value());
}

TEST_CASE("file_fetch: a block reuses its share least recently allocated first") {
  host_cache_rig rig({.sizes = {64 * 4096}, .share = 4});
  std::vector<std::uint32_t> entries(4);
  fetch_counters counters;
  for (std::uint64_t page = 0; page < 16; page += 2) {  // 16 pages through 4 slots, two at a time
    fetch_item item;
    const file_range range{0, page * 4096, 8192};
    item.begin(&range, 1, entries.data(), 12);
    REQUIRE(rig.fetch(0, item, counters) == fetch_status::resolved);
    CHECK(rig.bytes_right(item));
    fetch_release(rig.view, item);
  }
  CHECK(counters.misses == 16);
  // Pages 12–15 are the ones resident; page 0 was evicted long ago.
  fetch_counters after;
  fetch_item recent, old;
  const file_range recent_range{0, 12 * 4096, 4 * 4096}, old_range{0, 0, 4096};
  recent.begin(&recent_range, 1, entries.data(), 12);
  CHECK(rig.step(0, recent, after) == fetch_status::resolved);
  CHECK(after.hits == 4);
  fetch_release(rig.view, recent);
  old.begin(&old_range, 1, entries.data(), 12);
  REQUIRE(rig.fetch(0, old, after) == fetch_status::resolved);
  CHECK(after.misses == 1);
  CHECK(rig.bytes_right(old));
  fetch_release(rig.view, old);
}

TEST_CASE("file_fetch: a full share makes an item drop its pins and start over, and it finishes after") {
  host_cache_rig rig({.sizes = {64 * 4096}, .share = 3});
  std::vector<std::uint32_t> first_entries(4), second_entries(4);
  fetch_counters counters;
  fetch_item holder, item;
  const file_range two{0, 0, 8192}, three{0, 8 * 4096, 3 * 4096};
  holder.begin(&two, 1, first_entries.data(), 12);
  REQUIRE(rig.fetch(0, holder, counters) == fetch_status::resolved);
  // Three pages with two of three slots pinned: the share runs out on every step.
  item.begin(&three, 1, second_entries.data(), 12);
  for (int s = 0; s < 50; ++s) {
    CHECK(rig.step(0, item, counters) == fetch_status::waiting);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  CHECK(counters.no_page > 0);
  CHECK(item.resolved == 0);  // it holds no valid page while it waits
  fetch_release(rig.view, holder);
  REQUIRE(rig.fetch(0, item, counters) == fetch_status::resolved);
  CHECK(rig.bytes_right(item));
  fetch_release(rig.view, item);
}

TEST_CASE("file_fetch: a failed read fails its reader and every later reader of the page, once drained") {
  host_cache_rig rig({.sizes = {64 * 4096}},
                     [](host_cache_rig& r) { r.files.inject_fault(r.paths[0], 5 * 4096 + 100, EIO); });
  std::vector<std::uint32_t> entries(8);
  fetch_counters counters;
  fetch_item item;
  const file_range range{0, 3 * 4096, 4 * 4096};  // pages 3–6, page 5 fails
  item.begin(&range, 1, entries.data(), 12);
  CHECK(rig.fetch(0, item, counters) == fetch_status::failed);
  CHECK(item.pending_count == 0);
  CHECK(rig.blocks[0].free_requests == 0xfu);  // every request slot back
  fetch_release(rig.view, item);
  const std::optional<run_error> error = rig.service->poll();
  REQUIRE(error.has_value());
  CHECK(error->reason() == "file '" + rig.paths[0] + "': read failed at byte offset 20580: Input/output error");
  // The page stays failed in the cache: a later reader fails without a request of its own.
  fetch_item later;
  const file_range page5{0, 5 * 4096, 10};
  later.begin(&page5, 1, entries.data(), 12);
  const std::uint64_t requests_before = counters.requests;
  CHECK(rig.fetch(0, later, counters) == fetch_status::failed);
  CHECK(counters.requests == requests_before);
  fetch_release(rig.view, later);
}

TEST_CASE("file_fetch: blocks on threads read random ranges through a cache smaller than the files") {
  // 4 blocks × 2 items each over two files of 2 MiB and 1.5 MiB; each item reads up to two ranges of up to
  // 8 KiB (≤ 6 pages), so the smallest share that lets an item finish is 2 × 6 + 1 = 13 pages (the plan's
  // rule), where full shares are common; 32 pages is the roomier case.
  constexpr std::uint32_t blocks = 4, items = 2;
  std::uint32_t share = 13;
  SUBCASE("the smallest share") { share = 13; }
  SUBCASE("a roomier share") { share = 32; }
  SUBCASE("a share below the rule") { share = 8; }
  CAPTURE(share);
  host_cache_rig rig({.sizes = {2 << 20, 3 << 19}, .blocks = blocks, .share = share, .requests_per_block = 4,
                      .io_threads = 3, .staging_bytes = 16 << 10});
  std::atomic<std::uint64_t> wrong{0}, failed{0}, resolved{0}, hits{0}, misses{0}, no_page{0};
  std::vector<std::thread> threads;
  for (std::uint32_t b = 0; b < blocks; ++b) {
    threads.emplace_back([&, b] {
      std::uint64_t state = b * 7919 + 1;
      auto next = [&] { return state = state * 6364136223846793005u + 1442695040888963407u, state >> 33; };
      std::vector<std::uint32_t> entries(items * 8);
      fetch_item item[items];
      file_range ranges[items][2];
      bool busy[items] = {};
      fetch_counters counters;
      std::uint32_t done = 0, started = 0;
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (done < 1500 && std::chrono::steady_clock::now() < give_up) {
        for (std::uint32_t k = 0; k < items; ++k) {  // one round: each item steps once, as lanes do
          if (!busy[k]) {
            if (started == 1500) continue;
            ++started;
            const std::uint32_t count = 1 + next() % 2;
            for (std::uint32_t r = 0; r < count; ++r) {
              const std::uint32_t file = next() % 2;
              const std::uint64_t size = rig.sizes[file];
              // Mostly near the start (hits), sometimes anywhere (misses and evictions).
              const std::uint64_t span = next() % 4 == 0 ? size : 64 << 10;
              const std::uint64_t offset = next() % (span - 8192);
              ranges[k][r] = {file, offset, 1 + next() % 8192};
            }
            item[k].begin(ranges[k], count, entries.data() + k * 8, 12);
            busy[k] = true;
          }
          const fetch_status s = rig.step(b, item[k], counters, done);
          if (s == fetch_status::waiting) continue;
          if (s == fetch_status::failed) {
            failed.fetch_add(1);
          } else if (!rig.bytes_right(item[k])) {
            wrong.fetch_add(1);
          }
          fetch_release(rig.view, item[k]);
          busy[k] = false;
          ++done;
        }
        std::this_thread::yield();
      }
      resolved.fetch_add(done);
      hits.fetch_add(counters.hits);
      misses.fetch_add(counters.misses);
      no_page.fetch_add(counters.no_page);
      // Drain what is still in flight so the I/O threads stop with nothing pinned.
      for (std::uint32_t k = 0; k < items; ++k) {
        if (!busy[k]) continue;
        if (rig.fetch(b, item[k], counters) == fetch_status::resolved) ++done;
        fetch_release(rig.view, item[k]);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  rig.service->stop();
  CHECK(wrong.load() == 0);
  CHECK(failed.load() == 0);
  CHECK(resolved.load() == blocks * 1500);
  CHECK(misses.load() > 0);
  CHECK(hits.load() > misses.load());
  MESSAGE("hits " << hits.load() << ", misses " << misses.load() << ", full-share restarts " << no_page.load());
  for (std::uint32_t s = 0; s < rig.view.slot_count; ++s) CHECK(slot_pins(rig.view.slots[s]) == 0);
  CHECK_FALSE(rig.service->poll().has_value());
}

}  // namespace xf
