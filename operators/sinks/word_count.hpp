// word_count: the BigKernel paper's word count as a GPU sink. Every virtual thread looks at bytes of the
// frame (a text_source's: whole words), and for each word that starts there adds one to the word's slot in
// a hash table in the operator's accumulator — device memory for the whole run, copied back once at the
// end, where finish() sorts the words and writes the result. Only the text crosses PCIe.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "framework/core/exec_space.hpp"
#include "framework/core/system_atomic.hpp"
#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"
#include "operators/sinks/result_file.hpp"

namespace xf {

/// Words are maximal runs of lowercase letters 'a'..'z', separated by spaces and newlines (the word-count
/// dataset's format, apps/wordcount/wordcount_format.hpp). Counts are exact: the table compares words by
/// their letters, not only their hashes. Frames must hold whole words (text_source does that). Fails the
/// frame with code bad_byte for any other byte, long_word for a word of more than 40 letters (the table
/// keeps words inline), and table_full once more than 3/4 of table_slots hold words.
struct word_count_op {
  static constexpr char class_name[] = "word_count";

  static constexpr std::uint32_t bad_byte = 1;
  static constexpr std::uint32_t long_word = 2;
  static constexpr std::uint32_t table_full = 3;
  static constexpr std::uint32_t max_letters = 40;

  struct params {
    std::uint64_t table_slots = std::uint64_t{1} << 20;
    std::int64_t lanes = 1;
    path_text result;
  };

  /// One distinct word: a cache line. `hash` is claimed by compare-exchange (0: free); the claimer then
  /// writes length and letters, adds its occurrence to count and stores ready = 1 (release). Others compare
  /// the letters as soon as they show (see add).
  struct slot {
    std::uint64_t hash;
    std::uint64_t count;
    std::uint32_t length;
    std::uint32_t ready;
    std::uint64_t letters[5];  ///< 8 letters a word, the first in the low byte, zero after the last
  };
  static_assert(sizeof(slot) == 64);
  /// The accumulator: this header, then table_slots slots.
  struct header {
    std::uint64_t used;  ///< slots claimed
    std::uint64_t reserved[7];
  };
  static_assert(sizeof(header) == 64);

  static void describe(operator_schema<params>& s) {
    s.describe(
         "BigKernel word count (GPU sink): counts every word (lowercase letters between spaces and newlines) "
         "of a text_source's frames in a hash table in device memory; at the end: counters words, "
         "distinct_words, digest (CRC-32 of the sorted 'WORD COUNT' lines) and the optional result file")
        .whole_frames();
    s.bytes(&params::table_slots, "table_slots",
            "hash-table slots (64 bytes each, a power of two): room for 3/4 as many distinct words",
            std::uint64_t{1} << 20, 16, static_cast<double>(std::uint64_t{1} << 32));
    s.param(&params::lanes, "lanes",
            "1: frames are text as it is; L > 1: frames a text address stage of L lanes assembled (byte k of "
            "lane l at k*L + l, prefetch_assembler with pad 32), read back in text order",
            params{}.lanes, 1, 1 << 20);
    s.parsed(&params::result, "result", "file for the sorted 'WORD COUNT' lines ('' : none)", "",
             parse_path_text);
    s.writes_file();
    s.check_params([](const params& p) -> std::string {
      if ((p.table_slots & (p.table_slots - 1)) != 0) return "table_slots must be a power of two";
      return "";
    });
  }

  static const char* failure_reason(std::uint32_t code) {
    switch (code) {
      case bad_byte:
        return "a byte that is not a lowercase letter, space or newline";
      case long_word:
        return "a word of more than 40 letters";
      case table_full:
        return "the hash table is 3/4 full: raise table_slots";
      default:
        return nullptr;
    }
  }

  static std::uint64_t state_bytes(const params& p) { return sizeof(header) + p.table_slots * sizeof(slot); }

  XF_HOST_DEVICE XF_FORCE_INLINE static bool is_letter(std::uint8_t c) { return c >= 'a' && c <= 'z'; }
  XF_HOST_DEVICE XF_FORCE_INLINE static bool is_separator(std::uint8_t c) { return c == ' ' || c == '\n'; }

  /// A word as the table keeps it: its letters packed 8 to a word (zero-padded, as in a slot), its length
  /// and a hash of both, never 0 (0 marks a free slot).
  struct word_key {
    std::uint64_t letters[5];
    std::uint32_t length;
    std::uint64_t hash;
  };

