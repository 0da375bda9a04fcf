// The query text's parser and binder: recursive descent straight into postfix nodes.
#include "operators/olap/query_text.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>
#include <utility>

#include "framework/model/suggest.hpp"

namespace xf::olap {
namespace {

struct token {
  enum kind_t { end, word, integer, real, text, symbol } kind = end;
  std::string value;   ///< word: as written; symbol: the operator; text: unquoted
  std::size_t at = 0;  ///< 1-based character position
};

/// Splits query text into tokens; throws std::string (the problem) on a character it cannot place.
std::vector<token> tokenize(const std::string& s) {
  std::vector<token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    token t;
    t.at = i + 1;
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      t.kind = token::word;
      t.value = s.substr(i, j - i);
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               ((c == '-' || c == '+' || c == '.') && i + 1 < s.size() &&
                (std::isdigit(static_cast<unsigned char>(s[i + 1])) || s[i + 1] == '.'))) {
      std::size_t j = i + 1;
      bool is_real = c == '.';
      while (j < s.size()) {
        const char d = s[j];
        if (std::isdigit(static_cast<unsigned char>(d))) {
          ++j;
        } else if (d == '.' || d == 'e' || d == 'E') {
          is_real = true;
          ++j;
          if ((d == 'e' || d == 'E') && j < s.size() && (s[j] == '-' || s[j] == '+')) ++j;
        } else {
          break;
        }
      }
      t.kind = is_real ? token::real : token::integer;
      t.value = s.substr(i, j - i);
      i = j;
    } else if (c == '\'') {
      std::size_t j = i + 1;
      std::string v;
      while (true) {
        if (j >= s.size()) throw "at character " + std::to_string(t.at) + ": a quoted text that never ends";
        if (s[j] == '\'') {
          if (j + 1 < s.size() && s[j + 1] == '\'') {
            v += '\'';
            j += 2;
            continue;
          }
          break;
        }
        v += s[j++];
      }
      t.kind = token::text;
      t.value = v;
      i = j + 1;
    } else {
      static constexpr std::string_view two[] = {"<>", "!=", "<=", ">="};
      t.kind = token::symbol;
      for (std::string_view op : two)
        if (s.compare(i, 2, op) == 0) t.value = std::string(op);
      if (t.value.empty()) {
        if (std::string_view("=<>(),*").find(c) == std::string_view::npos)
          throw "at character " + std::to_string(t.at) + ": unexpected '" + std::string(1, c) + "'";
        t.value = std::string(1, c);
      }
      i += t.value.size();
    }
    out.push_back(std::move(t));
  }
  token last;
  last.at = s.size() + 1;
  out.push_back(last);
  return out;
}

bool keyword(const token& t, std::string_view k) {
  if (t.kind != token::word || t.value.size() != k.size()) return false;
  for (std::size_t i = 0; i < k.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(t.value[i])) != k[i]) return false;
  return true;
}

bool reserved(const token& t) {
  for (std::string_view k : {"AND", "OR", "NOT", "BETWEEN", "IN"})
    if (keyword(t, k)) return true;
  return false;
}

std::string describe(const token& t) {
  switch (t.kind) {
    case token::end:
      return "the end";
    case token::text:
      return "'" + t.value + "'";
    default:
      return "'" + t.value + "'";
  }
}

/// A constant as written, before it meets its column.
struct pending_literal {
  token value;
};

/// The predicate parser: emits postfix nodes into a program whose slots hold column names.
class predicate_parser {
 public:
  predicate_parser(const std::string& text, query_program& q, std::vector<std::string>& slot_names)
      : tokens_(tokenize(text)), q_(q), names_(slot_names) {}

  void parse() {
    if (peek().kind == token::end) return;
    expression();
    if (peek().kind != token::end) fail(peek(), "expected AND, OR or the end, found " + describe(peek()));
  }

  std::vector<token> literal_tokens;  ///< index: the literal's index in q.literals

