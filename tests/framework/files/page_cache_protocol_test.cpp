// The file cache's page slots and page table (framework/files/page_slot.hpp, page_table.hpp): the states one
// slot goes through, and blocks (threads here, as on the host executor) reading and replacing pages at once
// with every pinned page's bytes checked.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "framework/files/lra_queue.hpp"
#include "framework/files/page_slot.hpp"
#include "framework/files/page_table.hpp"

namespace {

using xf::page_slot;
using xf::page_state;
using xf::pin_status;

}  // namespace

TEST_CASE("page_cache.slot_goes_from_free_to_loading_to_valid_and_back") {
  page_slot slot{};
  CHECK(xf::slot_state(slot) == page_state::free);
  CHECK(xf::pin_page(slot, 7) == pin_status::stale);  // holds nothing

  std::uint64_t old_key = 99;
  REQUIRE(xf::claim_slot(slot, 7, &old_key));
  CHECK(old_key == 0);
  CHECK(xf::slot_state(slot) == page_state::loading);
  CHECK(xf::slot_pins(slot) == 1);                      // the loader's
  CHECK(xf::pin_page(slot, 7) == pin_status::loading);  // readers wait for the bytes
  CHECK_FALSE(xf::claim_slot(slot, 8, &old_key));       // a load in flight is never taken over

  xf::finish_load(slot, true);
  CHECK(xf::slot_state(slot) == page_state::valid);
  CHECK(xf::slot_pins(slot) == 1);
  CHECK(xf::pin_page(slot, 7) == pin_status::pinned);
  CHECK(xf::slot_pins(slot) == 2);
  CHECK(xf::pin_page(slot, 8) == pin_status::stale);  // another page: no pin left behind
  CHECK(xf::slot_pins(slot) == 2);

  xf::unpin_page(slot);
  CHECK_FALSE(xf::claim_slot(slot, 8, &old_key));  // the loader's pin is still held
  xf::unpin_page(slot);
  REQUIRE(xf::claim_slot(slot, 8, &old_key));  // reused in place
  CHECK(old_key == 7);
  CHECK(xf::pin_page(slot, 7) == pin_status::loading);
  xf::finish_load(slot, false);
  CHECK(xf::slot_state(slot) == page_state::failed);
  CHECK(xf::pin_page(slot, 8) == pin_status::failed);
  CHECK(xf::pin_page(slot, 7) == pin_status::stale);
  xf::unpin_page(slot);
  REQUIRE(xf::claim_slot(slot, 9, &old_key));  // a failed page's slot is reusable once unpinned
  CHECK(old_key == 8);
  xf::abandon_claim(slot);
  CHECK(xf::slot_state(slot) == page_state::free);
  CHECK(xf::slot_pins(slot) == 0);
}

TEST_CASE("page_cache.table_install_race_has_one_winner") {
  std::uint32_t entry = 0;
  CHECK(xf::page_table_lookup(entry) == xf::no_page_slot);
  CHECK(xf::page_table_install(entry, 5) == 5);
  CHECK(xf::page_table_install(entry, 9) == 5);  // the loser learns the winner's slot
  CHECK(xf::page_table_lookup(entry) == 5);
  CHECK_FALSE(xf::page_table_remove(entry, 9));
  CHECK(xf::page_table_remove(entry, 5));
  CHECK(xf::page_table_lookup(entry) == xf::no_page_slot);
}

namespace {

constexpr std::size_t page_words = 16;  // 128-byte pages: enough to catch a torn or stale page

std::uint64_t page_word(std::uint64_t key, std::size_t i) {
  return key * 0x9E3779B97F4A7C15ull + i;
}

/// A cache of `blocks × slots_per_block` slots over `pages` pages. Each block (thread) owns its slots and
/// reuses them in allocation order; it reads pages at random and checks every pinned page's bytes.
struct cache_under_test {
  std::uint32_t blocks, slots_per_block;
  std::uint64_t pages;
  std::vector<page_slot> slots;
  std::vector<std::uint64_t> bytes;  // slot s: bytes[s * page_words, ...)
  std::vector<std::uint32_t> table;
  std::uint64_t failing_page_every;  // pages whose key is a multiple of this fail to load
  bool global_policy;                // one hand over every slot instead of a queue per block
  std::vector<xf::lra_queue> queues;
  std::uint64_t global_hand = 0;