  /// Reads the word starting at text(i) (a letter; text(p) the byte at text position p < n) into `key`;
  /// false when it has more than max_letters. Unrolled so that `letters` stays in registers.
  template <class At>
  XF_HOST_DEVICE XF_FORCE_INLINE static bool read_word(At text, std::uint64_t i, std::uint64_t n,
                                                       word_key& key) {
    for (std::uint64_t& part : key.letters) part = 0;
    key.length = 0;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (std::uint32_t k = 0; k <= max_letters; ++k) {
      if (i + k >= n) break;
      const std::uint8_t c = text(i + k);
      if (!is_letter(c)) break;
      if (k == max_letters) return false;
      key.letters[k / 8] |= std::uint64_t{c} << (8 * (k % 8));
      key.length = k + 1;
    }
    // A multiply-xorshift mix over the packed letters (8 letters a step) and the length.
    std::uint64_t h = 0x9e3779b97f4a7c15ull * (key.length + 1);
    for (const std::uint64_t part : key.letters) {
      h = (h ^ part) * 0xbf58476d1ce4e5b9ull;
      h ^= h >> 31;
    }
    h *= 0x94d049bb133111ebull;
    h ^= h >> 29;
    key.hash = h != 0 ? h : 1;
    return true;
  }

  /// Whether `s` holds `key`'s letters, read with the given load (length and letters).
  template <class Load32, class Load64>
  XF_HOST_DEVICE XF_FORCE_INLINE static bool holds(slot& s, const word_key& key, Load32 load32,
                                                   Load64 load64) {
    bool same = load32(s.length) == key.length;
    for (std::uint32_t j = 0; j < 5; ++j) same &= load64(s.letters[j]) == key.letters[j];
    return same;
  }

  /// Adds one occurrence of the word to the table; false when the table is full.
  XF_HOST_DEVICE static bool add(const params& p, std::byte* state, const word_key& key) {
    auto* head = reinterpret_cast<header*>(state);
    auto* slots = reinterpret_cast<slot*>(state + sizeof(header));
    const std::uint64_t mask = p.table_slots - 1;
    for (std::uint64_t probe = 0, i = key.hash & mask; probe < p.table_slots; ++probe, i = (i + 1) & mask) {
      slot& s = slots[i];
      accumulator_atomic_ref<std::uint64_t> hash(s.hash);
      std::uint64_t seen = hash.load(mo::memory_order_relaxed);
      if (seen == 0) {
        if (hash.compare_exchange_strong(seen, key.hash, mo::memory_order_relaxed)) {
          const std::uint64_t used =
              accumulator_atomic_ref<std::uint64_t>(head->used).fetch_add(1, mo::memory_order_relaxed);
          // Atomic stores: readers on the fast path load these while they are written. The count is added
          // to, not stored: a reader that already matched the letters may have counted its word first.
          accumulator_atomic_ref<std::uint32_t>(s.length).store(key.length, mo::memory_order_relaxed);
          for (std::uint32_t j = 0; j < 5; ++j)
            accumulator_atomic_ref<std::uint64_t>(s.letters[j])
                .store(key.letters[j], mo::memory_order_relaxed);
          accumulator_atomic_ref<std::uint64_t>(s.count).fetch_add(1, mo::memory_order_relaxed);
          accumulator_atomic_ref<std::uint32_t>(s.ready).store(1u, mo::memory_order_release);
          return used < p.table_slots / 4 * 3;
        }
        // Another thread claimed it meanwhile: `seen` now holds its hash.
      }
      if (seen != key.hash) continue;
      // The fast path compares with relaxed loads, which wait for nothing (an acquire at device scope
      // also costs the SM's L1 its lines, where the text is): a slot that shows `key`'s letters and length
      // holds them, as they are written once, over zeros. Only a mismatch, which may be a slot still
      // being written, waits for ready and compares again.
      const auto relaxed32 = [](std::uint32_t& w) {
        return accumulator_atomic_ref<std::uint32_t>(w).load(mo::memory_order_relaxed);
      };
      const auto relaxed64 = [](std::uint64_t& w) {
        return accumulator_atomic_ref<std::uint64_t>(w).load(mo::memory_order_relaxed);
      };
      bool same = holds(s, key, relaxed32, relaxed64);
      if (!same) {
        accumulator_atomic_ref<std::uint32_t> ready(s.ready);
        while (ready.load(mo::memory_order_acquire) == 0) {
        }
        same = holds(s, key, relaxed32, relaxed64);
      }
      if (same) {
        accumulator_atomic_ref<std::uint64_t>(s.count).fetch_add(1, mo::memory_order_relaxed);
        return true;
      }
    }
    return false;
  }

