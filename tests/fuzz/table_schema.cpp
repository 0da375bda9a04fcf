// Fuzz target: xeflow-table's schema text. The input's first line is --schema ("NAME:TYPE,…"), the second
// rows_per_frame (decimal; absent or not a number: the default), every further line a --bloom option
// ("COL:BITS:HASHES"). A schema the parser and geometry_of accept must make a topic whose YAML
// (table_topic_yaml, what xeflow-table prints) the loader reads back as the same columns.
#include <charconv>
#include <vector>

#include "framework/core/errors.hpp"
#include "framework/model/yaml_loader.hpp"
#include "operators/sources/table_csv.hpp"
#include "tests/fuzz/fuzz_target.hpp"
#include "tests/fuzz/topology_checks.hpp"

XF_FUZZ_TARGET(table_schema) {
  std::vector<std::string_view> lines;
  for (std::string_view text = as_text(data);;) {
    const std::size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  std::uint32_t rows = default_table_rows_per_frame;
  if (lines.size() > 1) std::from_chars(lines[1].data(), lines[1].data() + lines[1].size(), rows);
  xf::table_schema schema;
  columnar_geometry geometry{};
  try {
    schema = parse_table_schema(lines[0], rows);
    for (std::size_t i = 2; i < lines.size(); ++i) apply_bloom_option(schema, lines[i]);
    geometry = geometry_of(schema);
  } catch (const config_error&) {
    return 0;
  }
  const std::string yaml =
      table_topic_yaml(schema, "t", 1) + "operators:\n  sink: {class: null_sink, on: cpu, inputs: [t]}\n";
  topology_spec spec;
  std::vector<diagnostic> problems;
  try {
    problems = read_topology(parse_yaml(yaml, "<table topic>"), "<table topic>", builtin_registry(), spec);
  } catch (const config_error& e) {
    fail_invariant("the table's topic YAML does not parse: " + std::string(e.what()) + "\n" + yaml);
  }
  fuzz_expect(problems.empty(), "the table's topic YAML has problems: " +
                                    (problems.empty() ? std::string() : problems.front().message) + "\n" +
                                    yaml);
  fuzz_expect(spec.topics.size() == 1 && spec.topics[0].columns.size() == schema.columns.size() &&
                  spec.topics[0].rows_per_frame == schema.rows_per_frame,
              "the table's topic YAML reads as another topic:\n" + yaml);
  for (std::size_t c = 0; c < schema.columns.size(); ++c)
    fuzz_expect(spec.topics[0].columns[c].name == schema.columns[c].name &&
                    spec.topics[0].columns[c].layout == schema.columns[c].layout,
                "column " + std::to_string(c) + " reads back differently:\n" + yaml);
  fuzz_expect(geometry.frame_bytes() > 0, "a schema with a geometry of empty frames");
  return 0;
}