 private:
  const token& peek() const { return tokens_[pos_]; }
  const token& next() { return tokens_[pos_++]; }
  [[noreturn]] static void fail(const token& t, const std::string& what) {
    throw "at character " + std::to_string(t.at) + ": " + what;
  }

  void emit(node n) {
    if (q_.node_count >= max_nodes)
      fail(peek(), "more than " + std::to_string(max_nodes) + " conditions and connectives");
    q_.nodes[q_.node_count++] = n;
    depth_ += n.kind == node_kind::op_and || n.kind == node_kind::op_or ? -1
              : n.kind == node_kind::op_not                             ? 0
                                                                        : 1;
    if (depth_ > 60) fail(peek(), "the condition nests too deeply");
  }
  void connective(node_kind k, const token& at) {
    node n{};
    n.kind = k;
    n.at = static_cast<std::uint16_t>(std::min<std::size_t>(at.at, 0xffff));
    emit(n);
  }

  void expression() {
    term();
    while (keyword(peek(), "OR")) {
      const token& op = next();
      term();
      connective(node_kind::op_or, op);
    }
  }
  void term() {
    factor();
    while (keyword(peek(), "AND")) {
      const token& op = next();
      factor();
      connective(node_kind::op_and, op);
    }
  }
  void factor() {
    if (keyword(peek(), "NOT")) {
      const token& op = next();
      factor();
      connective(node_kind::op_not, op);
      return;
    }
    if (peek().kind == token::symbol && peek().value == "(") {
      next();
      expression();
      if (!(peek().kind == token::symbol && peek().value == ")"))
        fail(peek(), "expected ')', found " + describe(peek()));
      next();
      return;
    }
    atom();
  }

  std::uint8_t slot_of(const token& column) {
    for (std::size_t i = 0; i < names_.size(); ++i)
      if (names_[i] == column.value) return static_cast<std::uint8_t>(i);
    if (names_.size() >= max_slots)
      fail(column, "a query names at most " + std::to_string(max_slots) + " columns");
    if (column.value.size() >= name_bytes)
      fail(column, "column name '" + column.value + "' is longer than " + std::to_string(name_bytes - 1));
    names_.push_back(column.value);
    return static_cast<std::uint8_t>(names_.size() - 1);
  }

  std::uint16_t constant() {
    const token& t = next();
    if (t.kind != token::integer && t.kind != token::real && t.kind != token::text)
      fail(t, "expected a constant (a number or 'text'), found " + describe(t));
    if (q_.literal_count >= max_literals) fail(t, "more than " + std::to_string(max_literals) + " constants");
    literal_tokens.push_back(t);
    return static_cast<std::uint16_t>(q_.literal_count++);
  }

  void atom() {
    const token& column = next();
    if (column.kind != token::word || reserved(column))
      fail(column, "expected a column name, NOT or '(', found " + describe(column));
    node n{};
    n.slot = slot_of(column);
    n.at = static_cast<std::uint16_t>(std::min<std::size_t>(column.at, 0xffff));
    bool negate = false;
    if (keyword(peek(), "NOT")) {
      next();
      negate = true;
      if (!keyword(peek(), "BETWEEN") && !keyword(peek(), "IN"))
        fail(peek(), "expected BETWEEN or IN after NOT, found " + describe(peek()));
    }
    const token& op = next();
    if (keyword(op, "BETWEEN")) {
      n.kind = node_kind::between;
      n.first = constant();
      if (!keyword(peek(), "AND")) fail(peek(), "expected AND in BETWEEN, found " + describe(peek()));
      next();
      constant();
      n.literals = 2;
    } else if (keyword(op, "IN")) {
      n.kind = node_kind::in_list;
      if (!(peek().kind == token::symbol && peek().value == "("))
        fail(peek(), "expected '(' after IN, found " + describe(peek()));
      next();
      n.first = constant();
      n.literals = 1;
      while (peek().kind == token::symbol && peek().value == ",") {
        next();
        constant();
        ++n.literals;
      }
      if (!(peek().kind == token::symbol && peek().value == ")"))
        fail(peek(), "expected ',' or ')' in the IN list, found " + describe(peek()));
      next();
    } else if (op.kind == token::symbol && op.value != "(" && op.value != ")" && op.value != "," &&
               op.value != "*") {
      n.kind = node_kind::compare;
      n.op = op.value == "="                        ? compare_op::eq
             : op.value == "<>" || op.value == "!=" ? compare_op::ne
             : op.value == "<"                      ? compare_op::lt
             : op.value == "<="                     ? compare_op::le
             : op.value == ">"                      ? compare_op::gt
                                                    : compare_op::ge;
      n.first = constant();
      n.literals = 1;
    } else {
      fail(op, "expected a comparison (= <> < <= > >=), BETWEEN or IN after column '" + column.value +
                   "', found " + describe(op));
    }
    emit(n);
    if (negate) connective(node_kind::op_not, op);
  }

