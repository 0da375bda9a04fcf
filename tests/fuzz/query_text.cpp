// Fuzz target: the query operator's text. The input's first three lines are `where`, `select` and
// `group_by`; the bytes after them fill a frame's values. The texts go through what the operator's
// parameters do (store_where / store_select / store_group_by: length and syntax) and compile_query against
// a columnar topic of six columns; a program that compiles is then run over an indexed frame, where the
// skip rule must hold: a row that matches lies in a range the index says may match (skipping it would lose
// the row).
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "operators/olap/query_program.hpp"
#include "operators/olap/query_text.hpp"
#include "tests/fuzz/fuzz_target.hpp"
#include "topics/columnar_view.hpp"

namespace xf::fuzz {
namespace {

/// a (u32), b (i32), c (f64), d (u8), s (char(4), bloom), e (u64, bloom): 512 rows a frame, so that several
/// pages of each column and both bloom filters are in play.
const topic_info& query_topic() {
  static const topic_info info = [] {
    topic_info t;
    t.name = "t";
    const std::vector<column_layout> layouts = {
        {element_type::u32, 0, 0, 0}, {element_type::i32, 0, 0, 0},  {element_type::f64, 0, 0, 0},
        {element_type::u8, 0, 0, 0},  {element_type::u8, 4, 256, 3}, {element_type::u64, 0, 1024, 4}};
    columnar_geometry g{};
    if (!make_columnar_geometry(layouts, 512, g).empty()) std::abort();
    t.columnar = g;
    t.frame_bytes = g.frame_bytes();
    t.column_names = {"a", "b", "c", "d", "s", "e"};
    return t;
  }();
  return info;
}

struct free_bytes {
  void operator()(std::byte* p) const noexcept { std::free(p); }
};

}  // namespace
}  // namespace xf::fuzz

XF_FUZZ_TARGET(query_text) {
  std::string_view rest = as_text(data);
  std::string texts[3];
  for (std::string& text : texts) {
    const std::size_t end = rest.find('\n');
    text = std::string(rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  }
  olap::where_text where{};
  olap::select_text select{};
  olap::column_text group{};
  if (*olap::store_where(texts[0], where) != '\0' || *olap::store_select(texts[1], select) != '\0' ||
      *olap::store_group_by(texts[2], group) != '\0')
    return 0;
  fuzz_expect(where.str() == texts[0] && select.str() == texts[1] && group.str() == texts[2],
              "a stored text differs from the parameter's (a NUL inside it?)");
  const topic_info& topic = query_topic();
  olap::query_program q{};
  if (olap::compile_query(where.str(), select.str(), group.str(), topic, q)) return 0;
  (void)olap::output_names(q);

  // A frame of 0 … 512 rows whose values come from the input's remaining bytes (small numbers and a few
  // words, so that the constants fuzzing writes meet them).
  const columnar_geometry& g = *topic.columnar;
  const std::unique_ptr<std::byte, free_bytes> frame(
      static_cast<std::byte*>(std::aligned_alloc(columnar_page_bytes, g.frame_bytes())));
  std::memset(frame.get(), 0, g.frame_bytes());
  const columnar_writer w(g, frame.get());
  const auto rows = static_cast<std::uint32_t>(rest.empty() ? 0 : 1 + static_cast<std::uint8_t>(rest[0]) * 2);
  const auto byte_at = [&](std::size_t i) -> std::uint8_t {
    return rest.empty() ? 0 : static_cast<std::uint8_t>(rest[i % rest.size()]);
  };
  static constexpr const char* words[] = {"fig", "kiwi", "lime", "pear"};
  for (std::uint32_t r = 0; r < rows; ++r) {
    const std::uint8_t v = byte_at(r + 1);
    w.set(0, r, static_cast<std::uint32_t>(v));
    w.set(1, r, static_cast<std::int32_t>(v) - 128);
    w.set(2, r, static_cast<double>(static_cast<int>(v) - 128) / 4.0);
    w.set(3, r, v);
    std::memset(w.value_at(4, r), 0, 4);
    std::memcpy(w.value_at(4, r), words[v % 4], std::strlen(words[v % 4]));
    w.set(5, r, std::uint64_t{v} * 1000003u);
  }
  w.finish(rows);
  for (std::uint32_t r = 0; r < rows; ++r)
    if (olap::row_matches(q, frame.get(), r)) {
      fuzz_expect(olap::rows_may_match(q, frame.get(), r, r + 1),
                  "row " + std::to_string(r) + " matches, but the index says its row may not");
      fuzz_expect(olap::rows_may_match(q, frame.get(), 0, rows),
                  "row " + std::to_string(r) + " matches, but the index says no row of the frame may");
    }
  return 0;
}
