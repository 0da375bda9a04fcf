// xeflow-run: load, validate, plan and run a topology; print progress and stats.
#include "framework/runtime/launcher.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <typeindex>

#include "framework/core/units.hpp"
#include "framework/model/yaml_loader.hpp"
#include "framework/plan/device_probe.hpp"
#include "framework/plan/plan.hpp"
#include "framework/runtime/executor.hpp"
#include "framework/runtime/frame_ledger.hpp"
#include "framework/runtime/logging.hpp"
#include "operators/builtin.hpp"

namespace xf {
namespace {

run_control* g_control = nullptr;  // the run SIGINT acts on
std::atomic<int> g_interrupts{0};

extern "C" void on_sigint(int) {
  // First interrupt: drain (sources stop, in-flight frames finish); second: abort at once.
  const int seen = g_interrupts.fetch_add(1);
  if (g_control) {
    if (seen == 0)
      g_control->request_drain();
    else
      g_control->request_abort();
  }
}

void print_operators(const operator_registry& registry) {
  for (const operator_entry* e : registry.entries()) {
    const operator_info& info = e->info;
    std::cout << info.class_name << "  (" << name_of(info.role) << ", " << (info.gpu ? "gpu or cpu" : "cpu")
              << ")\n    " << info.description << '\n';
    if (!(info.elements == element_set::all()))
      std::cout << "    element types: " << names_of(info.elements) << '\n';
    for (const param_decl& p : info.params) {
      std::cout << "    " << p.name << ": " << name_of(p.kind);
      if (p.default_value)
        std::cout << " = " << to_string(*p.default_value);
      else
        std::cout << " (required)";
      std::cout << "  — " << p.description << '\n';
    }
    for (const object_slot_decl& o : info.objects) {
      std::cout << "    shared " << o.name << ": " << name_of(o.access) << (o.optional ? ", optional" : "");
      if (!(o.elements == element_set::all())) std::cout << ", " << names_of(o.elements);
      std::cout << "  — " << o.description << '\n';
    }
  }
}

class progress_line {
 public:
  void show(const run_progress& p) {
    const double gbytes = static_cast<double>(p.sink_bytes) / 1e9;
    const double rate = p.elapsed_seconds > 0 ? gbytes / p.elapsed_seconds : 0;
    std::fprintf(stderr, "\r  %8.1f s  %12llu frames  %9.3f GB  %8.3f GB/s ", p.elapsed_seconds,
                 static_cast<unsigned long long>(p.sink_frames), gbytes, rate);
    std::fflush(stderr);
    shown_ = true;
  }
  void clear() {
    if (shown_) std::fprintf(stderr, "\r%70s\r", "");
  }

 private:
  bool shown_ = false;
};

/// What the GPU and the launcher's kernel allow, for the planner.
device_capabilities describe_device(const device_status& device, const kernel_program* kernel) {
  device_capabilities caps;
  caps.usable = device.usable;
  caps.reason = device.usable ? device.description : device.reason;
  caps.sm_count = device.sm_count;
  if (kernel) {
    caps.blocks_per_sm = [kernel](int threads) { return kernel->blocks_per_sm(threads); };
    caps.compiled_in = [kernel](std::type_index t) { return kernel->index_of(t).has_value(); };
  }
  return caps;
}

}  // namespace

plan plan_for_this_machine(const topology_spec& spec, const operator_registry& registry, bool force_host,
                           const kernel_program* kernel) {
  plan_options options;
  options.force_host = force_host || spec.runtime.executor == executor_kind::host;
  if (!options.force_host) {
    const device_status device = probe_device();
    options.device = describe_device(device, kernel);
    if (!device.usable)
      spdlog::info("no usable GPU ({}): GPU operators run on the host executor", device.reason);
    else
      spdlog::info("GPU: {}", device.description);
  }
  plan p = make_plan(spec, registry, options);
  if (p.executor == resolved_executor::host && !p.kernel_operators.empty() && !options.force_host)
    spdlog::info("GPU operators run on the host executor: {}", p.executor_reason);
  return p;
}

int run_launcher(int argc, char** argv, const launcher_operators& operators) {
  const kernel_program* kernel = operators.kernel;
  CLI::App app{"xeflow-run: run a streaming topology across CPU and GPU"};
  std::string topology_path;
  std::vector<std::string> overrides;
  bool force_host = false, validate_only = false, list_operators = false, show_plan = false;
  std::string stats_format = "text";
  int verbose = 0;
  bool quiet = false;
  app.add_option("topology", topology_path, "topology YAML file");
  app.add_option("--set", overrides, "override a field: path=value (e.g. topics.in.capacity=8)")
      ->type_name("PATH=VALUE");
  app.add_flag("--host", force_host, "run GPU operators on the host executor even when a GPU is present");
  app.add_flag("--validate", validate_only, "check the topology and exit");
  app.add_flag("--plan", show_plan, "print the plan (executor, workers, partition) and exit");
  app.add_flag("--list-operators", list_operators, "list the registered operator classes and exit");
  app.add_option("--stats", stats_format, "final stats format")->check(CLI::IsMember({"text", "json"}));
  unsigned timeline_ms = 0;
  app.add_option("--timeline-ms", timeline_ms,
                 "record the sinks' frames and bytes every this many ms into the stats (JSON: timeline)");
  std::string ledger_path;
  app.add_option("--ledger", ledger_path,
                 "write what every CPU subscriber received to this file: a line per topic, group and offset "
                 "(bytes, source offset, void, CRC-32) — two runs of a topology compare line by line");
  app.add_flag("-v,--verbose", verbose, "more logging (-vv: trace)");
  app.add_flag("-q,--quiet", quiet, "warnings and errors only, no progress line");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? exit_ok : exit_config_error;
  }
  configure_logging(quiet ? -1 : verbose);

