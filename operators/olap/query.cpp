// query's parameters and its finish: the accumulator turned into the result file and the counters.
#include "operators/olap/query.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "framework/core/errors.hpp"

namespace xf {
namespace {

using olap::output_kind;

/// A result cell: a number as text, a character value, or nothing (MIN/MAX over no rows).
struct cell {
  enum kind_t { number, text, none } kind = none;
  std::string value;
};

/// Appends a scalar column value held as `bits` as decimal text: the raw value, or (is_key) the order key
/// MIN/MAX fold.
void append_scalar(std::string& out, element_type e, std::uint64_t bits, bool is_key) {
  char buffer[32];
  char* end = buffer;
  visit_element(e, [&](auto zero) {
    using V = decltype(zero);
    if constexpr (std::is_floating_point_v<V>) {
      double d;
      if (is_key) {
        const std::uint64_t raw = (bits >> 63) != 0 ? bits & ~(std::uint64_t{1} << 63) : ~bits;
        std::memcpy(&d, &raw, 8);
      } else {
        V v;
        std::memcpy(&v, &bits, sizeof(V));
        d = static_cast<double>(v);
      }
      end = std::to_chars(buffer, buffer + sizeof buffer, d).ptr;
    } else if constexpr (std::is_signed_v<V>) {
      const auto v = is_key ? static_cast<std::int64_t>(bits ^ (std::uint64_t{1} << 63))
                            : static_cast<std::int64_t>(static_cast<V>(bits));
      end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
    } else {
      end = std::to_chars(buffer, buffer + sizeof buffer, bits).ptr;
    }
  });
  out.append(buffer, end);
}

template <class Integer>
void set_number(cell& c, Integer v) {
  char buffer[32];
  c.kind = cell::number;
  c.value.assign(buffer, std::to_chars(buffer, buffer + sizeof buffer, v).ptr);
}

/// Output k of a fold (count, sum or min/max) into `c`.
void aggregate_cell(cell& c, const olap::query_program& q, std::uint32_t k, std::uint64_t rows,
                    std::uint64_t word, double real_sum) {
  const olap::output_item& o = q.outputs[k];
  if (o.kind == output_kind::count_rows) return set_number(c, rows);
  const element_type e = q.column_of(o.slot).layout.element;
  c.kind = cell::number;
  c.value.clear();
  if (o.kind == output_kind::sum) {
    if (e == element_type::f32 || e == element_type::f64) {
      char buffer[32];
      c.value.assign(buffer, std::to_chars(buffer, buffer + sizeof buffer, real_sum).ptr);
      return;
    }
    const bool is_signed =
        e == element_type::i8 || e == element_type::i16 || e == element_type::i32 || e == element_type::i64;
    if (is_signed) return set_number(c, static_cast<std::int64_t>(word));
    return set_number(c, word);
  }
  if (rows == 0) {
    c.kind = cell::none;
    return;
  }
  append_scalar(c.value, e, o.kind == output_kind::min ? ~word : word, true);
}

/// A projection's records in stream order, by (frame offset, row): the GPU takes them in any order. The
/// keys are sorted apart from the records, contiguous, so a sort of millions of rows stays in cache lines
/// it streams.
std::vector<const std::byte*> records_in_stream_order(const std::byte* base, std::uint64_t n,
                                                      std::uint64_t record) {
  struct keyed {
    std::uint64_t offset;
    std::uint32_t row;
    std::uint32_t index;  // n <= max_rows, a 32-bit count
  };
  std::vector<keyed> keys(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::byte* r = base + i * record;
    std::memcpy(&keys[i].offset, r, 8);
    std::memcpy(&keys[i].row, r + 8, 4);
    keys[i].index = static_cast<std::uint32_t>(i);
  }
  std::sort(keys.begin(), keys.end(), [](const keyed& a, const keyed& b) {
    return a.offset != b.offset ? a.offset < b.offset : a.row < b.row;
  });
  std::vector<const std::byte*> records(n);
  for (std::uint64_t i = 0; i < n; ++i) records[i] = base + std::uint64_t{keys[i].index} * record;
  return records;
}

/// Calls `emit(row)` for each row of the result, in order: groups by key, a projection's rows in stream
/// order, or the one row of aggregates. `row` is reused from one call to the next (its strings keep their
/// room), so millions of projected rows cost no allocation each.
template <class Emit>
std::uint64_t for_each_result_row(const query_op::params& p, std::span<const std::byte> state, Emit emit) {
  const olap::query_program& q = p.program;
  const auto& head = *reinterpret_cast<const query_op::header*>(state.data());
  std::vector<cell> row;
  std::uint64_t rows = 0;
  if (q.has_group) {
    struct group {
      std::uint64_t key;
      const query_op::group_slot* slot;
    };
    std::vector<group> groups;
    const auto* slots =
        reinterpret_cast<const query_op::group_slot*>(state.data() + sizeof(query_op::header));
    for (std::uint32_t i = 0; i < p.max_groups; ++i)
      if (slots[i].key != 0) groups.push_back({slots[i].key - 1, &slots[i]});
    std::sort(groups.begin(), groups.end(), [](const group& a, const group& b) { return a.key < b.key; });
    const element_type ge = q.column_of(q.group_slot).layout.element;
    const bool is_signed = ge == element_type::i8 || ge == element_type::i16 || ge == element_type::i32;
    for (const group& g : groups) {
      row.resize(1);
      if (is_signed)
        set_number(row[0], static_cast<std::int64_t>(g.key) - 0x80000000ll);
      else
        set_number(row[0], g.key);
      for (std::uint32_t k = 0; k < q.output_count; ++k)
        if (q.outputs[k].kind != output_kind::column)
          aggregate_cell(row.emplace_back(), q, k, g.slot->rows, g.slot->values[k], g.slot->real_sums[k]);
      emit(row);
      ++rows;
    }
  } else if (query_op::projects(p)) {
    const std::uint64_t n = std::min<std::uint64_t>(head.result_rows, p.max_rows);
    row.resize(q.output_count);
    for (const std::byte* r :
         records_in_stream_order(state.data() + sizeof(query_op::header), n, query_op::record_bytes(p))) {
      const std::byte* at = r + 16;
      for (std::uint32_t k = 0; k < q.output_count; ++k) {
        const column_layout& l = q.column_of(q.outputs[k].slot).layout;
        cell& c = row[k];
        c.value.clear();
        if (l.chars != 0) {
          c.kind = cell::text;
          const auto* chars = reinterpret_cast<const char*>(at);
          std::size_t length = l.chars;  // fixed width, padded with NULs
          while (length > 0 && chars[length - 1] == '\0') --length;
          c.value.assign(chars, length);
          at += (l.chars + 7u) / 8u * 8u;
        } else {
          std::uint64_t bits = 0;
          std::memcpy(&bits, at, size_of(l.element));
          c.kind = cell::number;
          append_scalar(c.value, l.element, bits, false);
          at += 8;
        }
      }
      emit(row);
      ++rows;
    }
  } else {
    row.resize(q.output_count);
    for (std::uint32_t k = 0; k < q.output_count; ++k)
      aggregate_cell(row[k], q, k, head.rows_matched, head.values[k], head.real_sums[k]);
    emit(row);
    ++rows;
  }
  return rows;
}

void append_csv_field(std::string& out, const cell& c) {
  if (c.kind != cell::text || c.value.find_first_of(",\"\n\r") == std::string::npos) {
    out += c.value;
    return;
  }
  out += '"';
  for (char ch : c.value) {
    if (ch == '"') out += '"';
    out += ch;
  }
  out += '"';
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

void query_op::describe(operator_schema<params>& s) {
  s.describe(
       "filters, projects and aggregates a columnar topic on the GPU (a GPU sink): rows where `where` holds, "
       "folded into `select` (COUNT(*), SUM, MIN, MAX, optionally per group_by value) or projected "
       "(columns); "
       "reads only the pages the index pages say may match; writes the result as CSV (JSON for a .json path) "
       "once, at the end")
      .shares_frames();
  s.parsed(&params::where, "where",
           "the rows to take: conditions on columns (= <> < <= > >=, BETWEEN, IN) joined by AND, OR, NOT; '' "
           "takes every row",
           "", olap::store_where);
  s.parsed(
      &params::select, "select",
      "comma-separated COUNT(*), SUM(col), MIN(col), MAX(col), or columns (the matching rows themselves)",
      "COUNT(*)", olap::store_select);
  s.parsed(&params::group_by, "group_by",
           "an integer column (at most 32 bits) to aggregate per value ('' : none)", "",
           olap::store_group_by);
  s.parsed(&params::result, "result", "file for the result: CSV, or JSON when it ends in .json ('' : none)",
           "", parse_path_text);
  s.writes_file();
  s.param(&params::max_rows, "max_rows",
          "projections: the most matching rows the result holds (device memory)", params{}.max_rows, 1,
          4294967295.0);
  s.param(&params::max_groups, "max_groups", "group_by: the most distinct values the result holds",
          params{}.max_groups, 1, 1u << 24);
  s.parsed(&params::skip, "skip",
           "what the query leaves unread, to measure each part of skip transfer: none (every page of the "
           "frame crosses, as a row layout's would), columns (only the named columns' pages), zones (and of "
           "those only pages whose min/max may match), blooms (and whose bloom filters may hold the "
           "constants)",
           "blooms", olap::store_skip);
}

namespace {

/// A frame whose pages the query chooses: its header matches the query's frame, its index was written and
/// the query skips something. Else the whole frame is taken (skip none reads it all; compute fails a bad
/// frame, bad_frame, having read only its header).
bool judged_by_pages(const olap::query_program& q, const std::byte* frame) {
  const columnar_geometry& g = q.frame;
  const columnar_frame_header& h = columnar_header(frame);
  return h.magic == columnar_magic && (h.flags & columnar_frame_header::index_valid) != 0 &&
         h.rows <= g.rows_per_frame && h.column_count == g.column_count && q.skip != olap::page_skip::none;
}

}  // namespace

void query_op::pages_bound(const params& p, const std::byte* frame, std::vector<frame_range>& out) {
  const olap::query_program& q = p.program;
  const columnar_geometry& g = q.frame;
  if (!judged_by_pages(q, frame)) {
    out.push_back({0, g.frame_bytes()});
    return;
  }
  const std::uint32_t rows = columnar_header(frame).rows;
  const std::size_t first = out.size();
  out.push_back({0, std::uint64_t{g.index_pages} * columnar_page_bytes});
  for (std::uint32_t s = 0; s < q.slot_count; ++s) {
    const std::uint32_t c = q.slots[s].column, pages = g.pages_for_rows(c, rows);
    if (pages != 0) out.push_back({g.page_offset(c, 0), std::uint64_t{pages} * columnar_page_bytes});
  }
  join_ranges(out, first, 0);
}

void query_op::pages_read(const params& p, const std::byte* frame, std::vector<frame_range>& out) {
  const olap::query_program& q = p.program;
  const columnar_geometry& g = q.frame;
  const columnar_frame_header& h = columnar_header(frame);
  if (!judged_by_pages(q, frame)) {
    out.push_back({0, g.frame_bytes()});
    return;
  }
  const std::size_t first = out.size();
  out.push_back({0, std::uint64_t{g.index_pages} * columnar_page_bytes});
  // The row ranges compute walks (each inside one page of every named column), the index evaluated once
  // a range as compute evaluates it: a page is read when a range in it may match.
  std::uint32_t last_page[olap::max_slots];
  for (std::uint32_t s = 0; s < q.slot_count; ++s) last_page[s] = ~0u;
  for (std::uint32_t r = 0, next; r < h.rows; r = next) {
    next = olap::next_boundary(q, r, h.rows);
    if (!olap::rows_may_match(q, frame, r, next)) continue;
    for (std::uint32_t s = 0; s < q.slot_count; ++s) {
      const std::uint32_t c = q.slots[s].column, page = r / g.columns[c].rows_per_page;
      if (page == last_page[s]) continue;
      last_page[s] = page;
      out.push_back({g.page_offset(c, page), columnar_page_bytes});
    }
  }
  join_ranges(out, first, 0);
}

operator_counters query_op::finish(const params& p, std::span<const std::byte> state) {
  XF_EXPECTS(state.size() == state_bytes(p), "the accumulator query asked for");
  const olap::query_program& q = p.program;
  const auto& head = *reinterpret_cast<const header*>(state.data());
  const std::vector<std::string> names = olap::output_names(q);
  std::uint64_t result_rows = 0;
  if (p.result.empty()) {
    // Groups claimed, a projection's rows taken, or the one row of aggregates: nothing to format.
    result_rows = projects(p)   ? std::min<std::uint64_t>(head.result_rows, p.max_rows)
                  : q.has_group ? head.result_rows
                                : 1;
  } else if (ends_with(p.result.str(), ".json")) {
    nlohmann::json doc;
    doc["columns"] = names;
    doc["rows"] = nlohmann::json::array();
    result_rows = for_each_result_row(p, state, [&](const std::vector<cell>& row) {
      nlohmann::json line = nlohmann::json::array();
      for (const cell& c : row) {
        if (c.kind == cell::none)
          line.push_back(nullptr);
        else if (c.kind == cell::text)
          line.push_back(c.value);
        else
          line.push_back(nlohmann::json::parse(c.value));
      }
      doc["rows"].push_back(std::move(line));
    });
    write_result_file(p.result, doc.dump(1) + "\n");
  } else {
    result_file_writer out(p.result);
    std::string& text = out.buffer();
    for (std::size_t i = 0; i < names.size(); ++i) text += (i ? "," : "") + names[i];
    text += "\n";
    result_rows = for_each_result_row(p, state, [&](const std::vector<cell>& row) {
      for (std::size_t i = 0; i < row.size(); ++i) {
        if (i != 0) text += ',';
        append_csv_field(text, row[i]);
      }
      text += '\n';
      out.flush_if_full();
    });
    out.commit();
  }

  operator_counters counters{{"rows_matched", head.rows_matched},
                             {"rows_scanned", head.rows_scanned},
                             {"result_rows", result_rows},
                             {"frames", head.frames}};
  std::uint64_t pages = 0, skipped = 0;
  for (std::uint32_t s = 0; s < q.slot_count; ++s) {
    const std::string column(q.slots[s].name);
    counters["pages." + column] = head.pages_total[s];
    counters["pages_skipped." + column] = head.pages_skipped[s];
    pages += head.pages_total[s];
    skipped += head.pages_skipped[s];
  }
  counters["pages"] = pages;
  counters["pages_skipped"] = skipped;
  counters["bytes_skipped"] = skipped * columnar_page_bytes;
  return counters;
}

}  // namespace xf
