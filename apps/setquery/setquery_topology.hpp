// The Set Query topologies, written from the query list and the table's schema so the YAML, the generator
// and the reference cannot disagree: per family (Q1 … Q4B) one CPU table_source publishing the columnar
// topic `bench` and one GPU `query` operator per variant, each writing its result file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "apps/setquery/setquery_table.hpp"

namespace xf::apps::setquery {

struct topology_options {
  std::string table_path = "bench.xft";  ///< the table_source's file (xeflow-setquery-gen --out)
  std::string results_dir = "results";   ///< each query writes results_dir/ID.csv
  std::uint32_t rows_per_frame = default_rows_per_frame;
  std::uint32_t capacity = 32;  ///< frames in flight on `bench` (32 frames of 3.2 MiB: 103 MiB)
  std::uint32_t source_threads = 8;
};

/// "setquery_q1.yaml" for "Q1".
std::string topology_file_name(std::string_view family);

/// The topology of `family` (one of query_families) as YAML text. Throws std::invalid_argument for an
/// unknown family.
std::string topology_yaml(std::string_view family, const topology_options& options = {});

}  // namespace xf::apps::setquery
