// The readahead decision per reader stream: always, never, and adaptive (sequential misses ramp a window,
// jumps turn it off, waste halves it), driven by readers with the readahead buffer of the GPUfs paper.
#include "framework/files/readahead_window.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace {

using xf::readahead_mode;
using xf::readahead_window;

/// A reader with one private readahead buffer (the pages fetched ahead by its last miss), as a block has.
struct buffered_reader {
  readahead_window window;
  std::uint64_t file_pages;
  std::uint64_t buffer_first = 0, buffer_end = 0;  // [first, end) fetched ahead by the last miss
  std::uint64_t requests = 0, fetched_ahead = 0, used_ahead = 0;

  void read(std::uint64_t page) {
    if (page >= buffer_first && page < buffer_end) {
      window.on_hit(page, true);
      ++used_ahead;
      return;
    }
    ++requests;
    const std::uint64_t ahead = window.on_miss(page);
    buffer_first = page + 1;
    buffer_end = page + 1 + ahead < file_pages ? page + 1 + ahead : file_pages;
    const auto arrived =
        static_cast<std::uint32_t>(buffer_end > buffer_first ? buffer_end - buffer_first : 0);
    fetched_ahead += arrived;
    window.fetched(arrived);
  }
};

/// An adaptive window after misses at pages 0, 1, 2: the third sequential miss started the initial window.
readahead_window started_window() {
  readahead_window w(readahead_mode::adaptive, 16);
  w.on_miss(0);
  w.on_miss(1);
  REQUIRE(w.on_miss(2) == 4);
  return w;
}

}  // namespace

TEST_CASE("readahead.off_never_fetches_ahead") {
  buffered_reader r{readahead_window(readahead_mode::off, 16), 1000};
  for (std::uint64_t p = 0; p < 1000; ++p) r.read(p);
  CHECK(r.requests == 1000);
  CHECK(r.fetched_ahead == 0);
}

TEST_CASE("readahead.on_fetches_the_whole_window_on_every_miss") {
  readahead_window w(readahead_mode::on, 16);
  CHECK(w.on_miss(7) == 16);
  CHECK(w.on_miss(900000) == 16);  // random or not: the paper's prefetcher always asks for page + readahead
  buffered_reader r{readahead_window(readahead_mode::on, 16), 1000};
  for (std::uint64_t p = 0; p < 1000; ++p) r.read(p);
  CHECK(r.requests == 59);  // ceil(1000 / 17)
  CHECK(r.fetched_ahead == 1000 - 59);
}

TEST_CASE("readahead.adaptive_ramps_on_sequential_misses") {
  readahead_window w(readahead_mode::adaptive, 16);
  CHECK(w.on_miss(0) == 0);  // no history
  CHECK(w.on_miss(1) == 0);  // one sequential miss
  CHECK(w.on_miss(2) == 4);  // two in a row: the initial window
  for (std::uint64_t p = 3; p <= 6; ++p) w.on_hit(p, true);
  CHECK(w.on_miss(7) == 8);
  for (std::uint64_t p = 8; p <= 15; ++p) w.on_hit(p, true);
  CHECK(w.on_miss(16) == 16);
  for (std::uint64_t p = 17; p <= 32; ++p) w.on_hit(p, true);
  CHECK(w.on_miss(33) == 16);  // capped at the setting
  CHECK(w.window_pages() == 16);
}

TEST_CASE("readahead.adaptive_window_never_exceeds_a_small_setting") {
  readahead_window w(readahead_mode::adaptive, 2);
  w.on_miss(0);
  w.on_miss(1);
  CHECK(w.on_miss(2) == 2);
  readahead_window none(readahead_mode::adaptive, 0);
  for (std::uint64_t p = 0; p < 10; ++p) CHECK(none.on_miss(p) == 0);
}

TEST_CASE("readahead.adaptive_jump_turns_it_off") {
  readahead_window w = started_window();
  CHECK(w.on_miss(500) == 0);  // forward jump past the window
  CHECK(w.window_pages() == 0);
  CHECK(w.on_miss(501) == 0);  // sequential again: one miss is not enough
  CHECK(w.on_miss(502) == 4);
  CHECK(w.on_miss(3) == 0);  // backward jump
  CHECK(w.window_pages() == 0);
}

TEST_CASE("readahead.adaptive_step_back_inside_the_window_changes_nothing") {
  // A band reader whose bands overlap by a page (halo rows): the overlap page, read again after the cache
  // dropped it, is neither progress nor a jump.
  readahead_window w = started_window();
  for (std::uint64_t p = 3; p <= 6; ++p) w.on_hit(p, true);
  CHECK(w.on_miss(5) == 0);
  CHECK(w.window_pages() == 4);
  CHECK(w.on_miss(7) == 8);  // still sequential from page 6
}

TEST_CASE("readahead.adaptive_cache_hits_move_the_reader_along") {
  // Pages another reader brought into the cache are hits, not misses: the next miss past them is still
  // sequential.
  readahead_window w = started_window();
  for (std::uint64_t p = 3; p <= 40; ++p) w.on_hit(p, false);
  CHECK(w.on_miss(41) == 8);
}

TEST_CASE("readahead.adaptive_halves_the_window_when_most_fetched_pages_go_unused") {
  auto ramped = [] {
    readahead_window w(readahead_mode::adaptive, 16);
    w.on_miss(0);
    w.on_miss(1);
    w.on_miss(2);
    REQUIRE(w.on_miss(3) == 8);
    return w;
  };
  readahead_window wasteful = ramped();
  for (std::uint32_t p = 0; p < 31; ++p) wasteful.on_hit(100 + p, true);  // 31 of 64 used
  wasteful.fetched(63);
  CHECK(wasteful.window_pages() == 8);  // the sample is not complete yet
  wasteful.fetched(1);
  CHECK(wasteful.window_pages() == 4);

  readahead_window thrifty = ramped();
  for (std::uint32_t p = 0; p < 32; ++p) thrifty.on_hit(100 + p, true);  // half used: not wasteful
  thrifty.fetched(64);
  CHECK(thrifty.window_pages() == 8);

  readahead_window always(readahead_mode::on, 16);
  always.fetched(1000);
  CHECK(always.on_miss(5) == 16);  // `on` is the paper's: no adaptation
}

TEST_CASE("readahead.adaptive_sequential_reader_asks_little_and_wastes_nothing") {
  buffered_reader r{readahead_window(readahead_mode::adaptive, 16), 10000};
  for (std::uint64_t p = 0; p < 10000; ++p) r.read(p);
  CHECK(r.requests < 10000 / 16 + 10);
  CHECK(r.used_ahead == r.fetched_ahead);  // clipped at the file's end: every page fetched was read
}

TEST_CASE("readahead.adaptive_random_reader_fetches_nothing_ahead") {
  std::mt19937_64 rng(42);
  buffered_reader adaptive{readahead_window(readahead_mode::adaptive, 16), 1u << 20};
  buffered_reader always{readahead_window(readahead_mode::on, 16), 1u << 20};
  for (int i = 0; i < 10000; ++i) {
    const std::uint64_t p = rng() % (1u << 20);
    adaptive.read(p);
    always.read(p);
  }
  CHECK(adaptive.fetched_ahead == 0);
  CHECK(always.fetched_ahead > 150000);  // ~16 pages for every read, almost none of them used
  CHECK(always.used_ahead < 100);
}
