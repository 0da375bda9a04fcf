// query: its text (syntax, binding to a topic's columns), and its answers against a row-by-row reference
// on random tables and random predicates, for several virtual thread counts — so skipping pages by the
// index never changes an answer.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "framework/model/registry.hpp"
#include "operators/builtin.hpp"
#include "operators/olap/query.hpp"
#include "operators/olap/query_text.hpp"
#include "topics/columnar_view.hpp"

namespace xf {
namespace {

/// A table of six columns: a (u32, ascending: zone maps skip ranges of it), b (i32 in −5..5), c (f64),
/// d (u8), s (char(6) from a few words), e (u64 spread wide, with a bloom filter).
struct table {
  std::vector<std::uint32_t> a;
  std::vector<std::int32_t> b;
  std::vector<double> c;
  std::vector<std::uint8_t> d;
  std::vector<std::string> s;
  std::vector<std::uint64_t> e;
  std::size_t rows() const { return a.size(); }
};

const std::vector<std::string> words = {"apple", "pear", "plum", "fig", "kiwi", "lime"};

topic_info table_topic(std::uint32_t rows_per_frame) {
  topic_info info;
  info.name = "t";
  std::vector<column_layout> layouts = {{element_type::u32, 0, 0, 0},  {element_type::i32, 0, 0, 0},
                                        {element_type::f64, 0, 0, 0},  {element_type::u8, 0, 0, 0},
                                        {element_type::u8, 6, 256, 3}, {element_type::u64, 0, 1024, 4}};
  columnar_geometry g{};
  REQUIRE(make_columnar_geometry(layouts, rows_per_frame, g).empty());
  info.columnar = g;
  info.frame_bytes = g.frame_bytes();
  info.column_names = {"a", "b", "c", "d", "s", "e"};
  return info;
}

table random_table(std::size_t rows, std::mt19937_64& rng) {
  table t;
  std::uint32_t a = 0;
  for (std::size_t i = 0; i < rows; ++i) {
    a += static_cast<std::uint32_t>(rng() % 4);
    t.a.push_back(a);
    t.b.push_back(static_cast<std::int32_t>(rng() % 11) - 5);
    t.c.push_back(static_cast<double>(static_cast<std::int64_t>(rng() % 2001) - 1000) / 8.0);
    t.d.push_back(static_cast<std::uint8_t>(rng() % 256));
    t.s.push_back(words[rng() % words.size()]);
    t.e.push_back(rng() % 100000 * 1000003ull);
  }
  return t;
}

/// The table's frames, each indexed.
std::vector<std::vector<std::byte>> frames_of(const table& t, const columnar_geometry& g) {
  std::vector<std::vector<std::byte>> frames;
  for (std::size_t first = 0; first < t.rows(); first += g.rows_per_frame) {
    const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(g.rows_per_frame, t.rows() - first));
    std::vector<std::byte> frame(g.frame_bytes());
    const columnar_writer w(g, frame.data());
    for (std::uint32_t r = 0; r < n; ++r) {
      const std::size_t i = first + r;
      w.set(0, r, t.a[i]);
      w.set(1, r, t.b[i]);
      w.set(2, r, t.c[i]);
      w.set(3, r, t.d[i]);
      std::memset(w.value_at(4, r), 0, 6);
      std::memcpy(w.value_at(4, r), t.s[i].data(), t.s[i].size());
      w.set(5, r, t.e[i]);
    }
    w.finish(n);
    frames.push_back(std::move(frame));
  }
  return frames;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct query_run {
  std::string result;
  operator_counters counters;
};

/// Each frame shared by `thread_counts.size()` items, part j run on thread_counts[j] virtual threads (as
/// when a round spreads a block's warps: the parts of one frame run on different thread counts).
query_run run_query_in_parts(const table& t, const topic_info& topic, param_map values,
                             const std::vector<std::uint32_t>& thread_counts) {
  operator_registry registry;
  register_builtin_operators(registry);
  const operator_entry* entry = registry.find("query");
  REQUIRE(entry != nullptr);
  const auto path =
      std::filesystem::temp_directory_path() / ("xf_query_parts_" + std::to_string(::getpid()) + ".csv");
  values["result"] = param_value{path.string()};
  const auto frames = frames_of(t, *topic.columnar);
  auto kernel = entry->make_host_kernel(values, {topic});
  for (std::size_t k = 0; k < frames.size(); ++k)
    for (std::uint32_t part = 0; part < thread_counts.size(); ++part) {
      frame_call c =
          whole_frame_call(frame_in{frames[k].data(), frames[k].size(), element_type::u8}, nullptr, k);
      c.part = part;
      c.parts = static_cast<std::uint32_t>(thread_counts.size());
      c.thread_count = thread_counts[part];
      std::uint64_t failure = 0;
      c.failure = &failure;
      kernel->run(c, element_type::u8, 0, c.thread_count);
      REQUIRE(failure == 0);
    }
  query_run out;
  out.counters = kernel->finish();
  out.result = read_file(path);
  std::filesystem::remove(path);
  return out;
}

/// Runs `query` over the frames on the host, `threads` virtual threads a frame.
query_run run_query(const table& t, const topic_info& topic, param_map values, std::uint32_t threads) {
  return run_query_in_parts(t, topic, std::move(values), {threads});
}

/// A random predicate as text and as a function of the row.
struct predicate {
  std::string text;
  std::function<bool(const table&, std::size_t)> holds;
};

predicate random_atom(std::mt19937_64& rng, const table& t) {
  const auto pick_row = [&] { return rng() % t.rows(); };
  switch (rng() % 8) {
    case 0: {
      const std::uint32_t lo = t.a[pick_row()], hi = lo + static_cast<std::uint32_t>(rng() % 200);
      return {"a BETWEEN " + std::to_string(lo) + " AND " + std::to_string(hi),
              [=](const table& x, std::size_t i) { return lo <= x.a[i] && x.a[i] <= hi; }};
    }
    case 1: {
      const std::uint32_t v = t.a[pick_row()];
      return {"a < " + std::to_string(v), [=](const table& x, std::size_t i) { return x.a[i] < v; }};
    }
    case 2: {
      const std::int32_t v = static_cast<std::int32_t>(rng() % 11) - 5;
      return {"b = " + std::to_string(v), [=](const table& x, std::size_t i) { return x.b[i] == v; }};
    }
    case 3: {
      const std::int32_t v = static_cast<std::int32_t>(rng() % 11) - 5;
      return {"b >= " + std::to_string(v), [=](const table& x, std::size_t i) { return x.b[i] >= v; }};
    }
    case 4: {
      const double v = static_cast<double>(static_cast<std::int64_t>(rng() % 2001) - 1000) / 8.0;
      std::ostringstream text;
      text << "c > " << v;
      return {text.str(), [=](const table& x, std::size_t i) { return x.c[i] > v; }};
    }
    case 5: {
      const std::uint8_t v1 = static_cast<std::uint8_t>(rng()), v2 = static_cast<std::uint8_t>(rng());
      return {"d IN (" + std::to_string(v1) + ", " + std::to_string(v2) + ")",
              [=](const table& x, std::size_t i) { return x.d[i] == v1 || x.d[i] == v2; }};
    }
    case 6: {
      const std::string w = words[rng() % words.size()];
      return {"s = '" + w + "'", [=](const table& x, std::size_t i) { return x.s[i] == w; }};
    }
    default: {
      const std::uint64_t v = rng() % 3 == 0 ? t.e[pick_row()] : rng() % 100000 * 1000003ull + 1;
      return {"e = " + std::to_string(v), [=](const table& x, std::size_t i) { return x.e[i] == v; }};
    }
  }
}

predicate random_predicate(std::mt19937_64& rng, const table& t, int depth) {
  if (depth == 0 || rng() % 3 == 0) return random_atom(rng, t);
  const predicate l = random_predicate(rng, t, depth - 1);
  switch (rng() % 3) {
    case 0: {
      const predicate r = random_predicate(rng, t, depth - 1);
      return {"(" + l.text + ") AND (" + r.text + ")",
              [=](const table& x, std::size_t i) { return l.holds(x, i) && r.holds(x, i); }};
    }
    case 1: {
      const predicate r = random_predicate(rng, t, depth - 1);
      return {"(" + l.text + ") OR (" + r.text + ")",
              [=](const table& x, std::size_t i) { return l.holds(x, i) || r.holds(x, i); }};
    }
    default:
      return {"NOT (" + l.text + ")", [=](const table& x, std::size_t i) { return !l.holds(x, i); }};
  }
}

std::string number(double v) {
  char buffer[32];
  return std::string(buffer, std::to_chars(buffer, buffer + sizeof buffer, v).ptr);
}

}  // namespace

TEST_CASE("query.text_syntax_errors_name_the_character") {
  CHECK(olap::where_syntax("") == "");
  CHECK(olap::where_syntax("K2 = 2 AND NOT (K100 = 3 OR K4 IN (1, 2))") == "");
  CHECK(olap::where_syntax("a BETWEEN 1 AND 2 AND s NOT IN ('x', 'y''s')") == "");
  CHECK(olap::where_syntax("a = ") ==
        "at character 5: expected a constant (a number or 'text'), found the end");
  CHECK(olap::where_syntax("a == 2") ==
        "at character 4: expected a constant (a number or 'text'), found '='");
  CHECK(olap::where_syntax("(a = 1") == "at character 7: expected ')', found the end");
  CHECK(olap::where_syntax("a = 1 b = 2") == "at character 7: expected AND, OR or the end, found 'b'");
  CHECK(olap::where_syntax("a = 'x") == "at character 5: a quoted text that never ends");
  CHECK(olap::where_syntax("a # 1") == "at character 3: unexpected '#'");
  CHECK(olap::select_syntax("COUNT(*), SUM(x), min(y)") == "");
  CHECK(olap::select_syntax("") ==
        "at character 1: select names nothing (COUNT(*), SUM(col), MIN, MAX or columns)");
  CHECK(olap::select_syntax("COUNT(x)") == "at character 7: COUNT takes '*' (every matching row), found 'x'");
  CHECK(olap::select_syntax("SUM(x") == "at character 6: expected ')', found the end");
}

TEST_CASE("query.binding_reports_the_parameter_and_the_problem") {
  const topic_info topic = table_topic(3000);
  olap::query_program q{};
  const auto bind = [&](const std::string& where, const std::string& select, const std::string& group = "") {
    return olap::compile_query(where, select, group, topic, q);
  };
  CHECK(!bind("a < 10 AND s = 'fig'", "COUNT(*), SUM(c), MIN(b), MAX(e)"));
  CHECK(q.bound);
  CHECK(q.slot_count == 5);
  auto p = bind("x = 1", "COUNT(*)");
  REQUIRE(p);
  CHECK(p->key == "where");
  CHECK(p->message == "topic 't' has no column 'x' (did you mean 'a'?)");
  p = bind("", "SUM(aa)");
  REQUIRE(p);
  CHECK(p->key == "select");
  CHECK(p->message == "topic 't' has no column 'aa' (did you mean 'a'?)");
  p = bind("d = 300", "COUNT(*)");
  REQUIRE(p);
  CHECK(p->message == "at character 5: 300 is out of the range of column 'd' (u8): 0 to 255");
  p = bind("a = -1", "COUNT(*)");
  REQUIRE(p);
  CHECK(p->message == "at character 5: -1 is out of the range of column 'a' (u32): 0 to 4294967295");
  p = bind("a = 1.5", "COUNT(*)");
  REQUIRE(p);
  CHECK(p->message == "at character 5: 1.5 is not an integer, but column 'a' (u32) holds integers");
  p = bind("s = 5", "COUNT(*)");
  REQUIRE(p);
  CHECK(p->message == "at character 5: 5 is a number, but column 's' holds text (char(6)): quote it");
  p = bind("s = 'bananas'", "COUNT(*)");
  REQUIRE(p);
  CHECK(p->message == "at character 5: 'bananas' is longer than column 's' (char(6))");
  p = bind("a = 'x'", "COUNT(*)");
  REQUIRE(p);
  CHECK(p->message == "at character 5: 'x' is text, but column 'a' (u32) holds numbers");
  p = bind("", "a, COUNT(*)");
  REQUIRE(p);
  CHECK(p->key == "select");
  p = bind("", "SUM(s)");
  REQUIRE(p);
  CHECK(p->message == "SUM(s): column 's' holds text; aggregates take numeric columns");
  p = bind("", "COUNT(*)", "e");
  REQUIRE(p);
  CHECK(p->key == "group_by");
  CHECK(!bind("", "b, COUNT(*), SUM(a)", "b"));
  CHECK(olap::output_names(q) == std::vector<std::string>{"b", "COUNT(*)", "SUM(a)"});
  topic_info rows = topic;
  rows.columnar.reset();
  p = bind("", "COUNT(*)");
  CHECK(!p);
  p = olap::compile_query("", "COUNT(*)", "", rows, q);
  REQUIRE(p);
  CHECK(p->message == "reads columnar topics, but topic 't' holds rows (layout: row)");
}

TEST_CASE("query.answers_equal_a_row_by_row_reference_on_random_tables") {
  std::mt19937_64 rng(2026);
  for (int round = 0; round < 6; ++round) {
    const std::uint32_t rows_per_frame = 1500 + static_cast<std::uint32_t>(rng() % 3000);
    const topic_info topic = table_topic(rows_per_frame);
    const table t = random_table(rows_per_frame * 2 + 1 + rng() % rows_per_frame, rng);
    for (int k = 0; k < 8; ++k) {
      const predicate pred = random_predicate(rng, t, 3);
      CAPTURE(pred.text);
      std::uint64_t count = 0;
      std::int64_t sum_b = 0;
      double sum_c = 0;
      std::uint32_t min_a = std::numeric_limits<std::uint32_t>::max();
      std::uint64_t max_e = 0;
      std::string projected = "a,s\n";
      std::map<std::int32_t, std::pair<std::uint64_t, std::uint64_t>> groups;  // b → (rows, sum d)
      for (std::size_t i = 0; i < t.rows(); ++i) {
        if (!pred.holds(t, i)) continue;
        ++count;
        sum_b += t.b[i];
        sum_c += t.c[i];
        min_a = std::min(min_a, t.a[i]);
        max_e = std::max(max_e, t.e[i]);
        projected += std::to_string(t.a[i]) + "," + t.s[i] + "\n";
        groups[t.b[i]].first += 1;
        groups[t.b[i]].second += t.d[i];
      }
      std::string expected = "COUNT(*),SUM(b),SUM(c),MIN(a),MAX(e)\n" + std::to_string(count) + "," +
                             std::to_string(sum_b) + "," + number(sum_c) + "," +
                             (count ? std::to_string(min_a) : "") + "," +
                             (count ? std::to_string(max_e) : "") + "\n";
      std::string grouped = "b,COUNT(*),SUM(d)\n";
      for (const auto& [b, v] : groups)
        grouped += std::to_string(b) + "," + std::to_string(v.first) + "," + std::to_string(v.second) + "\n";
      for (std::uint32_t threads : {1u, 7u, 64u}) {
        CAPTURE(threads);
        const query_run aggregate =
            run_query(t, topic,
                      {{"where", param_value{pred.text}},
                       {"select", param_value{std::string("COUNT(*), SUM(b), SUM(c), MIN(a), MAX(e)")}}},
                      threads);
        CHECK(aggregate.result == expected);
        CHECK(aggregate.counters.at("rows_matched") == count);
        CHECK(aggregate.counters.at("rows_scanned") == t.rows());
        const query_run projection = run_query(
            t, topic, {{"where", param_value{pred.text}}, {"select", param_value{std::string("a, s")}}},
            threads);
        CHECK(projection.result == projected);
        const query_run by_group = run_query(t, topic,
                                             {{"where", param_value{pred.text}},
                                              {"select", param_value{std::string("COUNT(*), SUM(d)")}},
                                              {"group_by", param_value{std::string("b")}}},
                                             threads);
        CHECK(by_group.result == grouped);
      }
    }
  }
}

TEST_CASE("query.parts_of_a_frame_on_different_thread_counts_read_and_count_every_page_once") {
  // A frame shared by several items whose thread counts differ (a spread round gives an item more warps
  // than its own): the answer and the page counters equal one item's over the whole frame, for columns
  // whose pages hold different row counts (each page judged on its own) and for uniform ones.
  std::mt19937_64 rng(11);
  const std::uint32_t rows_per_frame = 3000;
  const topic_info topic = table_topic(rows_per_frame);
  const table t = random_table(rows_per_frame * 3 + 123, rng);
  for (const char* select : {"a, s", "COUNT(*), SUM(b), MAX(e)", "COUNT(*), MIN(a)"}) {
    for (int k = 0; k < 6; ++k) {
      const predicate pred = random_predicate(rng, t, 2);
      CAPTURE(select);
      CAPTURE(pred.text);
      const param_map values{{"where", param_value{pred.text}}, {"select", param_value{std::string(select)}}};
      const query_run whole = run_query(t, topic, values, 64);
      for (const std::vector<std::uint32_t>& counts :
           {std::vector<std::uint32_t>{64, 96, 32}, {1, 7, 160, 33}, {256, 32}}) {
        const query_run parts = run_query_in_parts(t, topic, values, counts);
        CHECK(parts.result == whole.result);
        CHECK(parts.counters == whole.counters);
      }
    }
  }
}

TEST_CASE("query.rows_judged_together_are_judged_as_one_by_one") {
  std::mt19937_64 rng(404);
  const topic_info topic = table_topic(2000);
  const table t = random_table(2000, rng);
  const auto frames = frames_of(t, *topic.columnar);
  REQUIRE(frames.size() == 1);
  const std::byte* frame = frames[0].data();
  for (int k = 0; k < 40; ++k) {
    const predicate pred = random_predicate(rng, t, 3);
    CAPTURE(pred.text);
    olap::query_program q{};
    REQUIRE_FALSE(olap::compile_query(pred.text, "COUNT(*)", "", topic, q).has_value());
    // Strides of a lone thread, an odd team and a warp; ends that cut a batch short, or leave it empty.
    for (const std::uint32_t stride : {1u, 7u, 32u}) {
      const std::uint32_t end = 1 + static_cast<std::uint32_t>(rng() % t.rows());
      for (std::uint32_t r = static_cast<std::uint32_t>(rng() % 50); r < end; r += 97) {
        const std::uint32_t four = olap::rows_match<4>(q, frame, r, stride, end);
        const std::uint32_t three = olap::rows_match<3>(q, frame, r, stride, end);
        for (std::uint32_t b = 0; b < 4; ++b) {
          const std::uint32_t row = r + b * stride;
          const bool expected = row < end && pred.holds(t, row);
          CHECK(((four >> b) & 1u) == expected);
          if (b < 3) CHECK(((three >> b) & 1u) == expected);
          if (row < end) CHECK(olap::row_matches(q, frame, row) == expected);
        }
        CHECK((three >> 3) == 0);
      }
    }
  }
}

TEST_CASE("query.each_skip_level_reads_less_and_answers_the_same") {
  std::mt19937_64 rng(11);
  const topic_info topic = table_topic(4096);
  const table t = random_table(4096 * 3 + 777, rng);
  const auto frames = frames_of(t, *topic.columnar);
  operator_registry registry;
  register_builtin_operators(registry);
  const operator_entry* entry = registry.find("query");
  REQUIRE(entry != nullptr);
  const auto bytes_read = [&](const param_map& values) {
    const auto kernel = entry->make_host_kernel(values, {topic});
    REQUIRE(kernel->reads_pages());
    std::uint64_t bytes = 0;
    for (const auto& frame : frames) {
      std::vector<frame_range> ranges;
      kernel->pages_read(frame.data(), ranges);
      for (const frame_range& r : ranges) bytes += r.bytes;
    }
    return bytes;
  };
  const std::uint32_t lo = t.a[5000], hi = t.a[5300];
  const std::vector<std::string> wheres = {"a BETWEEN " + std::to_string(lo) + " AND " + std::to_string(hi),
                                           "e = 1", "e = " + std::to_string(t.e[9]),
                                           "b = 2 AND NOT a < " + std::to_string(hi),
                                           random_predicate(rng, t, 3).text};
  for (const std::string& where : wheres) {
    CAPTURE(where);
    std::uint64_t previous = std::numeric_limits<std::uint64_t>::max();
    std::string answer;
    for (const char* level : {"none", "columns", "zones", "blooms"}) {
      CAPTURE(level);
      const param_map values = {{"where", param_value{where}},
                                {"select", param_value{std::string("COUNT(*), SUM(b), MAX(e)")}},
                                {"skip", param_value{std::string(level)}}};
      const std::uint64_t bytes = bytes_read(values);
      if (std::string(level) == "none") CHECK(bytes == frames.size() * topic.columnar->frame_bytes());
      CHECK(bytes <= previous);
      previous = bytes;
      const query_run run = run_query(t, topic, values, 32);
      if (answer.empty()) answer = run.result;
      CHECK(run.result == answer);
    }
  }
  // A value inside every page's range that no row holds (e's values are multiples of 1000003): zones rule
  // out no data page of e, its bloom filters (1024 bits for 512 values: a false positive rate near one
  // half) some.
  const auto read_for = [&](const char* level) {
    return bytes_read(
        {{"where", param_value{std::string("e = 50000150001")}}, {"skip", param_value{std::string(level)}}});
  };
  const std::uint64_t index_bytes = frames.size() * std::uint64_t{topic.columnar->index_pages} * 4096;
  CHECK(read_for("blooms") > index_bytes);
  CHECK(read_for("blooms") < read_for("zones"));
  CHECK(read_for("zones") == read_for("columns"));
}

TEST_CASE("query.pages_bound_holds_every_page_pages_read_keeps") {
  std::mt19937_64 rng(13);
  const topic_info topic = table_topic(4096);
  const table t = random_table(4096 * 2 + 1500, rng);  // the last frame part full
  const auto frames = frames_of(t, *topic.columnar);
  operator_registry registry;
  register_builtin_operators(registry);
  const operator_entry* entry = registry.find("query");
  REQUIRE(entry != nullptr);
  for (int k = 0; k < 30; ++k) {
    const predicate pred = random_predicate(rng, t, 3);
    for (const char* level : {"none", "columns", "zones", "blooms"}) {
      CAPTURE(pred.text);
      CAPTURE(level);
      const auto kernel = entry->make_host_kernel({{"where", param_value{pred.text}},
                                                   {"select", param_value{std::string("COUNT(*), SUM(b)")}},
                                                   {"skip", param_value{std::string(level)}}},
                                                  {topic});
      for (const auto& frame : frames) {
        std::vector<frame_range> read, bound;
        kernel->pages_read(frame.data(), read);
        REQUIRE(kernel->pages_bound(frame.data(), bound));
        // Every byte read lies in one range of the bound.
        for (const frame_range& r : read)
          CHECK(std::any_of(bound.begin(), bound.end(), [&](const frame_range& b) {
            return b.offset <= r.offset && r.offset + r.bytes <= b.offset + b.bytes;
          }));
        // Without an index to read, the bound is what is read.
        if (std::string(level) == "none" || std::string(level) == "columns") CHECK(read == bound);
      }
    }
  }
}

TEST_CASE("query.skips_pages_the_index_rules_out") {
  std::mt19937_64 rng(7);
  const topic_info topic = table_topic(8192);
  const table t = random_table(8192 * 3, rng);
  // a ascends: a narrow range lies in one or two of its pages.
  const std::uint32_t lo = t.a[10000], hi = t.a[10100];
  const query_run range = run_query(
      t, topic, {{"where", param_value{"a BETWEEN " + std::to_string(lo) + " AND " + std::to_string(hi)}}},
      32);
  CHECK(range.counters.at("pages.a") == 24);  // 1024 u32 values a page, 8 pages a frame
  CHECK(range.counters.at("pages_skipped.a") >= 21);
  // e's bloom filter rules out the pages of a value that none holds.
  const query_run point = run_query(t, topic, {{"where", param_value{std::string("e = 1")}}}, 32);
  CHECK(point.counters.at("pages_skipped.e") == point.counters.at("pages.e"));
  CHECK(point.result == "COUNT(*)\n0\n");
  // b = 2 is in nearly every page: none skipped, the answer from every page.
  const query_run common = run_query(t, topic, {{"where", param_value{std::string("b = 2")}}}, 32);
  CHECK(common.counters.at("pages_skipped.b") == 0);
  // Columns with as many rows a page (a, b) are counted by the walk, a range a page of each; with c's
  // 512 rows a page, each column's pages are judged on their own. Either way the same for any threads.
  const std::string where = "a BETWEEN " + std::to_string(lo) + " AND " + std::to_string(hi) + " AND b <> 9";
  for (const std::uint32_t threads : {1u, 32u, 96u}) {
    CAPTURE(threads);
    const query_run uniform = run_query(t, topic, {{"where", param_value{where}}}, threads);
    CHECK(uniform.counters.at("pages.a") == 24);
    CHECK(uniform.counters.at("pages.b") == 24);
    CHECK(uniform.counters.at("pages_skipped.a") == range.counters.at("pages_skipped.a"));
    CHECK(uniform.counters.at("pages_skipped.b") == range.counters.at("pages_skipped.a"));
    const query_run mixed = run_query(t, topic, {{"where", param_value{where + " AND c > -1000"}}}, threads);
    CHECK(mixed.counters.at("pages.a") == 24);
    CHECK(mixed.counters.at("pages.c") == 48);
    CHECK(mixed.counters.at("pages_skipped.a") == range.counters.at("pages_skipped.a"));
    CHECK(mixed.counters.at("pages_skipped.c") >= 2 * range.counters.at("pages_skipped.a") - 2);
  }
}

}  // namespace xf

TEST_CASE("query.group_by_syntax_problems_are_reported") {
  // The tokenizer's problems in group_by are the parameter's problem, as in where and select (found by
  // fuzzing: they escaped as an uncaught exception).
  xf::olap::column_text group{};
  CHECK(std::string(xf::olap::store_group_by("k'", group)) ==
        "parameter 'group_by': at character 2: a quoted text that never ends");
  CHECK(std::string(xf::olap::store_group_by("d$", group)) ==
        "parameter 'group_by': at character 2: unexpected '$'");
  CHECK(std::string(xf::olap::store_group_by("d", group)).empty());
}

TEST_CASE("query.a_nul_in_a_text_is_refused") {
  // The texts are kept zero-terminated: a NUL (YAML's "\0", taken inside a quoted constant) would cut the
  // query the operator compiles short of the one checked (found by fuzzing).
  xf::olap::where_text where{};
  CHECK(std::string(xf::olap::store_where(std::string("s = 'a\0b'", 10), where)) ==
        "parameter 'where': at character 7: a NUL character");
  CHECK(std::string(xf::olap::store_where("s = 'ab'", where)).empty());
}
