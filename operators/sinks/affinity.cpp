// The affinity sinks' host side: parameters, pass 2's card set from pass 1's file, and both finishes.
#include "operators/sinks/affinity.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "framework/core/errors.hpp"

namespace xf {
namespace {

std::string power_of_two_problem(std::uint64_t slots, const char* name) {
  if ((slots & (slots - 1)) != 0) return std::string(name) + " must be a power of two";
  return "";
}

template <class Params>
void describe_common(operator_schema<Params>& s) {
  s.param(&Params::merchant, "merchant", "A, the merchant the query is about", 0);
  s.bytes(&Params::card_slots, "card_slots",
          "slots of the set of A's cards (8 bytes each, a power of two): room for 3/4 as many cards",
          std::uint64_t{1} << 20, 16, static_cast<double>(std::uint64_t{1} << 31));
}

const std::uint64_t* slots_after_header(std::span<const std::byte> state) {
  return reinterpret_cast<const std::uint64_t*>(state.data() + sizeof(affinity_header));
}

}  // namespace

void affinity_cards_op::describe(operator_schema<params>& s) {
  s.describe(
       "BigKernel affinity, pass 1 (GPU sink): the distinct cards that bought at merchant A, from a "
       "prefetch_varlen_source's (card, merchant) fields; writes them (sorted u64s) for affinity_shared")
      .whole_frames();
  describe_common(s);
  s.parsed(&params::result, "result", "file for the cards (sorted u64, little-endian; '': none)", "",
           parse_path_text);
  s.check_params([](const params& p) { return power_of_two_problem(p.card_slots, "card_slots"); });
}

operator_counters affinity_cards_op::finish(const params& p, std::span<const std::byte> state) {
  XF_EXPECTS(state.size() == state_bytes(p), "the accumulator affinity_cards asked for");
  const std::uint64_t* slots = slots_after_header(state);
  std::vector<std::uint64_t> cards;
  for (std::uint64_t i = 0; i < p.card_slots; ++i)
    if (slots[i] != 0) cards.push_back(slots[i] - 1);
  std::sort(cards.begin(), cards.end());
  if (!p.result.empty())
    write_result_file(p.result,
                      {reinterpret_cast<const char*>(cards.data()), cards.size() * sizeof(std::uint64_t)});
  return {{"cards_at_merchant", cards.size()}};
}

void affinity_shared_op::describe(operator_schema<params>& s) {
  s.describe(
       "BigKernel affinity, pass 2 (GPU sink): for the cards affinity_cards found at merchant A, the "
       "distinct cards each other merchant shares with A; counters digest (the CPU reference's), "
       "shared_merchants, and the optional 'MERCHANT CARDS' result file")
      .whole_frames();
  describe_common(s);
  s.parsed(&params::cards, "cards", "affinity_cards' result file (A's cards)", "", parse_path_text);
  s.bytes(&params::pair_slots, "pair_slots",
          "slots of the set of (merchant, card) pairs (8 bytes each, a power of two): room for 3/4 as many",
          std::uint64_t{1} << 22, 16, static_cast<double>(std::uint64_t{1} << 40));
  s.parsed(&params::result, "result", "file for the 'MERCHANT CARDS' lines, by merchant ('': none)", "",
           parse_path_text);
  s.writes_file();
  s.check_params([](const params& p) -> std::string {
    if (p.cards.empty()) return "cards must name affinity_cards' result file";
    if (std::string why = power_of_two_problem(p.card_slots, "card_slots"); !why.empty()) return why;
    return power_of_two_problem(p.pair_slots, "pair_slots");
  });
}

void affinity_shared_op::prepare(const params& p, std::span<std::byte> state) {
  XF_EXPECTS(state.size() == state_bytes(p), "the accumulator affinity_shared asked for");
  const std::string path = p.cards.text;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cards file '" + path + "': cannot open: " + std::strerror(errno));
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() % sizeof(std::uint64_t) != 0)
    throw std::runtime_error("cards file '" + path + "': " + std::to_string(bytes.size()) +
                             " bytes, not whole u64 cards (is it affinity_cards' result?)");
  const std::uint64_t count = bytes.size() / sizeof(std::uint64_t);
  if (count > p.card_slots / 4 * 3)
    throw std::runtime_error("cards file '" + path + "': " + std::to_string(count) +
                             " cards need card_slots of at least " + std::to_string(count * 4 / 3 + 1) +
                             " (a power of two), not " + std::to_string(p.card_slots));
  auto* head = reinterpret_cast<affinity_header*>(state.data());
  auto* cards = reinterpret_cast<std::uint64_t*>(state.data() + sizeof(affinity_header));
  for (std::uint64_t k = 0; k < count; ++k) {
    std::uint64_t card = 0;
    std::memcpy(&card, bytes.data() + k * sizeof card, sizeof card);
    if (card == ~std::uint64_t{0})
      throw std::runtime_error("cards file '" + path + "': card 2^64 - 1 at byte offset " +
                               std::to_string(k * 8));
    bool inserted = false;
    u64_set::insert(cards, p.card_slots, card + 1, &inserted);
    head->cards += inserted;
  }
}

operator_counters affinity_shared_op::finish(const params& p, std::span<const std::byte> state) {
  XF_EXPECTS(state.size() == state_bytes(p), "the accumulator affinity_shared asked for");
  const std::uint64_t* pairs = slots_after_header(state) + p.card_slots;
  std::map<std::uint32_t, std::uint64_t> shared;  // merchant → distinct cards it shares with A
  std::uint64_t pair_count = 0;
  for (std::uint64_t i = 0; i < p.pair_slots; ++i) {
    if (pairs[i] == 0) continue;
    ++shared[static_cast<std::uint32_t>((pairs[i] - 1) >> 32)];
    ++pair_count;
  }
  std::vector<std::byte> entries;  // merchant u32, cards u64: the reference's digest input
  std::string lines;
  for (const auto& [merchant, cards] : shared) {
    std::byte entry[12];
    std::memcpy(entry, &merchant, 4);
    std::memcpy(entry + 4, &cards, 8);
    entries.insert(entries.end(), entry, entry + 12);
    lines += std::to_string(merchant) + " " + std::to_string(cards) + "\n";
  }
  const auto digest =
      static_cast<std::uint64_t>(crc32_z(0, reinterpret_cast<const Bytef*>(entries.data()), entries.size()));
  if (!p.result.empty()) write_result_file(p.result, lines);
  return {{"cards_at_merchant", reinterpret_cast<const affinity_header*>(state.data())->cards},
          {"shared_merchants", shared.size()},
          {"pairs", pair_count},
          {"digest", digest}};
}

}  // namespace xf
