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

#include "framework/files/file_cache.hpp"
#include "tests/framework/files/pattern_file.hpp"

namespace xf {
namespace {

using test::pattern_byte;

std::string write_numbered_pattern_file(const test::scratch_dir& dir, std::uint32_t file,
                                        std::uint64_t bytes) {
  return test::write_pattern_file(dir, "data" + std::to_string(file) + ".bin", file, bytes);
}

fault_site fetch_site_of(std::uint32_t op, std::uint64_t frame_offset) {
  return {"op" + std::to_string(op), "t", frame_offset};
}

/// A host file cache over pattern files of `sizes` bytes: `blocks` blocks with `share` page slots and
/// `requests_per_block` request slots each, 4 KiB pages, readahead as set (none by default), served by
/// `io_threads` I/O threads.
struct host_cache_rig {
  struct layout {
    std::vector<std::uint64_t> sizes;
    std::uint32_t blocks = 1, share = 16, requests_per_block = 4, io_threads = 2;
    std::uint64_t staging_bytes = 64 << 10;
    page_replacement replacement = page_replacement::lra;
    std::uint32_t readahead_pages = 0;
    readahead_mode readahead_policy = readahead_mode::adaptive;
    std::vector<access_advice> advice = {};  ///< per file; normal when missing
    /// Move the bytes as the GPU kernel does (deferred_moves, run after each step) instead of at once.
    bool deferred = false;
  };

  test::scratch_dir dir;
  std::vector<std::string> paths;
  std::vector<std::uint64_t> sizes;
  std::unique_ptr<file_cache> cache;
  file_cache_view view;

  bool deferred = false;

  explicit host_cache_rig(const layout& l, const std::function<void(host_cache_rig&)>& before_start = {})
      : sizes(l.sizes), deferred(l.deferred) {
    std::vector<cache_file> files;
    for (std::uint32_t f = 0; f < l.sizes.size(); ++f) {
      paths.push_back(write_numbered_pattern_file(dir, f, l.sizes[f]));
      files.push_back(
          {paths.back(), fetch_site_of(0, 0), f < l.advice.size() ? l.advice[f] : access_advice::normal});
    }
    file_cache_spec spec;
    spec.size = std::uint64_t{l.blocks} * l.share * 4096;
    spec.readahead = std::uint64_t{l.readahead_pages} * 4096;
    spec.readahead_policy = l.readahead_policy;
    spec.max_request = l.staging_bytes;
    spec.io_chunk = 16 << 10;
    spec.io_threads = l.io_threads;
    spec.io_slots_per_block = l.requests_per_block;
    spec.replacement = l.replacement;
    cache = std::make_unique<file_cache>(spec, l.blocks, files, fetch_site_of, std::chrono::milliseconds(0));
    view = cache->view();
    if (before_start) before_start(*this);
    cache->start();
  }
  fetch_block& block(std::uint32_t b) { return cache->block(b); }

