// What xeflow-baseline prints about a run: one JSON object (--json) or a table line.
#pragma once

#include <nlohmann/json.hpp>

#include "apps/baselines/baselines.hpp"

namespace xf::baselines {

/// The run as one JSON object: the configuration as run (cfg resolved), the throughput, latency and
/// verification figures. `op_params` holds the parameters every stage shares (fma's `iterations` only
/// when all GPU stages run the same count); `stage_params` holds each GPU stage's own, in stage order.
nlohmann::json to_json(const result& r);

/// The run as a header line and a table line on stdout.
void print_table(const result& r);

}  // namespace xf::baselines