  operator_registry registry;
  register_builtin_cpu_operators(registry);
  if (operators.add) operators.add(registry);
  for (const operator_entry* e : registry.entries())
    if (e->gpu_type && std::find(operators.kernel_types.begin(), operators.kernel_types.end(),
                                 *e->gpu_type) == operators.kernel_types.end()) {
      std::cerr << "xeflow-run: error: GPU operator class '" << e->info.class_name
                << "' is registered but not in the launcher's gpu_operator_list, which builds its kernel\n";
      return exit_config_error;
    }
  if (list_operators) {
    print_operators(registry);
    return exit_ok;
  }
  if (topology_path.empty()) {
    std::cerr << "xeflow-run: error: no topology given (try --help)\n";
    return exit_config_error;
  }

  const auto load_start = std::chrono::steady_clock::now();
  auto loaded = load_start;
  topology_spec spec;
  plan p;
  try {
    spec = load_topology_file(topology_path, registry, overrides);
    loaded = std::chrono::steady_clock::now();
    if (validate_only) {
      std::cout << topology_path << ": ok (" << spec.topics.size() << " topics, " << spec.operators.size()
                << " operators)\n";
      return exit_ok;
    }
    p = plan_for_this_machine(spec, registry, force_host, kernel);
  } catch (const config_error& e) {
    std::cerr << e.what() << '\n';
    return exit_config_error;
  }
  if (show_plan) {
    std::cout << p.describe() << '\n';
    return exit_ok;
  }
  spdlog::info("{}", p.describe());

  run_control control;
  g_control = &control;
  struct sigaction action {};
  action.sa_handler = on_sigint;
  sigemptyset(&action.sa_mask);
  struct sigaction previous {};
  sigaction(SIGINT, &action, &previous);

  progress_line progress;
  run_options run_options;
  run_options.kernel = kernel;
  run_options.timeline_interval = std::chrono::milliseconds(timeline_ms);
  frame_ledger ledger;
  if (!ledger_path.empty()) run_options.ledger = &ledger;
  if (!quiet && isatty(STDERR_FILENO))
    run_options.on_progress = [&](const run_progress& r) { progress.show(r); };
  const std::chrono::duration<double> load_seconds = loaded - load_start,
                                      plan_seconds = std::chrono::steady_clock::now() - loaded;
  const auto run_start = std::chrono::steady_clock::now();
  run_stats stats = run_topology(p, spec, control, run_options);
  // Planning asks the GPU what it can run: its first CUDA call sets up the driver and the context. What
  // run_topology took beyond its phases is the teardown (the topics' pinned frames freed, the kernel's
  // buffers released).
  const std::chrono::duration<double> run_seconds = std::chrono::steady_clock::now() - run_start;
  double phase_seconds = 0;
  for (const auto& ph : stats.phases) phase_seconds += ph.seconds;
  stats.phases.insert(stats.phases.begin(),
                      {{"load", load_seconds.count()}, {"GPU and plan", plan_seconds.count()}});
  stats.phases.push_back({"teardown", std::max(0.0, run_seconds.count() - phase_seconds)});
  progress.clear();
  sigaction(SIGINT, &previous, nullptr);
  g_control = nullptr;

  if (!ledger_path.empty()) {
    std::vector<std::string> names;
    for (const planned_topic& t : p.topics) names.push_back(t.spec->name);
    std::ofstream out(ledger_path);
    ledger.write(out, names);
    if (!out) spdlog::error("cannot write the ledger to {}", ledger_path);
  }
  if (stats_format == "json")
    std::cout << format_stats_json(stats) << std::endl;
  else
    std::cout << format_stats_table(stats) << std::flush;
  if (stats.status == xf::run_status::failed) {
    spdlog::error("{}", stats.error);
    if (stats.device_wedged) {
      // The GPU kernel hung or faulted: tearing the CUDA context down would wait on it. End here.
      spdlog::default_logger()->flush();
      std::fflush(nullptr);
      std::_Exit(exit_run_failed);
    }
    return exit_run_failed;
  }
  if (stats.status == xf::run_status::interrupted) {
    spdlog::warn("interrupted: streams drained, stats above are partial");
    return exit_interrupted;
  }
  return exit_ok;
}

}  // namespace xf
