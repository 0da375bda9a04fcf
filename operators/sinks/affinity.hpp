// The BigKernel paper's transaction-affinity query (MasterCard Affinity) as two GPU sinks, one per pass over
// the purchase records' (card, merchant) fields, which a prefetch_varlen_source gathers:
//   affinity_cards  — pass 1: the distinct cards that bought at merchant A, into a set in device memory;
//                     finish writes them to a file (sorted u64s).
//   affinity_shared — pass 2: starts from that file (prepare), and collects the distinct (merchant B, card)
//                     pairs of records whose card is in the set, B ≠ A; finish counts the cards per B.
// Input frames (u32): n records field by field, fields '4:12' with 4-byte items: card's low words [0, n),
// high words [n, 2n), merchants [2n, 3n).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "framework/core/exec_space.hpp"
#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"
#include "operators/sinks/result_file.hpp"
#include "operators/sinks/u64_set.hpp"

namespace xf {

namespace affinity_frame {
inline constexpr std::uint32_t bad_frame = 1;   ///< not u32, or not a whole number of records
inline constexpr std::uint32_t table_full = 2;  ///< a set is 3/4 full
inline constexpr std::uint32_t bad_card = 3;    ///< card 2^64 - 1 (the sets store card + 1)

inline const char* failure_reason(std::uint32_t code) {
  switch (code) {
    case bad_frame:
      return "not a u32 frame of whole (card, merchant) records: gather fields '4:12' with item_bytes 4";
    case table_full:
      return "a set is 3/4 full: raise card_slots or pair_slots";
    case bad_card:
      return "card number 2^64 - 1, which the sets cannot hold";
    default:
      return nullptr;
  }
}

/// Records in a frame of `count` u32 elements, or fails the frame.
template <class T>
XF_HOST_DEVICE std::uint64_t records_of(const frame_task<T>& task) {
  if (!std::is_same_v<T, std::uint32_t> || task.count % 3 != 0) {
    task.fail(bad_frame);
    return 0;
  }
  return task.count / 3;
}

/// Record r's card of a frame of n records.
XF_HOST_DEVICE XF_FORCE_INLINE std::uint64_t card_at(const std::uint32_t* in, std::uint64_t n,
                                                     std::uint64_t r) {
  return in[r] | std::uint64_t{in[n + r]} << 32;
}
}  // namespace affinity_frame

/// A set's size, and where its slots begin, in an accumulator: a 64-byte header, then the slots.
struct affinity_header {
  std::uint64_t cards;  ///< affinity_shared: cards loaded by prepare
  std::uint64_t used;   ///< slots claimed so far
  std::uint64_t reserved[6];
};
static_assert(sizeof(affinity_header) == 64);

struct affinity_cards_op {
  static constexpr char class_name[] = "affinity_cards";
  static constexpr element_set elements{element_type::u32};

  struct params {
    std::uint32_t merchant = 0;
    std::uint64_t card_slots = std::uint64_t{1} << 20;
    path_text result;
  };

  static void describe(operator_schema<params>& s);
  static const char* failure_reason(std::uint32_t code) { return affinity_frame::failure_reason(code); }
  static std::uint64_t state_bytes(const params& p) { return sizeof(affinity_header) + p.card_slots * 8; }

  template <class T>
  XF_HOST_DEVICE static void compute(const params& p, const frame_task<T>& task) {
    const std::uint64_t n = affinity_frame::records_of(task);
    if constexpr (std::is_same_v<T, std::uint32_t>) {
      auto* head = reinterpret_cast<affinity_header*>(task.state);
      auto* cards = reinterpret_cast<std::uint64_t*>(task.state + sizeof(affinity_header));
      for (std::uint64_t r = task.thread_id; r < n; r += task.thread_count) {
        if (task.in[2 * n + r] != p.merchant) continue;
        const std::uint64_t card = affinity_frame::card_at(task.in, n, r);
        if (card == ~std::uint64_t{0}) {
          task.fail(affinity_frame::bad_card);
          return;
        }
        bool inserted = false;
        if (u64_set::insert(cards, p.card_slots, card + 1, &inserted) == u64_set::not_found ||
            (inserted &&
             accumulator_atomic_ref<std::uint64_t>(head->used).fetch_add(1, mo::memory_order_relaxed) >=
                 p.card_slots / 4 * 3)) {
          task.fail(affinity_frame::table_full);
          return;
        }
      }
    }
  }

  /// Counters cards_at_merchant; writes the cards, sorted, as u64 little-endian to `result` when set.
  static operator_counters finish(const params& p, std::span<const std::byte> state);
};

struct affinity_shared_op {
  static constexpr char class_name[] = "affinity_shared";
  static constexpr element_set elements{element_type::u32};

  struct params {
    std::uint32_t merchant = 0;
    path_text cards;
    std::uint64_t card_slots = std::uint64_t{1} << 20;
    std::uint64_t pair_slots = std::uint64_t{1} << 22;
    path_text result;
  };

  static void describe(operator_schema<params>& s);
  static const char* failure_reason(std::uint32_t code) { return affinity_frame::failure_reason(code); }
  static std::uint64_t state_bytes(const params& p) {
    return sizeof(affinity_header) + (p.card_slots + p.pair_slots) * 8;
  }
  /// Loads affinity_cards' file into the card set; std::runtime_error naming the file when it cannot be
  /// read, is not whole u64s, or holds more cards than 3/4 of card_slots.
  static void prepare(const params& p, std::span<std::byte> state);

  template <class T>
  XF_HOST_DEVICE static void compute(const params& p, const frame_task<T>& task) {
    const std::uint64_t n = affinity_frame::records_of(task);
    if constexpr (std::is_same_v<T, std::uint32_t>) {
      auto* head = reinterpret_cast<affinity_header*>(task.state);
      const auto* cards = reinterpret_cast<const std::uint64_t*>(task.state + sizeof(affinity_header));
      auto* pairs = reinterpret_cast<std::uint64_t*>(task.state + sizeof(affinity_header) + p.card_slots * 8);
      for (std::uint64_t r = task.thread_id; r < n; r += task.thread_count) {
        const std::uint32_t merchant = task.in[2 * n + r];
        if (merchant == p.merchant) continue;
        const std::uint64_t card = affinity_frame::card_at(task.in, n, r);
        if (card == ~std::uint64_t{0}) {
          task.fail(affinity_frame::bad_card);
          return;
        }
        const std::uint64_t slot = u64_set::find(cards, p.card_slots, card + 1);
        if (slot == u64_set::not_found) continue;  // this card never bought at A
        // The pair as one key: the merchant, and the card by its slot (card_slots ≤ 2^31).
        bool inserted = false;
        if (u64_set::insert(pairs, p.pair_slots, (std::uint64_t{merchant} << 32 | slot) + 1, &inserted) ==
                u64_set::not_found ||
            (inserted &&
             accumulator_atomic_ref<std::uint64_t>(head->used).fetch_add(1, mo::memory_order_relaxed) >=
                 p.pair_slots / 4 * 3)) {
          task.fail(affinity_frame::table_full);
          return;
        }
      }
    }
  }

  /// Counters cards_at_merchant, shared_merchants, pairs and digest (CRC-32 of the shared merchants as
  /// 12-byte entries, merchant u32 then cards u64, by merchant: the CPU reference's); writes the lines
  /// "MERCHANT CARDS\n" to `result` when set.
  static operator_counters finish(const params& p, std::span<const std::byte> state);
};

}  // namespace xf
