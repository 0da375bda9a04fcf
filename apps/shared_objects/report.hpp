// xeflow-shared-bench's output: the table on stdout and the JSON document (device, date, commit, command
// line, configuration, every row with every run).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "apps/shared_objects/runner.hpp"

namespace xf::shared_bench {

/// An experiment's title and the table's column names.
void print_title(const std::string& title);
/// Rows as the table's lines: median times, the slowdown against explicit at the same size (among `rows`),
/// the median run's phases, bytes and faults; rows that failed with their reason instead.
void print_rows(const std::vector<row>& rows);

nlohmann::json to_json(const row& r);

/// "edge=256 iterations=32"
std::string size_text(const std::vector<std::pair<std::string, std::uint64_t>>& size);

}  // namespace xf::shared_bench
