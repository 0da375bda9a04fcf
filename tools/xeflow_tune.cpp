// xeflow-tune: runs a topology on the GPU under the auto partition just long enough to tune it, then
// prints each GPU operator's fitted cost model, the measured and predicted round time of every sampled
// partition, and the partition chosen; --write saves the topology with that partition as explicit warps.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "framework/core/units.hpp"
#include "framework/kernel/kernel_program.hpp"
#include "framework/launch/launcher.hpp"
#include "framework/model/spec_validation.hpp"
#include "framework/model/spec_yaml.hpp"
#include "framework/model/yaml_loader.hpp"
#include "framework/plan/device_probe.hpp"
#include "framework/plan/plan.hpp"
#include "framework/runtime/executor.hpp"
#include "framework/runtime/logging.hpp"
#include "operators/builtin.hpp"
#include "operators/builtin_gpu.hpp"

namespace xf {
namespace {

std::string warps_text(const std::vector<std::uint32_t>& warps) {
  std::string text;
  for (std::uint32_t w : warps) text += (text.empty() ? "" : ":") + std::to_string(w);
  return text;
}

/// The models' round time of `warps` in µs, or "-" where a model is unknown.
std::string predicted_us(const std::vector<cost_fit>& fits, const std::vector<std::uint32_t>& warps,
                         double cycles_per_us) {
  if (fits.empty()) return "-";
  std::vector<partition_operator> ops;
  for (const cost_fit& f : fits) {
    if (!f.model.finite()) return "-";
    ops.push_back({f.model, 1, 0});
  }
  return format_fixed(predicted_round(ops, warps) / cycles_per_us, 2);
}

void print_tuning(const tuning_record& t, const std::vector<std::string>& names, double cycles_per_us) {
  std::cout << "tuning (" << t.reason << "): " << t.samples.size() << " partitions sampled ("
            << t.coarse_windows << " coarse, " << t.samples.size() - t.coarse_windows << " in "
            << t.local_rounds << " local ranges), " << t.sample_items << " items, "
            << format_fixed(t.end_ms - t.start_ms, 1) << " ms in all, fitting " << format_fixed(t.fit_us, 0)
            << " us\n\n";
  std::cout << "cost models, f(N) = theta2*N^2 + theta1*N + theta0 in us per work item (N: warps):\n";
  std::printf("  %-16s %-6s %12s %12s %12s %10s %6s\n", "operator", "fit", "theta2", "theta1", "theta0",
              "rms us", "passes");
  auto fit_row = [&](const std::string& name, const char* which, const cost_fit& f) {
    if (!f.model.finite()) {
      std::printf("  %-16s %-6s %12s %12s %12s %10s %6s\n", name.c_str(), which, "-", "-", "-", "-", "-");
      return;
    }
    std::printf("  %-16s %-6s %12.5g %12.5g %12.5g %10.3g %6u\n", name.c_str(), which,
                f.model.theta2 / cycles_per_us, f.model.theta1 / cycles_per_us,
                f.model.theta0 / cycles_per_us, f.rms_error / cycles_per_us, f.passes);
  };
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i < t.coarse_fits.size()) fit_row(names[i], "coarse", t.coarse_fits[i]);
    if (i < t.fits.size()) fit_row(names[i], "local", t.fits[i]);
  }
  std::cout << "\nsampled partitions (warps per operator: ";
  for (std::size_t i = 0; i < names.size(); ++i) std::cout << (i ? ":" : "") << names[i];
  std::cout << "), round time in us:\n";
  std::printf("  %-14s %9s %17s %16s  %s\n", "partition", "measured", "predicted coarse", "predicted local",
              "us per item per operator");
  for (std::size_t k = 0; k < t.samples.size(); ++k) {
    const partition_window& w = t.samples[k];
    std::string costs;
    for (std::size_t i = 0; i < w.cost.size(); ++i)
      costs += (i ? " " : "") + (w.items[i] ? format_fixed(w.cost[i] / cycles_per_us, 2) : std::string("-"));
    std::printf("  %-14s %9s %17s %16s  %s%s\n", warps_text(w.warps).c_str(),
                format_fixed(w.measured_round() / cycles_per_us, 2).c_str(),
                predicted_us(t.coarse_fits, w.warps, cycles_per_us).c_str(),
                k >= t.coarse_windows ? predicted_us(t.fits, w.warps, cycles_per_us).c_str() : "",
                costs.c_str(), k == t.coarse_windows - 1 ? "\n  (local ranges)" : "");
  }
  std::cout << "\neq. (3) over the coarse models (f0 " << format_fixed(t.coarse_choice.f0 / cycles_per_us, 2)
            << " us): " << warps_text(t.coarse_choice.eq3_warps) << ", after warp moves "
            << warps_text(t.coarse_choice.warps) << " (predicted "
            << format_fixed(t.coarse_choice.predicted / cycles_per_us, 2) << " us)";
  if (!t.coarse_choice.note.empty()) std::cout << "; " << t.coarse_choice.note;
  std::cout << "\nlocal models' choice: " << warps_text(t.choice.warps) << " (predicted "
            << format_fixed(t.choice.predicted / cycles_per_us, 2) << " us)";
  if (!t.choice.note.empty()) std::cout << "; " << t.choice.note;
  std::cout << '\n';
  if (t.chosen) {
    std::cout << "measured at the choice: " << format_fixed(t.chosen->measured_round() / cycles_per_us, 2)
              << " us\n";
    if (t.fallback)
      std::cout << "a sampled partition measured shorter rounds: " << warps_text(t.fallback->warps) << " ("
                << format_fixed(t.fallback->measured_round() / cycles_per_us, 2) << " us) replaces it\n";
    if (t.initial)
      std::cout << "the starting partition " << warps_text(t.initial->warps) << " measured "
                << format_fixed(t.initial->measured_round() / cycles_per_us, 2) << " us: "
                << (t.kept_initial ? "kept (the candidate's round was not shorter by the margin)"
                                   : "the candidate's round is shorter")
                << '\n';
    std::cout << "chosen partition: " << warps_text(t.result()) << '\n';
  }
}

