// The query operator's text: `where`, `select` and `group_by` as written in a topology, checked for syntax
// where the topology is loaded, and compiled against the input topic's columns into a query_program when
// the operator binds to it (names → columns, constants → the columns' types). Host code.
//
//   where    := term (OR term)*          empty: every row
//   term     := factor (AND factor)*
//   factor   := NOT factor | '(' where ')' | column op constant
//             | column [NOT] BETWEEN constant AND constant | column [NOT] IN '(' constant (',' constant)* ')'
//   op       := = | <> | != | < | <= | > | >=
//   constant := integer | real | 'text' ('' inside for a quote)
//   select   := item (',' item)*,  item := COUNT(*) | SUM(column) | MIN(column) | MAX(column) | column
//
// Keywords are case-insensitive; column names are as the topic declares them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "framework/model/operator.hpp"
#include "operators/olap/query_program.hpp"

namespace xf::olap {

/// Text held in trivially copyable params, zero-terminated.
template <std::size_t N>
struct fixed_text {
  char text[N];
  std::string str() const { return std::string(text); }
};
using where_text = fixed_text<1024>;
using select_text = fixed_text<512>;
using column_text = fixed_text<name_bytes>;

/// operator_schema::parsed functions: copy the text and check its syntax; the problem or "".
const char* store_where(const std::string& text, where_text& out);
const char* store_select(const std::string& text, select_text& out);
const char* store_group_by(const std::string& text, column_text& out);
/// `skip`: none, columns, zones or blooms (page_skip).
const char* store_skip(const std::string& text, page_skip& out);

/// The syntax problem of each text ("" when none), with the character position.
std::string where_syntax(const std::string& where);
std::string select_syntax(const std::string& select);

/// Compiles the query against `input`'s columns into `out`. Returns the problem with the parameter it
/// concerns: an unknown column (with the topic's columns), a constant of the wrong kind or out of its
/// column's range, an aggregate its column's type has none of, columns and aggregates mixed without a
/// matching group_by, too many columns, nodes or constants.
std::optional<param_problem> compile_query(const std::string& where, const std::string& select,
                                           const std::string& group_by, const topic_info& input,
                                           query_program& out);

/// The result's column names, as its first line carries them: COUNT(*), SUM(K1K), K500K (with group_by,
/// the group column first).
std::vector<std::string> output_names(const query_program& q);

}  // namespace xf::olap