  std::vector<token> tokens_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  query_program& q_;
  std::vector<std::string>& names_;
};

struct select_item {
  output_kind kind;
  std::string column;  ///< empty for COUNT(*)
  std::size_t at;
};

std::vector<select_item> parse_select_items(const std::string& text) {
  const std::vector<token> t = tokenize(text);
  std::vector<select_item> items;
  std::size_t i = 0;
  const auto fail = [](const token& at, const std::string& what) -> void {
    throw "at character " + std::to_string(at.at) + ": " + what;
  };
  const auto symbol = [&](const char* s) { return t[i].kind == token::symbol && t[i].value == s; };
  if (t[0].kind == token::end) fail(t[0], "select names nothing (COUNT(*), SUM(col), MIN, MAX or columns)");
  while (true) {
    if (t[i].kind != token::word)
      fail(t[i], "expected COUNT(*), SUM, MIN, MAX or a column, found " + describe(t[i]));
    select_item item{output_kind::column, t[i].value, t[i].at};
    const bool fn =
        keyword(t[i], "COUNT") || keyword(t[i], "SUM") || keyword(t[i], "MIN") || keyword(t[i], "MAX");
    if (fn && t[i + 1].kind == token::symbol && t[i + 1].value == "(") {
      const token& name = t[i];
      i += 2;
      if (keyword(name, "COUNT")) {
        if (!symbol("*")) fail(t[i], "COUNT takes '*' (every matching row), found " + describe(t[i]));
        item = {output_kind::count_rows, "", name.at};
      } else {
        if (t[i].kind != token::word || reserved(t[i]))
          fail(t[i], "expected a column in " + name.value + "(…), found " + describe(t[i]));
        item.kind = keyword(name, "SUM")   ? output_kind::sum
                    : keyword(name, "MIN") ? output_kind::min
                                           : output_kind::max;
        item.column = t[i].value;
      }
      ++i;
      if (!symbol(")")) fail(t[i], "expected ')', found " + describe(t[i]));
    } else if (reserved(t[i])) {
      fail(t[i], "expected COUNT(*), SUM, MIN, MAX or a column, found " + describe(t[i]));
    }
    items.push_back(item);
    ++i;
    if (t[i].kind == token::end) break;
    if (!symbol(",")) fail(t[i], "expected ',' or the end, found " + describe(t[i]));
    ++i;
  }
  if (items.size() > max_outputs)
    throw "select has " + std::to_string(items.size()) + " items; at most " + std::to_string(max_outputs);
  return items;
}

/// Copies `text` into `out` and checks its syntax: "" or "parameter 'NAME': the problem" (thread_local: the
/// schema copies it before the next call).
template <std::size_t N>
const char* store(const char* name, const std::string& text, fixed_text<N>& out,
                  std::string (*syntax)(const std::string&)) {
  thread_local std::string problem;
  problem.clear();
  if (text.size() >= N) {
    problem = "parameter '" + std::string(name) + "': longer than " + std::to_string(N - 1) + " characters";
    return problem.c_str();
  }
  // The text is kept zero-terminated, so a NUL inside it (YAML's "\0", which the tokenizer takes inside a
  // quoted constant) would cut what the operator compiles short of what was checked here.
  if (const std::size_t nul = text.find('\0'); nul != std::string::npos) {
    problem = "parameter '" + std::string(name) + "': at character " + std::to_string(nul + 1) +
              ": a NUL character";
    return problem.c_str();
  }
  std::memset(out.text, 0, N);
  std::memcpy(out.text, text.data(), text.size());
  if (std::string why = syntax(text); !why.empty()) problem = "parameter '" + std::string(name) + "': " + why;
  return problem.c_str();
}