/// Whether `pred` holds for every operator with no inputs that feeds `sink`, through any chain of topics.
template <class Pred>
bool every_source_upstream(const topology_spec& spec, const operator_spec& sink, Pred pred) {
  std::vector<const operator_spec*> pending{&sink};
  std::set<const operator_spec*> seen{&sink};
  bool all = true, any = false;
  while (!pending.empty()) {
    const operator_spec* op = pending.back();
    pending.pop_back();
    if (op->inputs.empty()) {
      any = true;
      all = all && pred(*op);
      continue;
    }
    for (const std::string& topic : op->inputs)
      for (const operator_spec& writer : spec.operators)
        if (std::find(writer.outputs.begin(), writer.outputs.end(), topic) != writer.outputs.end() &&
            seen.insert(&writer).second)
          pending.push_back(&writer);
  }
  return any && all;
}

}  // namespace
}  // namespace xf

int main(int argc, char** argv) {
  using namespace xf;
  CLI::App app{"xeflow-tune: tune the warp partition of a topology's GPU operators on this GPU"};
  std::string topology_path, write_path, stats_format = "text";
  std::vector<std::string> overrides;
  std::uint32_t samples = 0;
  std::string stream_bytes = "64GiB";
  int verbose = 0;
  app.add_option("topology", topology_path, "topology YAML file")->required();
  app.add_option("--set", overrides, "override a field: path=value (as xeflow-run)")->type_name("PATH=VALUE");
  app.add_option("--samples", samples,
                 "work items to measure over the sampling schedule (default: the "
                 "topology's runtime.tuning.samples, else 3200)");
  app.add_option("--stream", stream_bytes,
                 "sources with a total_bytes parameter stream at least this much (and sources with passes, "
                 "table_source, replay their input), so sampling has frames (the run stops once tuned)");
  app.add_option("--write", write_path, "write the topology with the chosen partition as explicit warps");
  app.add_option("--stats", stats_format,
                 "text: the tuning report; json: xeflow-run's stats (with the tuning)")
      ->check(CLI::IsMember({"text", "json"}));
  app.add_flag("-v,--verbose", verbose, "more logging");
  CLI11_PARSE(app, argc, argv);
  configure_logging(verbose ? verbose : -1);

  operator_registry registry;
  register_builtin_operators(registry);
  topology_spec spec;
  plan p;
  try {
    spec = load_topology_file(topology_path, registry, overrides);
    const std::optional<std::uint64_t> parsed = parse_bytes(stream_bytes);
    if (!parsed) {
      std::cerr << "xeflow-tune: error: --stream " << bytes_syntax_problem(stream_bytes) << '\n';
      return exit_config_error;
    }
    const std::uint64_t stream = *parsed;
    // Tune: partition auto on the device, the tuning settings as written (or --samples), every source long
    // enough to feed the sampling.
    if (!is_tuned(spec.runtime.partition)) spec.runtime.tuning = tuning_spec{};
    spec.runtime.partition = partition_policy::auto_once;
    if (samples != 0) spec.runtime.tuning.samples = samples;
    spec.runtime.executor = executor_kind::device;
    // A source that replays a finite input (table_source's, prefetch_source's passes) replays it until
    // the tuning is done: the run stops once tuned, so the count only has to be more than sampling needs.
    constexpr std::int64_t tuning_passes = 1 << 16;
    const auto takes_passes = [&](const operator_spec& op, operator_role role) {
      const operator_entry* entry = registry.find(op.class_name);
      return entry && entry->info.role == role && entry->info.find_param("passes");
    };
    const auto raise_passes = [&](operator_spec& op) {
      auto it = op.params.find("passes");
      const auto* current = it == op.params.end() ? nullptr : std::get_if<std::int64_t>(&it->second);
      if (!current || *current < tuning_passes) op.params["passes"] = tuning_passes;
    };
    for (operator_spec& op : spec.operators) {
      op.warps = 0;
      const operator_entry* entry = registry.find(op.class_name);
      if (entry && entry->info.role == operator_role::source && entry->info.find_param("total_bytes")) {
        auto it = op.params.find("total_bytes");
        const auto* current = it == op.params.end() ? nullptr : std::get_if<std::int64_t>(&it->second);
        if (!current || static_cast<std::uint64_t>(*current) < stream)
          op.params["total_bytes"] = static_cast<std::int64_t>(stream);
      }
      if (takes_passes(op, operator_role::source)) raise_passes(op);
    }
    // A sink that mirrors its source's passes (prefetch_writeback: its frames are the source's records)
    // gets the same count when every source upstream of it replays its input so, or it would refuse a
    // stream longer than its parameters make; behind a source without passes (prefetch_ranges) it keeps
    // its own.
    for (operator_spec& op : spec.operators)
      if (takes_passes(op, operator_role::sink) &&
          every_source_upstream(
              spec, op, [&](const operator_spec& s) { return takes_passes(s, operator_role::source); }))
        raise_passes(op);
    validate_topology(spec, registry);
    limit_visible_gpus_for(spec, false);  // before the first CUDA call
    if (const device_status gpu = probe_device(); !gpu.usable) {
      std::cerr << "xeflow-tune: error: the warp partition is tuned on a GPU, and there is none usable here ("
                << gpu.reason << ")\n";
      return exit_run_failed;
    }
    p = plan_for_this_machine(spec, registry, false, compiled_kernel<builtin_gpu_operators>());
  } catch (const config_error& e) {
    std::cerr << e.what() << '\n';
    return exit_config_error;
  }
  if (p.executor != resolved_executor::device) {
    std::cerr << "xeflow-tune: error: the warp partition is tuned on a GPU, and this run would use the host "
                 "executor ("
              << p.executor_reason << ")\n";
    return exit_run_failed;
  }
  std::vector<std::string> names;
  for (std::size_t k : p.kernel_operators) names.push_back(p.operators[k].spec->name);
  if (names.empty()) {
    std::cout << topology_path << ": no GPU operators, nothing to tune\n";
    return exit_ok;
  }

  run_control control;
  run_options options;
  options.kernel = compiled_kernel<builtin_gpu_operators>();
  options.stop_after_tuning = true;
  options.discard_outputs = true;  // the tuning is wanted, not the stream: no `.partial` files left behind
  const run_stats stats = run_topology(p, spec, control, options);
  if (stats_format == "json") std::cout << format_stats_json(stats) << std::endl;
  if (stats.status == xf::run_status::failed) {
    std::cerr << "xeflow-tune: error: " << stats.error << '\n';
    if (stats.device_wedged) std::_Exit(exit_run_failed);
    return exit_run_failed;
  }
  if (!stats.partition) {
    std::cerr << "xeflow-tune: error: the run reported no partition\n";
    return exit_run_failed;
  }
  const partition_stats& ps = *stats.partition;
  const double cycles_per_us = ps.sm_clock_mhz > 0 ? ps.sm_clock_mhz : 1;
  std::vector<std::uint32_t> result = ps.warps;
  if (names.size() == 1) {
    if (stats_format == "text")
      std::cout << topology_path << ": one GPU operator (" << names[0] << "): it gets all "
                << p.warps_per_block << " warps of each block, nothing to tune\n";
  } else if (ps.tunings.empty() || !ps.tunings.back().chosen) {
    std::cerr << "xeflow-tune: error: the stream ended before the tuning finished ("
              << (ps.tunings.empty() ? 0 : ps.tunings.back().samples.size()) << " partitions measured): give "
              << "its source more data (--stream, or its total_bytes)\n";
    return exit_run_failed;
  } else {
    result = ps.tunings.back().result();
    if (stats_format == "text") {
      std::cout << topology_path << ": " << names.size() << " GPU operators, " << p.blocks << " blocks x "
                << p.warps_per_block << " warps, SM clock " << format_fixed(ps.sm_clock_mhz, 0) << " MHz\n";
      print_tuning(ps.tunings.back(), names, cycles_per_us);
    }
  }
  if (!write_path.empty()) {
    topology_spec out = spec;
    out.runtime.partition = partition_policy::explicit_warps;
    out.runtime.tuning = tuning_spec{};
    for (std::size_t k = 0; k < p.kernel_operators.size(); ++k)
      out.operators[p.kernel_operators[k]].warps = result[k];
    // The executor and the sources' lengths as the user wrote them, not the tuning's.
    const topology_spec original = load_topology_file(topology_path, registry, overrides);
    out.runtime.executor = original.runtime.executor;
    for (std::size_t i = 0; i < out.operators.size(); ++i)
      out.operators[i].params = original.operators[i].params;
    std::ofstream file(write_path);
    file << "# " << topology_path << " with the partition xeflow-tune chose on this GPU\n" << to_yaml(out);
    if (!file) {
      std::cerr << "xeflow-tune: error: cannot write " << write_path << '\n';
      return exit_run_failed;
    }
    if (stats_format == "text") std::cout << "wrote " << write_path << '\n';
  }
  return exit_ok;
}
