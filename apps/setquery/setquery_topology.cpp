// The Set Query topologies' YAML, from the query list and the BENCH schema.
#include "apps/setquery/setquery_topology.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "apps/setquery/setquery_queries.hpp"

namespace xf::apps::setquery {

namespace {

std::string lower(std::string_view s) {
  std::string l(s);
  for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return l;
}

std::string column_line(const table_column& c) {
  std::string type = c.layout.chars != 0 ? "char(" + std::to_string(c.layout.chars) + ")"
                                         : std::string(name_of(c.layout.element));
  std::string line = "      - {name: " + c.name + ", type: " + type;
  if (c.layout.bloom_bits != 0)
    line += ", bloom_bits: " + std::to_string(c.layout.bloom_bits) +
            ", bloom_hashes: " + std::to_string(c.layout.bloom_hashes);
  return line + "}\n";
}

/// What each family measures, for the file's opening comment.
std::string_view family_summary(std::string_view family) {
  if (family == "Q1") return "COUNT(*) WHERE KN = 2, for each of the 12 KN columns";
  if (family == "Q2A") return "COUNT(*) WHERE K2 = 2 AND KN = 3, for each KN but K2";
  if (family == "Q2B") return "COUNT(*) WHERE K2 = 2 AND NOT KN = 3, for each KN but K2";
  if (family == "Q3A") return "SUM(K1K) WHERE KSEQ BETWEEN 400000 AND 500000 AND KN = 3";
  if (family == "Q3B") return "SUM(K1K) WHERE (five KSEQ ranges OR'ed) AND KN = 3";
  if (family == "Q4A") return "KSEQ, K500K WHERE 3 consecutive conditions of O'Neil's ten";
  return "KSEQ, K500K WHERE 5 consecutive conditions of O'Neil's ten";
}

}  // namespace

std::string topology_file_name(std::string_view family) {
  return "setquery_" + lower(family) + ".yaml";
}

std::string topology_yaml(std::string_view family, const topology_options& options) {
  if (std::find(query_families.begin(), query_families.end(), family) == query_families.end())
    throw std::invalid_argument("no Set Query family '" + std::string(family) +
                                "' (Q1 Q2A Q2B Q3A Q3B Q4A Q4B)");
  const table_schema schema = bench_schema(options.rows_per_frame);
  std::string y;
  y += "# Set Query benchmark (O'Neil), " + std::string(family) + ": " + std::string(family_summary(family)) +
       ".\n";
  y += "# Written by xeflow-setquery-yaml from apps/setquery's query list and BENCH schema; regenerate, do "
       "not edit\n";
  y += "# (tests/apps/setquery_test.cpp checks this file against the generator). Make the table and the\n";
  y += "# expected answers first:\n";
  y += "#   xeflow-setquery-gen --rows 10M --out " + options.table_path + "\n";
  y += "#   xeflow-setquery-ref " + options.table_path + " --query " + std::string(family) +
       " --out-dir expected\n";
  y += "# and compare " + options.results_dir + "/ID.csv with expected/ID.csv.\n";
  y += "name: setquery_" + lower(family) + "\n";
  y += "topics:\n";
  y += "  # The BENCH table exactly as the generator writes it (columns in page order, blooms included).\n";
  y += "  bench:\n";
  y += "    layout: columnar\n";
  y += "    rows_per_frame: " + std::to_string(schema.rows_per_frame) + "\n";
  y += "    capacity: " + std::to_string(options.capacity) + "\n";
  y += "    columns:\n";
  for (const table_column& c : schema.columns) y += column_line(c);
  y += "operators:\n";
  y += "  source: {class: table_source, threads: " + std::to_string(options.source_threads) +
       ", outputs: [bench], params: {path: " + options.table_path + "}}\n";
  for (const query_variant& q : setquery_variants()) {
    if (q.family != family) continue;
    y += "  " + lower(q.id) + ": {class: query, on: gpu, inputs: [bench], params: {where: \"" +
         q.where_text() + "\", select: \"" + q.select_text() + "\", result: " + options.results_dir + "/" +
         q.id + ".csv}}\n";
  }
  // A full block of 32 warps, whatever the family's size: each query's walk is bound by its warps' loads
  // (one dependent load a predicate term a row), and the default 8 warps left a family of 6-8 queries one
  // warp each, in 264 blocks whose polling of the mapped topic's host words crowded its reads out. H200,
  // steady pass: Q3B mapped 31-134 ms with 8 warps (264 blocks), 4.9 ms with 8 warps in 132 blocks,
  // 0.8-1.6 ms with 32 (132 blocks); Q4B mapped 45-48 ms, 29 ms, 31-33 ms.
  y += "runtime: {executor: auto, warps_per_block: 32}\n";
  return y;
}

}  // namespace xf::apps::setquery