std::string group_syntax(const std::string& text) {
  // The tokenizer throws its problem (an unexpected character, a quote that never ends), as the where and
  // select parsers' callers expect: caught here too, or a topology's `group_by: "a'"` ended the process.
  try {
    const std::vector<token> t = tokenize(text);
    if (t[0].kind == token::end) return "";
    if (t[0].kind != token::word || reserved(t[0]) || t[1].kind != token::end)
      return "at character " + std::to_string(t[0].at) + ": group_by names one column";
    return "";
  } catch (const std::string& problem) {
    return problem;
  }
}

/// A constant of the text at token `t` as the value of a `T` column, or the problem.
template <class T>
std::string scalar_bits(const token& t, const std::string& column, std::uint64_t& bits) {
  const std::string type = std::string(name_of(element_of<T>::value));
  const std::string where = "column '" + column + "' (" + type + ")";
  if (t.kind == token::text) return "'" + t.value + "' is text, but " + where + " holds numbers";
  if constexpr (std::is_floating_point_v<T>) {
    bits = zone_bits(static_cast<T>(std::strtod(t.value.c_str(), nullptr)));
    return "";
  } else {
    if (t.kind == token::real) return t.value + " is not an integer, but " + where + " holds integers";
    errno = 0;
    const bool negative = !t.value.empty() && t.value[0] == '-';
    const std::string digits = t.value[0] == '+' || negative ? t.value.substr(1) : t.value;
    const unsigned long long magnitude = std::strtoull(digits.c_str(), nullptr, 10);
    const auto out_of_range = [&] {
      return t.value + " is out of the range of " + where + ": " +
             std::to_string(static_cast<long long>(std::numeric_limits<T>::min())) + " to " +
             std::to_string(static_cast<unsigned long long>(std::numeric_limits<T>::max()));
    };
    if (errno == ERANGE) return out_of_range();
    if (negative) {
      if (!std::is_signed_v<T> && magnitude != 0) return out_of_range();
      if (magnitude > static_cast<unsigned long long>(std::numeric_limits<T>::max()) + 1ull)
        return out_of_range();
      bits = zone_bits(static_cast<T>(0ull - magnitude));
      return "";
    }
    if (magnitude > static_cast<unsigned long long>(std::numeric_limits<T>::max())) return out_of_range();
    bits = zone_bits(static_cast<T>(magnitude));
    return "";
  }
}

}  // namespace

std::string where_syntax(const std::string& where) {
  try {
    query_program scratch{};
    std::vector<std::string> names;
    predicate_parser(where, scratch, names).parse();
    return "";
  } catch (const std::string& problem) {
    return problem;
  }
}

std::string select_syntax(const std::string& select) {
  try {
    parse_select_items(select);
    return "";
  } catch (const std::string& problem) {
    return problem;
  }
}

const char* store_where(const std::string& text, where_text& out) {
  return store("where", text, out, where_syntax);
}
const char* store_select(const std::string& text, select_text& out) {
  return store("select", text, out, select_syntax);
}
const char* store_group_by(const std::string& text, column_text& out) {
  return store("group_by", text, out, group_syntax);
}
const char* store_skip(const std::string& text, page_skip& out) {
  static constexpr std::pair<const char*, page_skip> levels[] = {{"none", page_skip::none},
                                                                 {"columns", page_skip::columns},
                                                                 {"zones", page_skip::zones},
                                                                 {"blooms", page_skip::blooms}};
  for (const auto& [name, level] : levels)
    if (text == name) {
      out = level;
      return "";
    }
  return "parameter 'skip' is one of none, columns, zones, blooms";
}

