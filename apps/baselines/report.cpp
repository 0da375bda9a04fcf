// xeflow-baseline's output: the result as JSON or as a table line.
#include "apps/baselines/report.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "apps/baselines/host_side.hpp"
#include "framework/core/units.hpp"

namespace xf::baselines {
namespace {

nlohmann::json params_json(const op_config& op) {
  if (op.kind == op_kind::scale) return {{"factor", op.scale.factor}};
  if (op.kind == op_kind::raid6) return {{"k", op.raid6.k}, {"block_bytes", op.raid6.block_bytes}};
  if (is_encoding(op.kind)) return nlohmann::json::object();
  return {{"iterations", op.fma.iterations}, {"a", op.fma.a}, {"b", op.fma.b}};
}

}  // namespace

nlohmann::json to_json(const result& r) {
  const config& c = r.cfg;
  nlohmann::json stage_params = nlohmann::json::array();
  for (std::uint32_t k = 0; k < c.stages; ++k) stage_params.push_back(params_json(stage_op(c, k)));
  nlohmann::json op_params = params_json(c.op);
  const bool uniform = std::all_of(stage_params.begin(), stage_params.end(),
                                   [&](const nlohmann::json& p) { return p == stage_params.front(); });
  if (!uniform) op_params.erase("iterations");  // the only parameter that can differ between stages
  return {
      {"mode", std::string(name_of(c.mode))},
      {"streams", c.streams},
      {"shape", std::string(name_of(c.shape))},
      {"stages", c.stages},
      {"op", std::string(name_of(c.op.kind))},
      {"op_params", op_params},
      {"stage_params", stage_params},
      {"element", std::string(xf::name_of(c.element))},
      {"batch_bytes", c.batch_bytes},
      {"output_bytes", output_bytes(c.op, c.batch_bytes)},
      {"total_bytes", r.streamed_bytes},
      {"requested_total_bytes", c.total_bytes},
      {"dataset_frames", r.dataset_frames},
      {"warmup_batches", c.warmup_batches},
      {"seed", c.seed},
      {"verify", std::string(name_of(c.verify))},
      {"verify_threads", c.verify_threads},
      {"cpu_stage_threads", c.cpu_stage_threads},
      {"batches", r.batches},
      {"seconds", r.seconds},
      {"gbps", r.gbps},
      {"latency_p50_us", r.latency_p50_us},
      {"latency_p99_us", r.latency_p99_us},
      {"latency_mean_us", r.latency_mean_us},
      {"latency_max_us", r.latency_max_us},
      {"mismatches", r.mismatches},
      {"device", r.device},
  };
}

void print_table(const result& r) {
  const config& c = r.cfg;
  std::printf("%-13s %7s %5s %6s %5s %10s %10s %8s %9s %8s %10s %10s %10s  %s\n", "mode", "streams", "shape",
              "stages", "op", "batch", "total", "batches", "seconds", "GB/s", "p50_us", "p99_us",
              "mismatches", "device");
  std::printf("%-13s %7u %5s %6u %5s %10s %10s %8llu %9.4f %8.3f %10.1f %10.1f %10llu  %s\n",
              std::string(name_of(c.mode)).c_str(), c.streams, std::string(name_of(c.shape)).c_str(),
              c.stages, std::string(name_of(c.op.kind)).c_str(), xf::format_bytes(c.batch_bytes).c_str(),
              xf::format_bytes(r.streamed_bytes).c_str(), static_cast<unsigned long long>(r.batches),
              r.seconds, r.gbps, r.latency_p50_us, r.latency_p99_us,
              static_cast<unsigned long long>(r.mismatches), r.device.c_str());
}

}  // namespace xf::baselines
