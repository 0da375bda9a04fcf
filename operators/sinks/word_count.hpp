// word_count: the BigKernel paper's word count as a GPU sink. Every virtual thread looks at bytes of the
// frame (a text_source's: whole words), and for each word that starts there adds one to the word's slot in
// a hash table in the operator's accumulator — device memory for the whole run, copied back once at the
// end, where finish() sorts the words and writes the result. Only the text crosses PCIe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "framework/exec_space.hpp"
#include "framework/operator.hpp"
#include "framework/operator_schema.hpp"
#include "framework/system_atomic.hpp"
#include "operators/sinks/result_file.hpp"

namespace xf {

/// Words are maximal runs of lowercase letters 'a'..'z', separated by spaces and newlines (the word-count
/// dataset's format, apps/wordcount/wordcount_format.hpp). Counts are exact: the table compares words by
/// their letters, not only their hashes. Frames must hold whole words (text_source does that). Fails the
/// frame with code bad_byte for any other byte, long_word for a word of more than 40 letters (the table
/// keeps words inline), and table_full once more than 3/4 of table_slots hold words.
struct word_count_op {
  static constexpr std::uint32_t bad_byte = 1;
  static constexpr std::uint32_t long_word = 2;
  static constexpr std::uint32_t table_full = 3;
  static constexpr std::uint32_t max_letters = 40;

  struct params {
    std::uint64_t table_slots = std::uint64_t{1} << 20;
    result_path result;
  };

  /// One distinct word: a cache line. `hash` is claimed by compare-exchange (0: free); the claimer then
  /// writes length and letters and stores ready = 1 (release), after which anyone may compare.
  struct slot {
    std::uint64_t hash;
    std::uint64_t count;
    std::uint32_t length;
    std::uint32_t ready;
    char letters[max_letters];
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
    s.parsed(&params::result, "result", "file for the sorted 'WORD COUNT' lines ('' : none)", "",
             parse_result_path);
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

  /// FNV-1a over the letters, never 0 (0 marks a free slot).
  XF_HOST_DEVICE static std::uint64_t hash_of(const std::uint8_t* word, std::uint32_t length) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (std::uint32_t i = 0; i < length; ++i) h = (h ^ word[i]) * 0x100000001b3ull;
    return h != 0 ? h : 1;
  }

  /// Adds one occurrence of the word to the table; false when the table is full.
  XF_HOST_DEVICE static bool add(const params& p, std::byte* state, const std::uint8_t* word,
                                 std::uint32_t length) {
    auto* head = reinterpret_cast<header*>(state);
    auto* slots = reinterpret_cast<slot*>(state + sizeof(header));
    const std::uint64_t h = hash_of(word, length);
    const std::uint64_t mask = p.table_slots - 1;
    for (std::uint64_t probe = 0, i = h & mask; probe < p.table_slots; ++probe, i = (i + 1) & mask) {
      slot& s = slots[i];
      accumulator_atomic_ref<std::uint64_t> hash(s.hash);
      std::uint64_t seen = hash.load(mo::memory_order_relaxed);
      if (seen == 0) {
        if (hash.compare_exchange_strong(seen, h, mo::memory_order_relaxed)) {
          const std::uint64_t used = accumulator_atomic_ref<std::uint64_t>(head->used).fetch_add(1, mo::memory_order_relaxed);
          s.length = length;
          for (std::uint32_t k = 0; k < length; ++k) s.letters[k] = static_cast<char>(word[k]);
          s.count = 1;
          accumulator_atomic_ref<std::uint32_t>(s.ready).store(1u, mo::memory_order_release);
          return used < p.table_slots / 4 * 3;
        }
        // Another thread claimed it meanwhile: `seen` now holds its hash.
      }
      if (seen != h) continue;
      accumulator_atomic_ref<std::uint32_t> ready(s.ready);
      while (ready.load(mo::memory_order_acquire) == 0) {
      }
      bool same = s.length == length;
      for (std::uint32_t k = 0; same && k < length; ++k) same = s.letters[k] == static_cast<char>(word[k]);
      if (same) {
        accumulator_atomic_ref<std::uint64_t>(s.count).fetch_add(1, mo::memory_order_relaxed);
        return true;
      }
    }
    return false;
  }

  template <class T>
  XF_HOST_DEVICE static void compute(const params& p, const frame_task<T>& task) {
    const auto* text = reinterpret_cast<const std::uint8_t*>(task.in);
    const std::uint64_t n = task.count * sizeof(T);
    for (std::uint64_t i = task.thread_id; i < n; i += task.thread_count) {
      const std::uint8_t c = text[i];
      if (!is_letter(c)) {
        if (!is_separator(c)) task.fail(bad_byte);
        continue;
      }
      if (i > 0 && is_letter(text[i - 1])) continue;  // not where a word starts
      std::uint32_t length = 1;
      while (i + length < n && is_letter(text[i + length])) {
        if (++length > max_letters) {
          task.fail(long_word);
          return;
        }
      }
      if (!add(p, task.state, text + i, length)) {
        task.fail(table_full);
        return;
      }
    }
  }

  /// Counters words, distinct_words, digest (CRC-32 of the lines "WORD COUNT\n" sorted by word: the
  /// CPU reference's) and table_slots_used; writes those lines to `result` when set.
  static operator_counters finish(const params& p, std::span<const std::byte> state);
};

}  // namespace xf