std::optional<param_problem> compile_query(const std::string& where, const std::string& select,
                                           const std::string& group_by, const topic_info& input,
                                           query_program& q) {
  q = query_program{};
  q.skip = page_skip::blooms;
  if (!input.columnar)
    return param_problem{"",
                         "reads columnar topics, but topic '" + input.name + "' holds rows (layout: row)"};
  q.frame = *input.columnar;
  std::vector<std::string> names;
  std::vector<std::string> origin;  // the parameter that first named each slot
  std::vector<token> literal_tokens;
  try {
    predicate_parser parser(where, q, names);
    parser.parse();
    literal_tokens = parser.literal_tokens;
  } catch (const std::string& problem) {
    return param_problem{"where", problem};
  }
  origin.assign(names.size(), "where");
  std::vector<select_item> items;
  try {
    items = parse_select_items(select);
  } catch (const std::string& problem) {
    return param_problem{"select", problem};
  }
  const auto slot_of = [&](const std::string& name, const char* param) -> std::optional<std::uint8_t> {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return static_cast<std::uint8_t>(i);
    if (names.size() >= max_slots) return std::nullopt;
    names.push_back(name);
    origin.push_back(param);
    return static_cast<std::uint8_t>(names.size() - 1);
  };
  const std::string group = group_syntax(group_by).empty() ? group_by : "";
  std::string group_name = group;
  group_name.erase(std::remove_if(group_name.begin(), group_name.end(),
                                  [](char c) { return std::isspace(static_cast<unsigned char>(c)); }),
                   group_name.end());
  if (!group_name.empty()) {
    auto s = slot_of(group_name, "group_by");
    if (!s)
      return param_problem{"group_by", "a query names at most " + std::to_string(max_slots) + " columns"};
    q.has_group = true;
    q.group_slot = *s;
  }
  bool any_aggregate = false, any_column = false;
  for (const select_item& item : items) {
    output_item out{};
    out.kind = item.kind;
    if (item.kind != output_kind::count_rows) {
      auto s = slot_of(item.column, "select");
      if (!s)
        return param_problem{"select", "a query names at most " + std::to_string(max_slots) + " columns"};
      out.slot = *s;
    }
    (item.kind == output_kind::column ? any_column : any_aggregate) = true;
    q.outputs[q.output_count++] = out;
  }
  // Names → columns.
  q.slot_count = static_cast<std::uint32_t>(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto column = input.column(names[i]);
    if (!column) {
      std::string message = "topic '" + input.name + "' has no column '" + names[i] + "'";
      message += did_you_mean(names[i], input.column_names);
      return param_problem{origin[i], message};
    }
    std::memset(q.slots[i].name, 0, name_bytes);
    std::memcpy(q.slots[i].name, names[i].data(), names[i].size());
    q.slots[i].column = *column;
  }
  // Constants → their columns' types.
  for (std::uint32_t k = 0; k < q.node_count; ++k) {
    const node& n = q.nodes[k];
    if (n.kind == node_kind::op_and || n.kind == node_kind::op_or || n.kind == node_kind::op_not) continue;
    const column_layout& l = q.column_of(n.slot).layout;
    for (std::uint32_t j = 0; j < n.literals; ++j) {
      literal& lit = q.literals[n.first + j];
      const token& t = literal_tokens[n.first + j];
      const std::string at = "at character " + std::to_string(t.at) + ": ";
      lit.type = t.kind == token::text   ? literal::kind::text
                 : t.kind == token::real ? literal::kind::real
                                         : literal::kind::integer;
      if (l.chars != 0) {
        if (t.kind != token::text)
          return param_problem{"where", at + t.value + " is a number, but column '" + names[n.slot] +
                                            "' holds text (char(" + std::to_string(l.chars) + ")): quote it"};
        if (t.value.size() > l.chars)
          return param_problem{"where", at + "'" + t.value + "' is longer than column '" + names[n.slot] +
                                            "' (char(" + std::to_string(l.chars) + "))"};
        if (q.text_used + l.chars > text_pool_bytes)
          return param_problem{"where", at + "the query's text constants take more than " +
                                            std::to_string(text_pool_bytes) + " bytes"};
        lit.text_at = static_cast<std::uint16_t>(q.text_used);
        lit.text_bytes = static_cast<std::uint16_t>(l.chars);
        std::memcpy(q.text_pool + q.text_used, t.value.data(), t.value.size());
        q.text_used += l.chars;
        continue;
      }
      std::string problem;
      visit_element(l.element,
                    [&](auto zero) { problem = scalar_bits<decltype(zero)>(t, names[n.slot], lit.bits); });
      if (!problem.empty()) return param_problem{"where", at + problem};
    }
  }
  // What the select asks of its columns.
  for (std::uint32_t k = 0; k < q.output_count; ++k) {
    const output_item& o = q.outputs[k];
    if (o.kind == output_kind::count_rows || o.kind == output_kind::column) continue;
    const column_layout& l = q.column_of(o.slot).layout;
    if (l.chars != 0)
      return param_problem{"select", std::string(o.kind == output_kind::sum   ? "SUM"
                                                 : o.kind == output_kind::min ? "MIN"
                                                                              : "MAX") +
                                         "(" + names[o.slot] + "): column '" + names[o.slot] +
                                         "' holds text; aggregates take numeric columns"};
  }
  if (q.has_group) {
    const column_layout& l = q.column_of(q.group_slot).layout;
    if (l.chars != 0 || size_of(l.element) > 4 || l.element == element_type::f32)
      return param_problem{
          "group_by",
          "group_by takes an integer column of at most 32 bits; '" + names[q.group_slot] + "' is " +
              (l.chars != 0 ? "char(" + std::to_string(l.chars) + ")" : std::string(name_of(l.element)))};
    for (std::uint32_t k = 0; k < q.output_count; ++k)
      if (q.outputs[k].kind == output_kind::column && q.outputs[k].slot != q.group_slot)
        return param_problem{"select", "with group_by " + names[q.group_slot] +
                                           ", a column outside an aggregate must be " + names[q.group_slot] +
                                           ", not '" + names[q.outputs[k].slot] + "'"};
    if (!any_aggregate)
      return param_problem{"select", "group_by needs an aggregate in select (COUNT(*), SUM, MIN, MAX)"};
  } else if (any_column && any_aggregate) {
    return param_problem{"select",
                         "select mixes columns and aggregates: group by the column (group_by) or "
                         "select only columns (a projection) or only aggregates"};
  }
  // The kernel walks each frame by the pages of the named column with the fewest rows a page.
  for (std::uint32_t s = 0; s < q.slot_count; ++s)
    if (q.column_of(s).rows_per_page < q.column_of(q.driving_slot).rows_per_page)
      q.driving_slot = static_cast<std::uint8_t>(s);
  q.uniform_pages = true;
  for (std::uint32_t s = 0; s < q.slot_count; ++s)
    q.uniform_pages =
        q.uniform_pages && q.column_of(s).rows_per_page == q.column_of(q.driving_slot).rows_per_page;
  q.bound = true;
  return std::nullopt;
}

std::vector<std::string> output_names(const query_program& q) {
  std::vector<std::string> names;
  const auto name = [&](std::uint32_t slot) { return std::string(q.slots[slot].name); };
  if (q.has_group) names.push_back(name(q.group_slot));
  for (std::uint32_t k = 0; k < q.output_count; ++k) {
    const output_item& o = q.outputs[k];
    switch (o.kind) {
      case output_kind::count_rows:
        names.push_back("COUNT(*)");
        break;
      case output_kind::sum:
        names.push_back("SUM(" + name(o.slot) + ")");
        break;
      case output_kind::min:
        names.push_back("MIN(" + name(o.slot) + ")");
        break;
      case output_kind::max:
        names.push_back("MAX(" + name(o.slot) + ")");
        break;
      case output_kind::column:
        if (!q.has_group) names.push_back(name(o.slot));
        break;
    }
  }
  return names;
}

}  // namespace xf::olap
