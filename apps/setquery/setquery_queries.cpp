// The Set Query variants as data, and the multi-threaded reference that answers them from a table file.
#include "apps/setquery/setquery_queries.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>

#include "apps/dataset_support/parallel.hpp"

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

// ---- the reference ---------------------------------------------------------------------------------------

namespace {

/// Rows evaluated together: an i32 column's page (every column the queries name has the same paging).
constexpr std::uint32_t block_rows = columnar_page_bytes / sizeof(std::int32_t);

struct compiled_term {
  std::uint32_t column;  // index in the table
  compare_op op;
  bool negated;
  std::vector<std::int32_t> values;
};

struct compiled_variant {
  std::vector<std::vector<compiled_term>> where;
  std::vector<select_kind> kinds;
  std::vector<std::uint32_t> columns;  // per select item (count: unused)
  bool projection;
};

std::uint32_t int_column(const table_schema& schema, const std::string& name, const std::string& id) {
  for (std::uint32_t c = 0; c < schema.columns.size(); ++c) {
    if (schema.columns[c].name != name) continue;
    const column_layout& l = schema.columns[c].layout;
    if (l.chars != 0 || l.element != element_type::i32)
      throw std::invalid_argument(id + ": column " + name + " is not an i32 column of the table");
    return c;
  }
  throw std::invalid_argument(id + ": the table has no column " + name);
}

compiled_variant compile(const query_variant& q, const table_schema& schema) {
  compiled_variant out{};
  for (const any_of& clause : q.where) {
    std::vector<compiled_term> terms;
    for (const comparison& t : clause.terms) {
      compiled_term ct{int_column(schema, t.column, q.id), t.op, t.negated, {}};
      const std::size_t want = t.op == compare_op::between ? 2 : t.op == compare_op::in ? t.values.size() : 1;
      if (t.values.size() != want || want == 0)
        throw std::invalid_argument(q.id + ": " + t.column + " has the wrong number of constants");
      for (std::int64_t v : t.values) {
        // Every constant the variants use fits the column's type; one that did not would need the
        // comparison's semantics for out-of-range constants, which no variant asks for.
        if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())
          throw std::invalid_argument(q.id + ": constant " + std::to_string(v) + " is outside i32");
        ct.values.push_back(static_cast<std::int32_t>(v));
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
    out.columns.push_back(s.kind == select_kind::count ? 0 : int_column(schema, s.column, q.id));
  }
  return out;
}

/// out[i] = the term's truth at row i of the block (0 or 1). Each case is a plain loop over the block.
void evaluate_term(const compiled_term& t, const std::int32_t* x, std::uint32_t n, std::uint8_t* out) {
  const std::int32_t a = t.values[0];
  switch (t.op) {
    case compare_op::eq:
      for (std::uint32_t i = 0; i < n; ++i) out[i] = x[i] == a;
      break;
    case compare_op::ne:
      for (std::uint32_t i = 0; i < n; ++i) out[i] = x[i] != a;
      break;
    case compare_op::lt:
      for (std::uint32_t i = 0; i < n; ++i) out[i] = x[i] < a;
      break;
    case compare_op::le:
      for (std::uint32_t i = 0; i < n; ++i) out[i] = x[i] <= a;
      break;
    case compare_op::gt:
      for (std::uint32_t i = 0; i < n; ++i) out[i] = x[i] > a;
      break;
    case compare_op::ge:
      for (std::uint32_t i = 0; i < n; ++i) out[i] = x[i] >= a;
      break;
    case compare_op::between: {
      const std::int32_t b = t.values[1];
      for (std::uint32_t i = 0; i < n; ++i) out[i] = (x[i] >= a) & (x[i] <= b);
      break;
    }
    case compare_op::in:
      for (std::uint32_t i = 0; i < n; ++i) out[i] = x[i] == a;
      for (std::size_t k = 1; k < t.values.size(); ++k) {
        const std::int32_t b = t.values[k];
        for (std::uint32_t i = 0; i < n; ++i) out[i] |= x[i] == b;
      }
      break;
  }
  if (t.negated)
    for (std::uint32_t i = 0; i < n; ++i) out[i] ^= 1;
}

/// What one thread has found for one variant.
struct partial {
  std::uint64_t matched = 0;
  std::vector<std::int64_t> sums;  // per select item (sum items only)
};

struct aligned_frame {
  explicit aligned_frame(std::uint64_t bytes)
      : data(static_cast<std::byte*>(::operator new (bytes, std::align_val_t{64}))) {}
  ~aligned_frame() { ::operator delete (data, std::align_val_t{64}); }
  aligned_frame(const aligned_frame&) = delete;
  aligned_frame& operator=(const aligned_frame&) = delete;
  std::byte* data;
};

}  // namespace

std::vector<reference_answer> evaluate_reference(const columnar_table_file& table,
                                                 std::span<const query_variant* const> variants,
                                                 unsigned threads) {
  threads = std::max(1u, threads);
  std::vector<compiled_variant> compiled;
  for (const query_variant* q : variants) compiled.push_back(compile(*q, table.schema()));
  const std::size_t nv = compiled.size();
  const std::uint64_t frames = table.frames();
  const columnar_geometry& g = table.geometry();

  // A projection's rows as CSV text per frame, joined in frame order at the end: table order whatever the
  // thread that read the frame.
  std::vector<std::vector<std::string>> lines(nv);
  for (std::size_t v = 0; v < nv; ++v)
    if (compiled[v].projection) lines[v].resize(frames);
  std::vector<std::vector<partial>> partials(threads, std::vector<partial>(nv));
  std::atomic<std::uint64_t> next_frame{0};

  run_parallel(threads, [&](unsigned t) {
    aligned_frame frame(table.frame_bytes());
    std::vector<partial>& mine = partials[t];
    for (std::size_t v = 0; v < nv; ++v) mine[v].sums.assign(compiled[v].kinds.size(), 0);
    std::uint8_t mask[block_rows], any[block_rows], term[block_rows];
    for (std::uint64_t k; (k = next_frame.fetch_add(1, std::memory_order_relaxed)) < frames;) {
      table.read_frame(k, frame.data);
      const columnar_view view(g, frame.data);
      const std::uint32_t rows = view.rows();
      for (std::uint32_t first = 0; first < rows; first += block_rows) {
        const std::uint32_t n = std::min(block_rows, rows - first);
        const std::uint32_t page = first / block_rows;
        auto column = [&](std::uint32_t c) {
          return reinterpret_cast<const std::int32_t*>(view.page(c, page));
        };
        for (std::size_t v = 0; v < nv; ++v) {
          const compiled_variant& cv = compiled[v];
          std::fill_n(mask, n, std::uint8_t{1});
          for (const auto& clause : cv.where) {
            evaluate_term(clause[0], column(clause[0].column), n, any);
            for (std::size_t i = 1; i < clause.size(); ++i) {
              evaluate_term(clause[i], column(clause[i].column), n, term);
              for (std::uint32_t r = 0; r < n; ++r) any[r] |= term[r];
            }
            for (std::uint32_t r = 0; r < n; ++r) mask[r] &= any[r];
          }
          std::uint32_t matched = 0;
          for (std::uint32_t r = 0; r < n; ++r) matched += mask[r];
          mine[v].matched += matched;
          if (matched == 0) continue;
          if (cv.projection) {
            std::string& out = lines[v][k];
            for (std::uint32_t r = 0; r < n; ++r) {
              if (!mask[r]) continue;
              for (std::size_t s = 0; s < cv.columns.size(); ++s) {
                if (s != 0) out += ',';
                out += std::to_string(column(cv.columns[s])[r]);
              }
              out += '\n';
            }
            continue;
          }
          for (std::size_t s = 0; s < cv.kinds.size(); ++s) {
            if (cv.kinds[s] != select_kind::sum) continue;
            const std::int32_t* x = column(cv.columns[s]);
            std::int64_t sum = 0;
            for (std::uint32_t r = 0; r < n; ++r) sum += static_cast<std::int64_t>(x[r]) * mask[r];
            mine[v].sums[s] += sum;
          }
        }
      }
    }
  });

  std::vector<reference_answer> answers;
  for (std::size_t v = 0; v < nv; ++v) {
    reference_answer a{variants[v]->id, 0, variants[v]->select_text() + "\n"};
    std::vector<std::int64_t> sums(compiled[v].kinds.size(), 0);
    for (const auto& p : partials) {
      a.matched_rows += p[v].matched;
      for (std::size_t s = 0; s < sums.size(); ++s) sums[s] += p[v].sums[s];
    }
    if (compiled[v].projection) {
      for (const std::string& text : lines[v]) a.csv += text;
    } else {
      for (std::size_t s = 0; s < sums.size(); ++s) {
        if (s != 0) a.csv += ',';
        a.csv += compiled[v].kinds[s] == select_kind::count ? std::to_string(a.matched_rows)
                                                            : std::to_string(sums[s]);
      }
      a.csv += '\n';
    }
    answers.push_back(std::move(a));
  }
  return answers;
}

}  // namespace xf::apps::setquery