  cache_under_test(std::uint32_t b, std::uint32_t spb, std::uint64_t p, std::uint64_t fail_every, bool global)
      : blocks(b),
        slots_per_block(spb),
        pages(p),
        slots(std::size_t{b} * spb),
        bytes(slots.size() * page_words),
        table(p),
        failing_page_every(fail_every),
        global_policy(global) {
    for (std::uint32_t i = 0; i < b; ++i) queues.push_back({i * spb, spb, 0});
  }

  struct tally {
    std::uint64_t hits = 0, loads = 0, lost_installs = 0, waits = 0, failed = 0, bad_bytes = 0, broken = 0;
  };

  void run_block(std::uint32_t block, std::uint64_t reads, std::uint64_t seed, tally& t) {
    std::mt19937_64 rng(seed);
    for (std::uint64_t r = 0; r < reads; ++r) {
      const std::uint64_t page = rng() % pages;
      const std::uint64_t key = page + 1;
      for (int attempt = 0;; ++attempt) {
        if (attempt > 1'000'000) {
          ++t.broken;  // no progress: a protocol bug
          return;
        }
        const std::uint32_t held = xf::page_table_lookup(table[page]);
        if (held != xf::no_page_slot) {
          const pin_status st = xf::pin_page(slots[held], key);
          if (st == pin_status::pinned) {
            check(held, key, t);
            xf::unpin_page(slots[held]);
            ++t.hits;
            break;
          }
          if (st == pin_status::failed) {
            if (key % failing_page_every != 0) ++t.broken;
            ++t.failed;
            break;
          }
          ++t.waits;  // loading or stale: another round
          std::this_thread::yield();
          continue;
        }
        // A miss: claim the least recently allocated of this block's slots that no one holds.
        std::uint64_t old_key = 0;
        const std::uint32_t slot =
            global_policy ? xf::allocate_global(slots.data(), static_cast<std::uint32_t>(slots.size()),
                                                global_hand, key, &old_key)
                          : queues[block].allocate(slots.data(), key, &old_key);
        if (slot == xf::no_page_slot) {
          ++t.waits;
          continue;
        }
        if (old_key != 0 && !xf::page_table_remove(table[old_key - 1], slot)) ++t.broken;
        const std::uint32_t winner = xf::page_table_install(table[page], slot);
        if (winner != slot) {
          xf::abandon_claim(slots[slot]);
          ++t.lost_installs;
          continue;  // pin the winner's slot next time round
        }
        const bool ok = key % failing_page_every != 0;
        if (ok)
          for (std::size_t i = 0; i < page_words; ++i) bytes[slot * page_words + i] = page_word(key, i);
        xf::finish_load(slots[slot], ok);
        if (ok) check(slot, key, t);
        xf::unpin_page(slots[slot]);
        ++t.loads;
        break;
      }
    }
  }

  void check(std::uint32_t slot, std::uint64_t key, tally& t) const {
    for (std::size_t i = 0; i < page_words; ++i)
      if (bytes[slot * page_words + i] != page_word(key, i)) ++t.bad_bytes;
  }
};

}  // namespace