  /// Bit k set when byte k of the 8 at text[first] (n − first of them when fewer) starts a word;
  /// `previous_letter`: whether the byte before them is a letter. Fails the frame on a bad byte.
  template <class T>
  XF_HOST_DEVICE XF_FORCE_INLINE static std::uint32_t word_starts(const std::uint8_t* text,
                                                                  std::uint64_t first, std::uint64_t n,
                                                                  const frame_task<T>& task) {
    std::uint64_t chunk = 0x2020202020202020ull;  // spaces past the end
    if (first + 8 <= n && (reinterpret_cast<std::uintptr_t>(text) & 7) == 0) {
#if defined(__CUDA_ARCH__)
      chunk = *reinterpret_cast<const std::uint64_t*>(text + first);
#else
      std::memcpy(&chunk, text + first, 8);
#endif
    } else {
      for (std::uint32_t k = 0; k < 8 && first + k < n; ++k)
        chunk = (chunk & ~(std::uint64_t{0xff} << (8 * k))) | std::uint64_t{text[first + k]} << (8 * k);
    }
    bool previous = first > 0 && is_letter(text[first - 1]);
    std::uint32_t starts = 0;
    bool bad = false;
    for (std::uint32_t k = 0; k < 8; ++k) {
      const auto c = static_cast<std::uint8_t>(chunk >> (8 * k));
      const bool letter = is_letter(c);
      bad |= !letter && !is_separator(c);
      starts |= static_cast<std::uint32_t>(letter && !previous) << k;
      previous = letter;
    }
    if (bad) task.fail(bad_byte);
    return starts;
  }

  /// Counts the word starting at text position i; false (the frame failed) when it cannot.
  template <class T, class At>
  XF_HOST_DEVICE XF_FORCE_INLINE static bool count_word(const params& p, const frame_task<T>& task, At text,
                                                        std::uint64_t i, std::uint64_t n) {
    word_key key;
    if (!read_word(text, i, n, key)) {
      task.fail(long_word);
      return false;
    }
    if (!add(p, task.state, key)) {
      task.fail(table_full);
      return false;
    }
    return true;
  }

  /// Text frames: every virtual thread takes 8 bytes at a time (one aligned load; a warp reads 256
  /// contiguous bytes) and counts the words that start among them. Lane frames (lanes L > 1, B = ⌈n / L⌉
  /// bytes a lane): text position q is frame byte (q mod B)·L + ⌊q / B⌋, and virtual thread l reads lane l
  /// (a warp reads 32 adjacent bytes at every step); a word that runs past its lane's end goes on in the
  /// next lane, and positions past the frame's end read as spaces.
  template <class T>
  XF_HOST_DEVICE static void compute(const params& p, const frame_task<T>& task) {
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(task.in);
    const std::uint64_t n = task.count * sizeof(T);
    if (p.lanes <= 1) {
      const auto text = [bytes](std::uint64_t q) { return bytes[q]; };
      for (std::uint64_t first = 8 * task.thread_id; first < n; first += 8 * task.thread_count)
        for (std::uint32_t starts = word_starts(bytes, first, n, task); starts != 0; starts &= starts - 1)
          if (!count_word(p, task, text, first + lowest_bit(starts), n)) return;
      return;
    }
    // Frames are far below 4 GiB: 32-bit division maps positions (a 64-bit one costs the GPU far more).
    if (n < (std::uint64_t{1} << 32) / 2)
      count_lanes<std::uint32_t>(p, task, bytes, n);
    else
      count_lanes<std::uint64_t>(p, task, bytes, n);
  }

  template <class Index, class T>
  XF_HOST_DEVICE static void count_lanes(const params& p, const frame_task<T>& task,
                                         const std::uint8_t* bytes, std::uint64_t n) {
    const auto lanes = static_cast<Index>(p.lanes);
    const auto per_lane = static_cast<Index>((n + lanes - 1) / lanes);
    const auto text = [bytes, n, lanes, per_lane](std::uint64_t q) -> std::uint8_t {
      const auto i = static_cast<Index>(q);
      const std::uint64_t at = std::uint64_t{i % per_lane} * lanes + i / per_lane;
      return at < n ? bytes[at] : std::uint8_t{' '};
    };
    const std::uint64_t length = std::uint64_t{per_lane} * lanes;
    for (std::uint64_t lane = task.thread_id; lane < lanes; lane += task.thread_count) {
      bool previous = lane > 0 && is_letter(text(lane * per_lane - 1));
      // Along its own lane a thread steps by L bytes: no division.
      for (std::uint64_t k = 0; k < per_lane; ++k) {
        const std::uint64_t at = k * lanes + lane;
        const std::uint8_t c = at < n ? bytes[at] : std::uint8_t{' '};
        const bool letter = is_letter(c);
        if (!letter && !is_separator(c)) task.fail(bad_byte);
        if (letter && !previous && !count_word(p, task, text, lane * per_lane + k, length)) return;
        previous = letter;
      }
    }
  }

  XF_HOST_DEVICE XF_FORCE_INLINE static std::uint32_t lowest_bit(std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
    return static_cast<std::uint32_t>(__ffs(static_cast<int>(bits)) - 1);
#else
    return static_cast<std::uint32_t>(std::countr_zero(bits));
#endif
  }

  /// Counters words, distinct_words, digest (CRC-32 of the lines "WORD COUNT\n" sorted by word: the
  /// CPU reference's) and table_slots_used; writes those lines to `result` when set.
  static operator_counters finish(const params& p, std::span<const std::byte> state);
};

}  // namespace xf
