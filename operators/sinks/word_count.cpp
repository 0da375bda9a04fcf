// word_count's finish: the table's words sorted, counted and digested, and the result file.
#include "operators/sinks/word_count.hpp"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/core/errors.hpp"

namespace xf {

operator_counters word_count_op::finish(const params& p, std::span<const std::byte> state) {
  XF_EXPECTS(state.size() == state_bytes(p), "the accumulator word_count asked for");
  const auto* slots = reinterpret_cast<const slot*>(state.data() + sizeof(header));
  std::vector<std::pair<std::string_view, std::uint64_t>> words;
  std::uint64_t total = 0;
  for (std::uint64_t i = 0; i < p.table_slots; ++i) {
    const slot& s = slots[i];
    if (s.hash == 0) continue;
    XF_EXPECTS(s.ready == 1 && s.length >= 1 && s.length <= max_letters, "a claimed slot holds a word");
    words.emplace_back(std::string_view(reinterpret_cast<const char*>(s.letters), s.length), s.count);
    total += s.count;
  }
  std::sort(words.begin(), words.end());
  std::string lines;
  lines.reserve(words.size() * 16);
  for (const auto& [word, count] : words) {
    char number[24];
    const auto end = std::to_chars(number, number + sizeof number, count).ptr;
    lines.append(word).append(" ").append(number, end).append("\n");
  }
  const auto digest =
      static_cast<std::uint64_t>(crc32_z(0, reinterpret_cast<const Bytef*>(lines.data()), lines.size()));
  if (!p.result.empty()) write_result_file(p.result, lines);
  return {{"words", total},
          {"distinct_words", words.size()},
          {"digest", digest},
          {"table_slots_used", reinterpret_cast<const header*>(state.data())->used}};
}

}  // namespace xf
