// The Set Query variants as data, and the two evaluators that answer them: the reference (frames read from
// the table file) and the in-memory engine (frames loaded once, blocks skipped by the index), one frame
// evaluation shared by both.
#include "apps/setquery/setquery_queries.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>

#include "apps/dataset_support/parallel.hpp"
#include "topics/columnar_index.hpp"
#include "topics/page_bloom.hpp"
#include "topics/zone_map.hpp"

namespace xf::apps::setquery {

// ---- the queries as data ---------------------------------------------------------------------------------

std::string comparison::text() const {
  static constexpr std::string_view ops[] = {" = ", " <> ", " < ", " <= ", " > ", " >= "};
  std::string s = negated ? "NOT " + column : column;
  if (op == compare_op::between) {
    s += " BETWEEN " + std::to_string(values.at(0)) + " AND " + std::to_string(values.at(1));
  } else if (op == compare_op::in) {
    s += " IN (";
    for (std::size_t i = 0; i < values.size(); ++i) s += (i == 0 ? "" : ", ") + std::to_string(values[i]);
    s += ")";
  } else {
    s += std::string(ops[static_cast<int>(op)]) + std::to_string(values.at(0));
  }
  return s;
}

std::string select_item::text() const {
  switch (kind) {
    case select_kind::count:
      return "COUNT(*)";
    case select_kind::sum:
      return "SUM(" + column + ")";
    case select_kind::column:
      break;
  }
  return column;
}

std::string query_variant::where_text() const {
  std::string s;
  for (std::size_t c = 0; c < where.size(); ++c) {
    if (c != 0) s += " AND ";
    const bool parens = where.size() > 1 && where[c].terms.size() > 1;
    if (parens) s += "(";
    for (std::size_t t = 0; t < where[c].terms.size(); ++t)
      s += (t == 0 ? "" : " OR ") + where[c].terms[t].text();
    if (parens) s += ")";
  }
  return s;
}

std::string query_variant::select_text() const {
  std::string s;
  for (std::size_t i = 0; i < select.size(); ++i) s += (i == 0 ? "" : ",") + select[i].text();
  return s;
}

namespace {

comparison compare(std::string column, compare_op op, std::vector<std::int64_t> values,
                   bool negated = false) {
  return {std::move(column), op, std::move(values), negated};
}

any_of just(comparison c) {
  return {{std::move(c)}};
}

const std::vector<std::string> all_kn{"K500K", "K250K", "K100K", "K40K", "K10K", "K1K",
                                      "K100",  "K25",   "K10",   "K5",   "K4",   "K2"};
const std::vector<std::string> q2_kn{"K500K", "K250K", "K100K", "K40K", "K10K", "K1K",
                                     "K100",  "K25",   "K10",   "K5",   "K4"};
const std::vector<std::string> q3_kn{"K100K", "K10K", "K100", "K25", "K10", "K5", "K4"};

std::vector<query_variant> make_variants() {
  const select_item count{select_kind::count, ""};
  const select_item sum_k1k{select_kind::sum, "K1K"};
  std::vector<query_variant> v;
  for (const auto& kn : all_kn)
    v.push_back({"Q1_" + kn, "Q1", {just(compare(kn, compare_op::eq, {2}))}, {count}});
  for (const bool negated : {false, true})
    for (const auto& kn : q2_kn) {
      const std::string family = negated ? "Q2B" : "Q2A";
      v.push_back(
          {family + "_" + kn,
           family,
           {just(compare("K2", compare_op::eq, {2})), just(compare(kn, compare_op::eq, {3}, negated))},
           {count}});
    }
  for (const auto& kn : q3_kn)
    v.push_back({"Q3A_" + kn,
                 "Q3A",
                 {just(compare("KSEQ", compare_op::between, {400000, 500000})),
                  just(compare(kn, compare_op::eq, {3}))},
                 {sum_k1k}});
  any_of q3b_ranges;
  for (const auto& [lo, hi] :
       {std::pair{400000, 410000}, {420000, 430000}, {440000, 450000}, {460000, 470000}, {480000, 500000}})
    q3b_ranges.terms.push_back(compare("KSEQ", compare_op::between, {lo, hi}));
  for (const auto& kn : q3_kn)
    v.push_back({"Q3B_" + kn, "Q3B", {q3b_ranges, just(compare(kn, compare_op::eq, {3}))}, {sum_k1k}});
  const std::vector<select_item> kseq_k500k{{select_kind::column, "KSEQ"}, {select_kind::column, "K500K"}};
  for (const auto& [family, conditions] : {std::pair<std::string, std::size_t>{"Q4A", 3}, {"Q4B", 5}})
    for (std::size_t first = 0; first + conditions <= q4_conditions().size(); ++first) {
      query_variant q{family + "_" + std::to_string(first + 1), family, {}, kseq_k500k};
      for (std::size_t i = first; i < first + conditions; ++i) q.where.push_back(just(q4_conditions()[i]));
      v.push_back(std::move(q));
    }
  return v;
}

std::string upper(std::string_view s) {
  std::string u(s);
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

}  // namespace

const std::vector<comparison>& q4_conditions() {
  static const std::vector<comparison> list{compare("K2", compare_op::eq, {1}),
                                            compare("K100", compare_op::gt, {80}),
                                            compare("K10K", compare_op::between, {2000, 3000}),
                                            compare("K5", compare_op::eq, {3}),
                                            compare("K25", compare_op::in, {11, 19}),
                                            compare("K4", compare_op::eq, {3}),
                                            compare("K100", compare_op::lt, {41}),
                                            compare("K1K", compare_op::between, {850, 950}),
                                            compare("K10", compare_op::eq, {7}),
                                            compare("K25", compare_op::in, {3, 4})};
  return list;
}

const std::vector<query_variant>& setquery_variants() {
  static const std::vector<query_variant> variants = make_variants();
  return variants;
}

std::vector<const query_variant*> select_variants(std::span<const std::string> names) {
  const auto& all = setquery_variants();
  std::vector<bool> chosen(all.size(), names.empty());
  for (const auto& name : names) {
    const std::string u = upper(name);
    bool found = false;
    for (std::size_t i = 0; i < all.size(); ++i)
      if (all[i].id == u || all[i].family == u) chosen[i] = found = true;
    if (!found)
      throw std::invalid_argument(
          "no Set Query variant or family '" + name +
          "' (ids like Q1_K500K, Q2A_K100, Q4B_1; families Q1 Q2A Q2B Q3A Q3B Q4A Q4B)");
  }
  std::vector<const query_variant*> out;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (chosen[i]) out.push_back(&all[i]);
  return out;
}

// ---- evaluating frames: what the reference and the in-memory engine share --------------------------------

namespace {

/// Rows evaluated together: one data page of an i32 column (compile() checks the geometry pages every
/// column a variant names so), the unit the index describes.
constexpr std::uint32_t block_rows = columnar_page_bytes / sizeof(std::int32_t);

struct compiled_term {
  std::uint32_t column;  // index in the table
  compare_op op;
  bool negated;
  std::vector<std::int32_t> values;
  std::uint32_t bloom_bits;           // the column's page filter; 0: none
  std::uint32_t bloom_hashes;         // its k
  std::vector<std::uint64_t> hashes;  // per value: its bloom hash (with a filter), computed once
};

struct compiled_variant {
  std::vector<std::vector<compiled_term>> where;
  std::vector<select_kind> kinds;
  std::vector<std::uint32_t> columns;  // per select item (count: unused)
  bool projection;
};

std::uint32_t int_column(const table_schema& schema, const columnar_geometry& g, const std::string& name,
                         const std::string& id) {
  for (std::uint32_t c = 0; c < schema.columns.size(); ++c) {
    if (schema.columns[c].name != name) continue;
    const column_layout& l = schema.columns[c].layout;
    if (l.chars != 0 || l.element != element_type::i32)
      throw std::invalid_argument(id + ": column " + name + " is not an i32 column of the table");
    if (g.columns[c].rows_per_page != block_rows)
      throw std::invalid_argument(id + ": column " + name + " holds " +
                                  std::to_string(g.columns[c].rows_per_page) + " rows a page, not " +
                                  std::to_string(block_rows));
    return c;
  }
  throw std::invalid_argument(id + ": the table has no column " + name);
}

compiled_variant compile(const query_variant& q, const table_schema& schema, const columnar_geometry& g) {
  compiled_variant out{};
  for (const any_of& clause : q.where) {
    std::vector<compiled_term> terms;
    for (const comparison& t : clause.terms) {
      const std::uint32_t c = int_column(schema, g, t.column, q.id);
      const column_layout& l = g.columns[c].layout;
      compiled_term ct{c, t.op, t.negated, {}, l.bloom_bits, l.bloom_hashes, {}};
      const std::size_t want = t.op == compare_op::between ? 2 : t.op == compare_op::in ? t.values.size() : 1;
      if (t.values.size() != want || want == 0)
        throw std::invalid_argument(q.id + ": " + t.column + " has the wrong number of constants");
      for (std::int64_t v : t.values) {
        // Every constant the variants use fits the column's type; one that did not would need the
        // comparison's semantics for out-of-range constants, which no variant asks for.
        if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())
          throw std::invalid_argument(q.id + ": constant " + std::to_string(v) + " is outside i32");
        ct.values.push_back(static_cast<std::int32_t>(v));
        ct.hashes.push_back(bloom_hash_of(ct.values.back()));
      }
      terms.push_back(std::move(ct));
    }
    out.where.push_back(std::move(terms));
  }
  out.projection = q.projection();
  for (const select_item& s : q.select) {
    if ((s.kind == select_kind::column) != out.projection)
      throw std::invalid_argument(q.id + ": mixes aggregates and plain columns without group_by");
    out.kinds.push_back(s.kind);
    out.columns.push_back(s.kind == select_kind::count ? 0 : int_column(schema, g, s.column, q.id));
  }
  return out;
}

// ---- a block's rows: branch-free loops over one page of each column ----

// How a term's truth per row (0 or 1) joins what a row mask holds: a variant's first clause assigns,
// the further terms of a clause OR, the further clauses AND.
struct assign_truth {
  std::uint8_t operator()(std::uint8_t, std::uint8_t truth) const { return truth; }
};
struct or_truth {
  std::uint8_t operator()(std::uint8_t held, std::uint8_t truth) const { return held | truth; }
};
struct and_truth {
  std::uint8_t operator()(std::uint8_t held, std::uint8_t truth) const { return held & truth; }
};

/// out[i] = combine(out[i], the term's truth at row i) for the block_rows rows of a page. Each case is one
/// plain loop (NOT is an XOR with 1) of a constant trip count over buffers that do not alias, so it
/// vectorizes even under -O2's cautious cost model; an IN of more than two values ORs them in `in_scratch`
/// first. A short last page is evaluated whole (its page is there, zero-filled) and the caller clears the
/// rows past its end.
template <class Combine>
void evaluate_term(const compiled_term& t, const std::int32_t* __restrict x, std::uint8_t* __restrict out,
                   std::uint8_t* __restrict in_scratch, Combine combine) {
  const std::uint8_t flip = t.negated ? 1 : 0;
  const std::int32_t a = t.values[0];
  auto join = [&](std::uint32_t i, bool truth) {
    out[i] = combine(out[i], static_cast<std::uint8_t>(static_cast<std::uint8_t>(truth) ^ flip));
  };
  switch (t.op) {
    case compare_op::eq:
      for (std::uint32_t i = 0; i < block_rows; ++i) join(i, x[i] == a);
      break;
    case compare_op::ne:
      for (std::uint32_t i = 0; i < block_rows; ++i) join(i, x[i] != a);
      break;
    case compare_op::lt:
      for (std::uint32_t i = 0; i < block_rows; ++i) join(i, x[i] < a);
      break;
    case compare_op::le:
      for (std::uint32_t i = 0; i < block_rows; ++i) join(i, x[i] <= a);
      break;
    case compare_op::gt:
      for (std::uint32_t i = 0; i < block_rows; ++i) join(i, x[i] > a);
      break;
    case compare_op::ge:
      for (std::uint32_t i = 0; i < block_rows; ++i) join(i, x[i] >= a);
      break;
    case compare_op::between: {
      const std::int32_t b = t.values[1];
      for (std::uint32_t i = 0; i < block_rows; ++i) join(i, (x[i] >= a) & (x[i] <= b));
      break;
    }
    case compare_op::in: {
      const std::int32_t b = t.values.size() > 1 ? t.values[1] : a;
      if (t.values.size() <= 2) {
        for (std::uint32_t i = 0; i < block_rows; ++i) join(i, (x[i] == a) | (x[i] == b));
        break;
      }
      for (std::uint32_t i = 0; i < block_rows; ++i) in_scratch[i] = (x[i] == a) | (x[i] == b);
      for (std::size_t k = 2; k < t.values.size(); ++k) {
        const std::int32_t c = t.values[k];
        for (std::uint32_t i = 0; i < block_rows; ++i) in_scratch[i] |= x[i] == c;
      }
      for (std::uint32_t i = 0; i < block_rows; ++i) join(i, in_scratch[i] != 0);
      break;
    }
  }
}

// ---- a block's index pages: whether a variant may match there ----

/// What a block's zone entries and bloom filters say of a term or a clause: whether some row may satisfy
/// it, and whether every row certainly does.
struct index_verdict {
  bool some_may;
  bool every;
};

/// NOT t: some row may satisfy it unless every row satisfies t; every row does when no row may satisfy t.
index_verdict negate(index_verdict v) {
  return {!v.every, !v.some_may};
}

/// The verdict on term t for the block at data page `page` of `view`'s frame: from the page's zone (its
/// min and max), and for a point term on a column with a bloom filter, from the filter too.
index_verdict judge_term(const compiled_term& t, const columnar_view& view, std::uint32_t page) {
  const zone_entry& zone = view.zone(t.column, page);
  if (zone.rows == 0) return {false, false};  // a page of no rows: nothing there to match, negated or not
  const std::int32_t lo = zone_value<std::int32_t>(zone.min_bits),
                     hi = zone_value<std::int32_t>(zone.max_bits);
  const std::uint64_t* bloom =
      t.bloom_bits != 0 ? page_bloom(view.geometry(), view.data(), t.column, page) : nullptr;
  // The verdict on "column = value k": the zone first, the filter (a few cache lines) only when the value
  // is in the zone's range.
  auto equals = [&](std::size_t k) {
    const std::int32_t value = t.values[k];
    const bool may =
        zone_may_match(zone, value, value) &&
        (bloom == nullptr || bloom_may_contain(bloom, t.bloom_bits, t.bloom_hashes, t.hashes[k]));
    return index_verdict{may, lo == value && hi == value};
  };
  const std::int32_t a = t.values[0];
  index_verdict v{false, false};
  switch (t.op) {
    case compare_op::eq:
      v = equals(0);
      break;
    case compare_op::ne:
      v = negate(equals(0));
      break;
    case compare_op::lt:
      v = {lo < a, hi < a};
      break;
    case compare_op::le:
      v = {lo <= a, hi <= a};
      break;
    case compare_op::gt:
      v = {hi > a, lo > a};
      break;
    case compare_op::ge:
      v = {hi >= a, lo >= a};
      break;
    case compare_op::between:
      v = {zone_may_match(zone, a, t.values[1]), a <= lo && hi <= t.values[1]};
      break;
    case compare_op::in:
      for (std::size_t k = 0; k < t.values.size(); ++k) {
        const index_verdict e = equals(k);
        v = {v.some_may || e.some_may, v.every || e.every};
      }
      break;
  }
  return t.negated ? negate(v) : v;
}

/// Appends `value` in decimal, as std::to_string writes it but without a string of its own per value (a
/// projection writes two a matching row).
void append_decimal(std::string& out, std::int32_t value) {
  char digits[16];
  out.append(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
}

/// What one thread has found for one variant.
struct partial {
  std::uint64_t matched = 0;
  std::uint64_t blocks_skipped = 0;
  std::vector<std::int64_t> sums;  // per select item (sum items only)
};

/// What one thread has found over the frames it took.
struct scan_totals {
  std::vector<partial> per_variant;
  std::uint64_t blocks = 0;
};

/// A projection's rows as CSV text per variant and frame, joined in frame order at the end: table order
/// whatever the thread that evaluated the frame. Each thread writes only the frames it took.
using projection_text = std::vector<std::vector<std::string>>;

/// One thread's evaluation of every variant on the frames it is handed: per block, the index's verdict
/// (with use_index), then the clauses it leaves open, each as branch-free loops over the block's pages.
/// Its scratch rows are members, so nothing is allocated per block.
class frame_scanner {
 public:
  frame_scanner(std::span<const compiled_variant> variants, bool use_index, projection_text& text)
      : variants_(variants), use_index_(use_index), text_(text) {
    totals_.per_variant.resize(variants.size());
    std::size_t clauses = 0;
    for (std::size_t v = 0; v < variants.size(); ++v) {
      totals_.per_variant[v].sums.assign(variants[v].kinds.size(), 0);
      clauses = std::max(clauses, variants[v].where.size());
    }
    clause_open_.assign(clauses, 1);  // without the index every clause is evaluated
    std::size_t width = 0;
    for (const compiled_variant& cv : variants)
      if (cv.projection) width = std::max(width, cv.columns.size());
    picked_.resize(width * block_rows);
  }

  /// Evaluates every variant on frame k, whose bytes (geometry g, index built) are `frame`.
  void scan(const columnar_geometry& g, const std::byte* frame, std::uint64_t k) {
    const columnar_view view(g, frame);
    const std::uint32_t rows = view.rows();
    for (std::uint32_t page = 0, first = 0; first < rows; ++page, first += block_rows) {
      const std::uint32_t n = std::min(block_rows, rows - first);
      ++totals_.blocks;
      for (std::size_t v = 0; v < variants_.size(); ++v) {
        if (use_index_ && !judge_block(variants_[v], view, page)) {
          ++totals_.per_variant[v].blocks_skipped;
          continue;
        }
        evaluate_block(v, view, page, n, k);
      }
    }
  }

  scan_totals take_totals() { return std::move(totals_); }

 private:
  /// Whether the variant may match in the block (every clause has a term that may hold there); marks in
  /// clause_open_ the clauses that do not hold for every row, which alone need evaluating.
  bool judge_block(const compiled_variant& cv, const columnar_view& view, std::uint32_t page) {
    for (std::size_t c = 0; c < cv.where.size(); ++c) {
      index_verdict clause{false, false};
      for (const compiled_term& t : cv.where[c]) {
        const index_verdict term = judge_term(t, view, page);
        clause.some_may = clause.some_may || term.some_may;
        clause.every = clause.every || term.every;
      }
      if (!clause.some_may) return false;
      clause_open_[c] = !clause.every;
    }
    return true;
  }

  /// The variant's row mask over the block's n rows from its open clauses, then what it selects.
  void evaluate_block(std::size_t v, const columnar_view& view, std::uint32_t page, std::uint32_t n,
                      std::uint64_t k) {
    const compiled_variant& cv = variants_[v];
    partial& found = totals_.per_variant[v];
    auto column = [&](std::uint32_t c) { return reinterpret_cast<const std::int32_t*>(view.page(c, page)); };
    bool masked = false;  // whether mask_ holds a clause's truth yet
    for (std::size_t c = 0; c < cv.where.size(); ++c) {
      if (!clause_open_[c]) continue;
      if (masked)
        evaluate_clause(cv.where[c], column, and_truth{});
      else
        evaluate_clause(cv.where[c], column, assign_truth{});
      masked = true;
    }
    if (!masked) std::fill_n(mask_, block_rows, std::uint8_t{1});
    std::fill(mask_ + n, mask_ + block_rows, std::uint8_t{0});  // a short last page's missing rows

    std::uint32_t matched = 0;
    for (std::uint32_t r = 0; r < block_rows; ++r) matched += mask_[r];
    found.matched += matched;
    if (matched == 0) return;
    if (cv.projection) {
      // The matching rows first, then their values column by column: the loads of a column are independent
      // of one another, so the cache misses of a selective projection (its columns' pages read for a few
      // rows each) overlap instead of waiting on each other row by row.
      const std::uint32_t rows = list_matching_rows();
      const std::size_t width = cv.columns.size();
      for (std::size_t s = 0; s < width; ++s) {
        const std::int32_t* x = column(cv.columns[s]);
        for (std::uint32_t i = 0; i < rows; ++i) picked_[i * width + s] = x[matching_[i]];
      }
      std::string& out = text_[v][k];
      for (std::uint32_t i = 0; i < rows; ++i) {
        for (std::size_t s = 0; s < width; ++s) {
          if (s != 0) out += ',';
          append_decimal(out, picked_[i * width + s]);
        }
        out += '\n';
      }
      return;
    }
    for (std::size_t s = 0; s < cv.kinds.size(); ++s) {
      if (cv.kinds[s] != select_kind::sum) continue;
      const std::int32_t* x = column(cv.columns[s]);
      std::int64_t sum = 0;
      for (std::uint32_t r = 0; r < block_rows; ++r)
        sum += x[r] & -static_cast<std::int32_t>(mask_[r]);  // x[r] where the row matches, else 0
      found.sums[s] += sum;
    }
  }

  /// Lists in matching_ the rows whose mask_ byte is 1, in order, and returns how many. Eight mask bytes are
  /// read at once: a selective projection's are nearly all zero.
  std::uint32_t list_matching_rows() {
    static_assert(std::endian::native == std::endian::little, "mask byte i is bits 8i … 8i + 7 of a word");
    std::uint32_t rows = 0;
    for (std::uint32_t first = 0; first < block_rows; first += 8) {
      std::uint64_t word;
      std::memcpy(&word, mask_ + first, sizeof word);
      for (; word != 0; word &= word - 1) matching_[rows++] = first + std::countr_zero(word) / 8;
    }
    return rows;
  }

  /// mask_[r] = combine(mask_[r], the clause's truth at row r): its terms OR'ed.
  template <class Column, class Combine>
  void evaluate_clause(const std::vector<compiled_term>& clause, const Column& column, Combine combine) {
    if (clause.size() == 1) return evaluate_term(clause[0], column(clause[0].column), mask_, in_, combine);
    evaluate_term(clause[0], column(clause[0].column), any_, in_, assign_truth{});
    for (std::size_t i = 1; i < clause.size(); ++i)
      evaluate_term(clause[i], column(clause[i].column), any_, in_, or_truth{});
    std::uint8_t* __restrict mask = mask_;
    const std::uint8_t* __restrict any = any_;
    for (std::uint32_t r = 0; r < block_rows; ++r) mask[r] = combine(mask[r], any[r]);
  }

  std::span<const compiled_variant> variants_;
  bool use_index_;
  projection_text& text_;
  scan_totals totals_;
  std::vector<std::uint8_t> clause_open_;  // per clause of the variant at hand
  alignas(64) std::uint8_t mask_[block_rows];
  alignas(64) std::uint8_t any_[block_rows];
  alignas(64) std::uint8_t in_[block_rows];
  std::uint32_t matching_[block_rows];  // a projection's matching rows of the block
  std::vector<std::int32_t> picked_;    // their values, row by row (the widest projection's columns)
};

/// Memory at `alignment` (a power of two, at least 64) for `bytes` bytes.
aligned_bytes allocate_aligned(std::uint64_t bytes, std::size_t alignment) {
  const std::uint64_t rounded = (std::max<std::uint64_t>(bytes, 1) + alignment - 1) / alignment * alignment;
  auto* p = static_cast<std::byte*>(std::aligned_alloc(alignment, rounded));
  if (p == nullptr) throw std::bad_alloc();
  return aligned_bytes(p);
}

/// Evaluates `variants` over the `frames` frames of a table (schema, geometry g) in one pass:
/// run(body) runs body(t) for each of `threads` threads; each thread makes its frame source with
/// make_frames() (k → the frame's bytes, valid until the next call) and takes frames one at a time.
template <class Run, class MakeFrames>
engine_pass scan_table(const table_schema& schema, const columnar_geometry& g, std::uint64_t frames,
                       std::span<const query_variant* const> variants, unsigned threads, bool use_index,
                       Run&& run, MakeFrames&& make_frames) {
  std::vector<compiled_variant> compiled;
  for (const query_variant* q : variants) compiled.push_back(compile(*q, schema, g));
  const std::size_t nv = compiled.size();

  projection_text text(nv);
  for (std::size_t v = 0; v < nv; ++v)
    if (compiled[v].projection) text[v].resize(frames);
  std::vector<scan_totals> totals(threads);
  std::atomic<std::uint64_t> next_frame{0};
  run([&](unsigned t) {
    auto frame_at = make_frames();
    frame_scanner scanner(compiled, use_index, text);
    for (std::uint64_t k; (k = next_frame.fetch_add(1, std::memory_order_relaxed)) < frames;)
      scanner.scan(g, frame_at(k), k);
    totals[t] = scanner.take_totals();
  });

  engine_pass pass;
  pass.blocks_skipped.assign(nv, 0);
  for (const scan_totals& t : totals) pass.blocks += t.blocks;
  for (std::size_t v = 0; v < nv; ++v) {
    reference_answer a{variants[v]->id, 0, variants[v]->select_text() + "\n"};
    std::vector<std::int64_t> sums(compiled[v].kinds.size(), 0);
    for (const scan_totals& t : totals) {
      const partial& p = t.per_variant[v];
      a.matched_rows += p.matched;
      pass.blocks_skipped[v] += p.blocks_skipped;
      for (std::size_t s = 0; s < sums.size(); ++s) sums[s] += p.sums[s];
    }
    if (compiled[v].projection) {
      for (const std::string& rows : text[v]) a.csv += rows;
    } else {
      for (std::size_t s = 0; s < sums.size(); ++s) {
        if (s != 0) a.csv += ',';
        a.csv += compiled[v].kinds[s] == select_kind::count ? std::to_string(a.matched_rows)
                                                            : std::to_string(sums[s]);
      }
      a.csv += '\n';
    }
    pass.answers.push_back(std::move(a));
  }
  return pass;
}

/// A frame source of the reference: reads frame k of the file into its own buffer.
class file_frames {
 public:
  explicit file_frames(const columnar_table_file& table)
      : table_(&table), buffer_(allocate_aligned(table.frame_bytes(), 64)) {}
  const std::byte* operator()(std::uint64_t k) {
    table_->read_frame(k, buffer_.get());
    return buffer_.get();
  }

 private:
  const columnar_table_file* table_;
  aligned_bytes buffer_;
};

/// The in-memory table's alignment: a 2 MiB huge page, so that the kernel may back it with transparent huge
/// pages. A pass jumps from page to page across the whole table (a block reads one page of each column it
/// names), so with 4 KiB pages nearly every block misses the TLB; huge pages made passes a few percent
/// faster on a 2 M row table.
constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;

}  // namespace

// ---- the reference ---------------------------------------------------------------------------------------

std::vector<reference_answer> evaluate_reference(const columnar_table_file& table,
                                                 std::span<const query_variant* const> variants,
                                                 unsigned threads) {
  threads = std::max(1u, threads);
  return scan_table(
             table.schema(), table.geometry(), table.frames(), variants, threads, /*use_index=*/false,
             [&](const auto& body) { run_parallel(threads, body); }, [&] { return file_frames(table); })
      .answers;
}

// ---- the in-memory engine --------------------------------------------------------------------------------

in_memory_table::in_memory_table(const columnar_table_file& file, unsigned threads)
    : schema_(file.schema()),
      geometry_(file.geometry()),
      rows_(file.rows()),
      frames_(file.frames()),
      data_(allocate_aligned(frames_ * geometry_.frame_bytes(), huge_page_bytes)) {
  // Advice only: without transparent huge pages the table is in 4 KiB pages and every pass still works.
  ::madvise(data_.get(), frames_ * frame_bytes(), MADV_HUGEPAGE);
  std::atomic<std::uint64_t> next_frame{0};
  run_parallel(threads, [&](unsigned) {
    for (std::uint64_t k; (k = next_frame.fetch_add(1, std::memory_order_relaxed)) < frames_;)
      file.read_frame(k, data_.get() + k * frame_bytes());
  });
}

engine_pass evaluate_in_memory(const in_memory_table& table, std::span<const query_variant* const> variants,
                               worker_team& team, bool use_index) {
  return scan_table(
      table.schema(), table.geometry(), table.frames(), variants, team.size(), use_index,
      [&](const std::function<void(unsigned)>& body) { team.run(body); },
      [&] { return [&table](std::uint64_t k) { return table.frame(k); }; });
}

}  // namespace xf::apps::setquery