  /// One step, its bytes moved before it returns (with `deferred`, as the kernel's round moves them).
  fetch_status step(std::uint32_t block, fetch_item& item, fetch_counters& counters,
                    std::uint64_t frame = 0) {
    if (!deferred) {
      inline_moves moves;
      return fetch_step(view, cache->block(block), item, /*op=*/1, frame, counters, moves);
    }
    deferred_moves moves;
    moves.clear();
    const fetch_status s = fetch_step(view, cache->block(block), item, /*op=*/1, frame, counters, moves);
    run_moves(moves);
    return s;
  }
  /// A step whose moves join `moves` (several items' steps share a round's queue, as in the kernel).
  fetch_status queue_step(std::uint32_t block, fetch_item& item, fetch_counters& counters,
                          std::uint64_t frame, deferred_moves& moves) {
    return fetch_step(view, cache->block(block), item, /*op=*/1, frame, counters, moves);
  }
  /// What the kernel's threads do with a round's queue: the copies out of staging, then those out of the
  /// readahead buffer, then the finishes.
  void run_moves(deferred_moves& moves) {
    const auto copy = [](std::byte* dst, const std::byte* src, std::uint32_t bytes, std::uint32_t zeros) {
      std::memcpy(dst, src, bytes);
      std::memset(dst + bytes, 0, zeros);
    };
    moves.run(0, copy);
    moves.run(1, copy);
    moves.finish(view.slots);
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
  CHECK_FALSE(rig.cache->poll().has_value());
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
  host_cache_rig rig({.sizes = {64 * 4096}}, [](host_cache_rig& r) {
    r.cache->files().inject_fault(r.paths[0], 5 * 4096 + 100, EIO);
  });
  std::vector<std::uint32_t> entries(8);
  fetch_counters counters;
  fetch_item item;
  const file_range range{0, 3 * 4096, 4 * 4096};  // pages 3–6, page 5 fails
  item.begin(&range, 1, entries.data(), 12);
  CHECK(rig.fetch(0, item, counters) == fetch_status::failed);
  CHECK(item.pending_count == 0);
  CHECK(rig.block(0).free_requests == 0xfu);  // every request slot back
  fetch_release(rig.view, item);
  const std::optional<run_error> error = rig.cache->poll();
  REQUIRE(error.has_value());
  CHECK(error->reason() ==
        "file '" + rig.paths[0] + "': read failed at byte offset 20580: Input/output error");
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
  page_replacement replacement = page_replacement::lra;
  SUBCASE("the smallest share") {
    share = 13;
  }
  SUBCASE("a roomier share") {
    share = 32;
  }
  SUBCASE("a share below the rule") {
    share = 8;
  }
  SUBCASE("one global hand over 4 x 13 slots") {
    share = 13;
    replacement = page_replacement::global;
  }
  std::uint32_t readahead = 0;
  SUBCASE("the smallest share, reading 4 pages ahead on every miss") {
    share = 13;
    readahead = 4;
  }
  // The GPU's moves: a round's steps queue their copies, run after all of them.
  bool deferred = false;
  SUBCASE("the smallest share, deferred moves") {
    share = 13;
    deferred = true;
  }
  SUBCASE("the smallest share, reading 4 pages ahead, deferred moves") {
    share = 13;
    readahead = 4;
    deferred = true;
  }
  CAPTURE(share);
  CAPTURE(name_of(replacement));
  CAPTURE(readahead);
  CAPTURE(deferred);
  host_cache_rig rig({.sizes = {2 << 20, 3 << 19},
                      .blocks = blocks,
                      .share = share,
                      .requests_per_block = 4,
                      .io_threads = 3,
                      .staging_bytes = readahead > 0 ? std::uint64_t{32} << 10 : std::uint64_t{16} << 10,
                      .replacement = replacement,
                      .readahead_pages = readahead,
                      .readahead_policy = readahead_mode::on,
                      .deferred = deferred});
  std::atomic<std::uint64_t> wrong{0}, failed{0}, resolved{0}, hits{0}, misses{0}, no_page{0}, ahead_hits{0};
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
        fetch_status status[items];
        bool stepped[items] = {};
        deferred_moves moves;
        moves.clear();
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
          status[k] = deferred ? rig.queue_step(b, item[k], counters, done, moves)
                               : rig.step(b, item[k], counters, done);
          stepped[k] = true;
        }
        if (deferred) rig.run_moves(moves);
        for (std::uint32_t k = 0; k < items; ++k) {
          if (!stepped[k]) continue;
          const fetch_status s = status[k];
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
      ahead_hits.fetch_add(counters.ahead_hits);
      // Drain what is still in flight so the I/O threads stop with nothing pinned.
      for (std::uint32_t k = 0; k < items; ++k) {
        if (!busy[k]) continue;
        if (rig.fetch(b, item[k], counters) == fetch_status::resolved) ++done;
        fetch_release(rig.view, item[k]);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  rig.cache->stop();
  CHECK(wrong.load() == 0);
  CHECK(failed.load() == 0);
  CHECK(resolved.load() == blocks * 1500);
  CHECK(misses.load() > 0);
  CHECK(hits.load() > 0);  // both paths taken (how many of each depends on the share and the timing)
  if (readahead > 0) CHECK(ahead_hits.load() > 0);
  MESSAGE("hits " << hits.load() << ", misses " << misses.load() << ", full-share restarts " << no_page.load()
                  << ", served from readahead " << ahead_hits.load());
  for (std::uint32_t s = 0; s < rig.view.slot_count; ++s) CHECK(slot_pins(rig.view.slots[s]) == 0);
  CHECK_FALSE(rig.cache->poll().has_value());
}

namespace {

/// Reads `pages` one page at a time, in `order`, each fetched, checked and released as a stream's items
/// are; returns the counters.
fetch_counters read_pages(host_cache_rig& rig, std::uint32_t file, const std::vector<std::uint64_t>& order,
                          bool* all_right) {
  std::vector<std::uint32_t> entries(2);
  fetch_counters counters;
  *all_right = true;
  for (const std::uint64_t page : order) {
    fetch_item item;
    const std::uint64_t offset = page * 4096;
    const file_range range{file, offset, std::min<std::uint64_t>(4096, rig.sizes[file] - offset)};
    item.begin(&range, 1, entries.data(), 12);
    if (rig.fetch(0, item, counters) != fetch_status::resolved || !rig.bytes_right(item)) *all_right = false;
    fetch_release(rig.view, item);
  }
  return counters;
}

std::vector<std::uint64_t> in_order(std::uint64_t pages) {
  std::vector<std::uint64_t> order(pages);
  for (std::uint64_t p = 0; p < pages; ++p) order[p] = p;
  return order;
}

}  // namespace

TEST_CASE("file_fetch: adaptive readahead starts on a sequential stream, and its pages need no request") {
  // 256 pages and a short last one; 16 pages of readahead; a share of 16 (nothing is read twice).
  const std::uint64_t size = 255 * 4096 + 1000;
  bool deferred = false;
  SUBCASE("moved at once") {
    deferred = false;
  }
  SUBCASE("moved as the GPU does") {
    deferred = true;
  }
  CAPTURE(deferred);
  host_cache_rig rig({.sizes = {size},
                      .share = 16,
                      .staging_bytes = 128 << 10,
                      .readahead_pages = 16,
                      .deferred = deferred});
  bool right = false;
  const fetch_counters c = read_pages(rig, 0, in_order(256), &right);
  CHECK(right);
  CHECK(c.misses + c.ahead_hits == 256);
  CHECK(c.hits == 0);
  // Two misses before it starts, then windows of 4, 8, 16, 16, …: about 256 / 17 requests.
  CHECK(c.requests <= 2 + 1 + 1 + 256 / 17 + 1);
  CHECK(c.ahead_hits >= 256 - 20);
  CHECK(c.ahead_pages == c.ahead_hits);  // a sequential stream reads every page it fetched ahead
  // The last page, short, came from the buffer: past the file's end it is zero.
  std::vector<std::uint32_t> entries(1);
  fetch_item last;
  const file_range range{0, 255 * 4096, 1000};
  last.begin(&range, 1, entries.data(), 12);
  fetch_counters again;
  REQUIRE(rig.fetch(0, last, again) == fetch_status::resolved);
  const std::byte* page = rig.view.page_of(last.entries[0]);
  bool zero_tail = true;
  for (std::uint64_t b = 1000; b < 4096; ++b) zero_tail = zero_tail && page[b] == std::byte{0};
  CHECK(zero_tail);
  fetch_release(rig.view, last);
}

TEST_CASE("file_fetch: readahead on reads ahead from the first miss; off and random advice never do") {
  const std::uint64_t pages = 64;
  SUBCASE("on") {
    host_cache_rig rig({.sizes = {pages * 4096},
                        .share = 16,
                        .staging_bytes = 128 << 10,
                        .readahead_pages = 16,
                        .readahead_policy = readahead_mode::on});
    bool right = false;
    const fetch_counters c = read_pages(rig, 0, in_order(pages), &right);
    CHECK(right);
    CHECK(c.requests == 4);  // pages 0, 17, 34, 51, each with the next 16 (the last clipped at the end)
    CHECK(c.ahead_hits == pages - 4);
  }
  SUBCASE("sequential advice starts it at once") {
    host_cache_rig rig({.sizes = {pages * 4096},
                        .share = 16,
                        .staging_bytes = 128 << 10,
                        .readahead_pages = 16,
                        .advice = {access_advice::sequential}});
    bool right = false;
    const fetch_counters c = read_pages(rig, 0, in_order(pages), &right);
    CHECK(right);
    CHECK(c.requests == 4);
  }
  SUBCASE("off") {
    host_cache_rig rig({.sizes = {pages * 4096},
                        .share = 16,
                        .staging_bytes = 128 << 10,
                        .readahead_pages = 16,
                        .readahead_policy = readahead_mode::off});
    CHECK(rig.block(0).ahead == nullptr);
    bool right = false;
    const fetch_counters c = read_pages(rig, 0, in_order(pages), &right);
    CHECK(right);
    CHECK(c.requests == pages);
    CHECK(c.ahead_pages == 0);
  }
  SUBCASE("random advice turns it off for that file only") {
    host_cache_rig rig({.sizes = {pages * 4096, pages * 4096},
                        .share = 16,
                        .staging_bytes = 128 << 10,
                        .readahead_pages = 16,
                        .readahead_policy = readahead_mode::on,
                        .advice = {access_advice::random, access_advice::normal}});
    bool right = false;
    const fetch_counters random_file = read_pages(rig, 0, in_order(pages), &right);
    CHECK(right);
    CHECK(random_file.requests == pages);
    CHECK(random_file.ahead_pages == 0);
    const fetch_counters other = read_pages(rig, 1, in_order(pages), &right);
    CHECK(right);
    CHECK(other.requests == 4);
  }
}

TEST_CASE("file_fetch: adaptive readahead stays off for data-dependent random reads") {
  const std::uint64_t pages = 4096;  // 16 MiB
  host_cache_rig rig(
      {.sizes = {pages * 4096}, .share = 16, .staging_bytes = 128 << 10, .readahead_pages = 16});
  std::vector<std::uint64_t> order;
  std::uint64_t state = 12345;
  for (int i = 0; i < 400; ++i) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    order.push_back((state >> 33) % pages);
  }
  bool right = false;
  const fetch_counters c = read_pages(rig, 0, order, &right);
  CHECK(right);
  // A jump turns it off and two sequential misses in a row are needed to turn it on: random pages 4096
  // apart almost never do.
  CHECK(c.ahead_pages <= 16);
  CHECK(c.misses + c.hits + c.ahead_hits == 400);  // a few random pages repeat and hit
  CHECK(c.requests == c.misses);                   // one page each: nothing rode along
}

TEST_CASE("file_cache: a file that cannot be opened names its reader and path") {
  test::scratch_dir dir;
  const std::string missing = dir.file("missing.bin");
  CHECK_THROWS_WITH_AS(file_cache(file_cache_spec{}, 2, {{missing, {"reader", "out", std::nullopt}}},
                                  fetch_site_of, std::chrono::milliseconds(0)),
                       doctest::Contains("operator 'reader', topic 'out'"), run_error);
  CHECK_THROWS_WITH_AS(file_cache(file_cache_spec{}, 2, {{missing, {"reader", "out", std::nullopt}}},
                                  fetch_site_of, std::chrono::milliseconds(0)),
                       doctest::Contains("missing.bin': cannot open: No such file or directory"), run_error);
}

}  // namespace xf