TEST_CASE("page_cache.blocks_reading_and_replacing_at_once_see_only_their_pages") {
  // 8 blocks of 8 slots over 256 pages: most reads miss and replace a page some other block may be
  // reading; one page in 37 fails to load. Per-block queues (the paper's) and the one global hand.
  for (const bool global : {false, true}) {
    CAPTURE(global);
    const std::uint32_t blocks = 8;
    cache_under_test cache(blocks, 8, 256, 37, global);
    std::vector<cache_under_test::tally> tallies(blocks);
    std::vector<std::thread> threads;
    for (std::uint32_t b = 0; b < blocks; ++b)
      threads.emplace_back([&, b] { cache.run_block(b, 20000, 1000 + b, tallies[b]); });
    for (auto& t : threads) t.join();

    cache_under_test::tally all;
    for (const auto& t : tallies) {
      all.hits += t.hits;
      all.loads += t.loads;
      all.failed += t.failed;
      all.bad_bytes += t.bad_bytes;
      all.broken += t.broken;
    }
    CHECK(all.bad_bytes == 0);
    CHECK(all.broken == 0);
    CHECK(all.hits + all.loads + all.failed == std::uint64_t{blocks} * 20000);
    CHECK(all.hits > 0);
    CHECK(all.loads > 0);
    CHECK(all.failed > 0);
    for (auto& slot : cache.slots) CHECK(xf::slot_pins(slot) == 0);
    // Every table entry points at a slot that holds that page.
    for (std::uint64_t page = 0; page < cache.pages; ++page) {
      const std::uint32_t s = xf::page_table_lookup(cache.table[page]);
      if (s == xf::no_page_slot) continue;
      CHECK(cache.slots[s].key == page + 1);
    }
  }
}

TEST_CASE("page_cache.lra_queue_reuses_its_share_oldest_first_and_passes_over_pinned_slots") {
  std::vector<page_slot> slots(12);
  xf::lra_queue queue{4, 4, 0};  // this block's share: slots 4..7
  std::uint64_t old_key = 0;
  for (std::uint64_t key = 1; key <= 4; ++key) {
    const std::uint32_t s = queue.allocate(slots.data(), key, &old_key);
    CHECK(s == 3 + key);
    CHECK(old_key == 0);
    xf::finish_load(slots[s], true);
    xf::unpin_page(slots[s]);
  }
  // Slot 4 holds the least recently allocated page: reused first.
  CHECK(queue.allocate(slots.data(), 5, &old_key) == 4);
  CHECK(old_key == 1);
  xf::finish_load(slots[4], true);  // its loader keeps the pin
  // A reader pins slot 5: passed over, slot 6 next.
  REQUIRE(xf::pin_page(slots[5], 2) == pin_status::pinned);
  CHECK(queue.allocate(slots.data(), 6, &old_key) == 6);
  CHECK(old_key == 3);
  CHECK(queue.allocate(slots.data(), 7, &old_key) == 7);
  CHECK(old_key == 4);
  // 4 (loader's pin), 5 (reader), 6 and 7 (loading): nothing free in the share.
  CHECK(queue.allocate(slots.data(), 8, &old_key) == xf::no_page_slot);
  xf::unpin_page(slots[5]);
  CHECK(queue.allocate(slots.data(), 8, &old_key) == 5);  // the oldest once released
  CHECK(old_key == 2);
  for (std::size_t s = 0; s < slots.size(); ++s)
    if (s < 4 || s > 7) CHECK(xf::slot_state(slots[s]) == page_state::free);  // other shares untouched
}

TEST_CASE("page_cache.global_hand_spreads_over_every_slot") {
  std::vector<page_slot> slots(6);
  std::uint64_t hand = 0, old_key = 0;
  for (std::uint64_t key = 1; key <= 6; ++key)
    CHECK(xf::allocate_global(slots.data(), 6, hand, key, &old_key) == key - 1);
  CHECK(xf::allocate_global(slots.data(), 6, hand, 7, &old_key) == xf::no_page_slot);  // all loading
  xf::finish_load(slots[2], true);
  xf::unpin_page(slots[2]);
  CHECK(xf::allocate_global(slots.data(), 6, hand, 7, &old_key) == 2);
  CHECK(old_key == 3);
}
