// xeflow-run: load, validate, plan and run a topology; print progress and stats. In a ranked run (mpirun)
// every step that can fail is agreed on by every rank (the lowest rank with a problem reports it, every
// rank exits with the same code), and rank 0 prints for all.
#include "framework/launch/launcher.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <stdexcept>
#include <typeindex>

#include "framework/core/fault_injection.hpp"
#include "framework/core/units.hpp"
#include "framework/launch/gpu_visibility.hpp"
#include "framework/launch/metrics_server.hpp"
#include "framework/launch/operator_catalog.hpp"
#include "framework/launch/process_group.hpp"
#include "framework/launch/topology_graph.hpp"
#include "framework/launch/version_line.hpp"
#include "framework/model/spec_yaml.hpp"
#include "framework/model/yaml_loader.hpp"
#include "framework/plan/device_probe.hpp"
#include "framework/plan/plan.hpp"
#include "framework/runtime/checkpoint.hpp"
#include "framework/runtime/executor.hpp"
#include "framework/runtime/frame_ledger.hpp"
#include "framework/runtime/logging.hpp"
#include "framework/runtime/provenance.hpp"
#include "framework/runtime/trace_file.hpp"
#include "operators/builtin.hpp"

namespace xf {
namespace {

run_control* g_control = nullptr;  // the run SIGINT acts on
std::atomic<int> g_interrupts{0};

extern "C" void on_sigint(int) {
  // First interrupt (SIGINT, SIGTERM or SIGHUP): drain (sources stop, in-flight frames finish); second:
  // abort at once.
  const int seen = g_interrupts.fetch_add(1);
  if (g_control) {
    if (seen == 0)
      g_control->request_drain();
    else
      g_control->request_abort();
  }
}

/// The signals that end a run the way Ctrl-C does: a terminal closing (SIGHUP), a service manager or
/// mpirun stopping it (SIGTERM) drain and print the stats like an interrupt.
constexpr int interrupt_signals[] = {SIGINT, SIGTERM, SIGHUP};

/// Descriptors 0, 1 and 2 that the process was started without are opened on /dev/null, so that no file
/// the run opens (an output file) takes their numbers and receives the stats or the log. Returns whether
/// standard output was closed: the stats cannot be written then, which is an error.
bool reserve_standard_descriptors() {
  bool stdout_closed = false;
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    if (fd == STDOUT_FILENO) stdout_closed = true;
    const int opened = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (opened >= 0 && opened != fd) {  // the lowest free number is fd, unless another thread raced us
      ::dup2(opened, fd);
      ::close(opened);
    }
  }
  return stdout_closed;
}

/// The run's timeline (--trace) into `out`, stamped with the run's provenance and what was sampled.
void write_trace(std::ofstream& out, const std::string& path, const run_stats& stats,
                 const topology_spec& spec, const process_group& group) {
  const trace::recording r = trace::collect();
  const run_provenance prov = collect_provenance(stats.gpu);
  nlohmann::json metadata{{"topology", spec.name},     {"executor", stats.executor},
                          {"version", prov.version},   {"commit", prov.commit},
                          {"host", prov.host},         {"sample_every", r.sample_every},
                          {"events", r.events.size()}, {"events_dropped", r.dropped}};
  if (prov.gpu) metadata["gpu"] = *prov.gpu;
  if (group.size() > 1) metadata["rank"] = group.rank();
  const std::string process = "xeflow-run " + (spec.name.empty() ? std::string("topology") : spec.name) +
                              (group.size() > 1 ? " (rank " + std::to_string(group.rank()) + ")" : "");
  write_chrome_trace(out, r, static_cast<int>(group.rank()) + 1, process, metadata);
  out.flush();
  if (!out)
    spdlog::error("cannot write the trace to {}", path);
  else
    spdlog::info("trace: {} events in {}{}", r.events.size(), path,
                 r.dropped ? " (" + std::to_string(r.dropped) + " more dropped: --trace-max-events)" : "");
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

/// The GPU a rank runs on, where that is known without asking CUDA: its GPU operators' `device:`
/// (validation made them agree), else GPU 0 for the first rank of its node.
std::optional<std::uint32_t> known_device_ordinal(const topology_spec& spec,
                                                  const std::optional<rank_part>& part,
                                                  std::uint32_t node_rank) {
  for (const operator_spec& o : spec.operators)
    if (o.on == placement::gpu && o.device && (!part || o.rank == part->rank)) return *o.device;
  if (node_rank == 0) return 0;
  return std::nullopt;
}

/// The GPU a rank runs on: known_device_ordinal, else its position on the node modulo the node's GPUs.
std::uint32_t device_ordinal(const topology_spec& spec, const std::optional<rank_part>& part,
                             std::uint32_t node_rank) {
  if (const auto known = known_device_ordinal(spec, part, node_rank)) return *known;
  const std::uint32_t gpus = device_count();
  return gpus == 0 ? 0 : node_rank % gpus;
}

/// Whether this process runs a kernel: GPU operators in its part, and not the host executor.
bool runs_kernel(const topology_spec& spec, const std::optional<rank_part>& part, bool force_host) {
  return !force_host && spec.runtime.executor != executor_kind::host &&
         std::any_of(spec.operators.begin(), spec.operators.end(), [&](const operator_spec& o) {
           return o.on == placement::gpu && (!part || o.rank == part->rank);
         });
}

/// Where the operators run, when the topology places them on several ranks: one line a rank.
void print_placement(const topology_spec& spec, std::ostream& out) {
  std::map<std::uint32_t, std::vector<const operator_spec*>> by_rank;
  for (const operator_spec& o : spec.operators) by_rank[o.rank].push_back(&o);
  if (by_rank.size() < 2 && spec.runtime.ranks.empty()) return;
  for (const auto& [rank, operators] : by_rank) {
    out << "  rank " << rank;
    for (const auto& [name, number] : spec.runtime.ranks)
      if (number == rank) out << " (" << name << ")";
    out << ":";
    for (const operator_spec* o : operators) {
      out << ' ' << o->name;
      if (o->device) out << " (GPU " << *o->device << ")";
    }
    out << '\n';
  }
}

/// How bad an outcome is, so that ranks agree on the worst: a failure, then an interrupt, then success.
int severity(int code) {
  return code == exit_run_failed ? 3 : code == exit_config_error ? 2 : code == exit_interrupted ? 1 : 0;
}
int code_of(int severity) {
  return severity == 3   ? exit_run_failed
         : severity == 2 ? exit_config_error
         : severity == 1 ? exit_interrupted
                         : exit_ok;
}

/// A ranked run's ledger entry in the numbering of one process running the whole topology: topics by their
/// place in the spec, groups by their subscriber's place among the topic's subscribers in declaration
/// order (make_plan's numbering), so that a ranked run's ledger compares with a single process's.
frame_ledger::entry renumbered(const frame_ledger::entry& e, const plan& p, const topology_spec& spec) {
  frame_ledger::entry out = e;
  const planned_topic& t = p.topics[e.topic];
  out.topic = static_cast<std::uint32_t>(t.spec - spec.topics.data());
  const operator_spec* subscriber = p.operators[t.subscribers.at(e.group)].spec;
  std::uint32_t group = 0;
  for (const operator_spec& o : spec.operators) {
    if (&o == subscriber) break;
    group += static_cast<std::uint32_t>(std::count(o.inputs.begin(), o.inputs.end(), t.spec->name));
  }
  out.group = group;
  return out;
}

/// Writes the ledger; a ranked run's ranks send theirs to rank 0, which writes them as one.
void write_ledger(const std::string& path, const frame_ledger& ledger, const plan& p,
                  const topology_spec& spec, process_group& group) {
  std::vector<std::string> names;
  if (group.size() == 1) {
    for (const planned_topic& t : p.topics) names.push_back(t.spec->name);
  } else {
    std::string mine;
    for (const frame_ledger::entry& e : ledger.entries()) {
      const frame_ledger::entry g = renumbered(e, p, spec);
      mine.append(reinterpret_cast<const char*>(&g), sizeof g);
    }
    const std::vector<std::string> all = group.gather(mine);
    if (group.rank() != 0) return;
    frame_ledger merged;
    for (const std::string& part : all)
      for (std::size_t at = 0; at + sizeof(frame_ledger::entry) <= part.size();
           at += sizeof(frame_ledger::entry)) {
        frame_ledger::entry e;
        std::memcpy(&e, part.data() + at, sizeof e);
        merged.add(e);
      }
    for (const topic_spec& t : spec.topics) names.push_back(t.name);
    std::ofstream out(path);
    merged.write(out, names);
    if (!out) spdlog::error("cannot write the ledger to {}", path);
    return;
  }
  std::ofstream out(path);
  ledger.write(out, names);
  if (!out) spdlog::error("cannot write the ledger to {}", path);
}

/// Agrees on a step every rank took: when some rank's `problem` is set, the lowest such rank prints it
/// (naming itself when it is not rank 0) and every rank gets true (the caller exits with
/// exit_config_error).
bool any_rank_failed(process_group& group, const std::optional<std::string>& problem) {
  const std::optional<std::uint32_t> failing = group.first_failing(!problem.has_value());
  if (!failing) return false;
  if (*failing == group.rank()) {
    if (group.rank() != 0) std::cerr << "rank " << group.rank() << ": ";
    std::cerr << *problem << '\n';
  }
  return true;
}

/// The graph of `spec` with the facts of every rank (each plans and runs its part): a step every rank takes;
/// rank 0 merges them and writes the graph to `out`.
void write_graph_of_ranks(std::ostream& out, graph_format format, const topology_spec& spec,
                          const operator_registry& registry, const graph_facts& facts, process_group& group) {
  const std::vector<std::string> all = group.gather(facts.serialize());
  if (group.rank() != 0) return;
  graph_facts merged;
  for (const std::string& text : all) merged.merge(graph_facts::parse(text));
  write_graph(out, format, spec, registry, merged);
}

}  // namespace

void limit_visible_gpus_for(const topology_spec& spec, bool force_host, const std::optional<rank_part>& part,
                            std::uint32_t node_rank) {
  if (!runs_kernel(spec, part, force_host)) return;
  const std::optional<std::uint32_t> ordinal = known_device_ordinal(spec, part, node_rank);
  if (!ordinal) return;
  if (const std::optional<std::string> set = limit_visible_gpus(*ordinal))
    spdlog::debug(
        "CUDA_VISIBLE_DEVICES={}: the kernel runs on GPU {}, and the CUDA driver sets up only the GPUs it "
        "sees (set CUDA_VISIBLE_DEVICES to choose them yourself)",
        *set, *ordinal);
}

plan plan_for_this_machine(const topology_spec& spec, const operator_registry& registry, bool force_host,
                           const kernel_program* kernel, const std::optional<rank_part>& part,
                           std::uint32_t node_rank, std::uint32_t gpu_sharers) {
  plan_options options;
  options.part = part;
  options.force_host = force_host || spec.runtime.executor == executor_kind::host;
  if (!options.force_host) {
    const std::uint32_t ordinal = device_ordinal(spec, part, node_rank);
    const device_status device = probe_device(ordinal);
    // The kernel's occupancy is asked of the current device, and the run's thread runs on it.
    if (device.usable) select_device(ordinal);
    options.device = describe_device(device, kernel);
    options.device.ordinal = ordinal;
    if (device.usable && device.mps && gpu_sharers > 1) {
      options.device.sharers = gpu_sharers;
      spdlog::info(
          "GPU {} runs the kernels of {} ranks of this node at once (MPS): this one plans its share "
          "of the resident blocks",
          ordinal, gpu_sharers);
    }
    if (!device.usable)
      spdlog::info("no usable GPU ({}): GPU operators run on the host executor", device.reason);
    else
      spdlog::info("GPU {}: {}", ordinal, device.description);
  }
  plan p = make_plan(spec, registry, options);
  if (p.executor == resolved_executor::host && !p.kernel_operators.empty() && !options.force_host) {
    std::string names;
    for (std::size_t k : p.kernel_operators)
      names += (names.empty() ? "'" : ", '") + p.operators[k].spec->name + "'";
    spdlog::info("GPU operators {} run on the host executor: {}", names, p.executor_reason);
  }
  return p;
}

int run_launcher(int argc, char** argv, const launcher_operators& operators) {
  const bool stdout_closed = reserve_standard_descriptors();
  // A write past `ulimit -f` fails with EFBIG and is reported, naming the file, instead of the default
  // SIGXFSZ ending the process without a word; a write into a pipe or FIFO whose reader left fails with
  // EPIPE likewise.
  std::signal(SIGXFSZ, SIG_IGN);
  std::signal(SIGPIPE, SIG_IGN);
  const kernel_program* kernel = operators.kernel;
  CLI::App app{"xeflow-run: run a streaming topology across CPU and GPU"};
  std::string topology_path;
  std::vector<std::string> overrides;
  bool force_host = false, validate_only = false, list_operators = false, show_plan = false;
  std::string stats_format = "text";
  int verbose = 0;
  bool quiet = false;
  app.add_option("topology", topology_path, "topology YAML file");
  // One value per --set (give it again for another): a vector option would otherwise take every argument
  // up to the next option, the topology's path included.
  app.add_option("--set", overrides, "override a field: path=value (e.g. topics.in.capacity=8); repeatable")
      ->type_name("PATH=VALUE")
      ->allow_extra_args(false);
  app.add_flag("--host", force_host, "run GPU operators on the host executor even when a GPU is present");
  app.add_flag("--validate", validate_only, "check the topology and exit");
  app.add_flag("--plan", show_plan,
               "print the plan (executor, workers, partition; each rank's under mpirun) and exit");
  app.add_flag("--list-operators", list_operators, "list the registered operator classes and exit");
  bool catalog_json = false, print_schema = false;
  app.add_flag("--json", catalog_json, "with --list-operators: as JSON");
  app.add_flag("--schema", print_schema,
               "print the JSON Schema of this launcher's topology YAML (for editors) and exit");
  app.add_option("--stats", stats_format, "final stats format")->check(CLI::IsMember({"text", "json"}));
  unsigned timeline_ms = 0;
  app.add_option("--timeline-ms", timeline_ms,
                 "record the sinks' frames and bytes every this many ms into the stats (JSON: timeline)");
  std::string ledger_path;
  app.add_option("--ledger", ledger_path,
                 "write what every CPU subscriber received to this file: a line per topic, group and offset "
                 "(bytes, source offset, void, CRC-32) — two runs of a topology compare line by line");
  std::string graph_name, graph_stats_path;
  app.add_option("--graph", graph_name,
                 "print the topology as a graph and exit (with --plan: as planned); with --graph-stats, that "
                 "file's format")
      ->check(CLI::IsMember({"dot", "mermaid"}));
  app.add_option(
         "--graph-stats", graph_stats_path,
         "after the run, write the graph (--graph's format, default dot) to this file, with each topic's "
         "GB/s and each operator's busy/wait/blocked shares of the wall time")
      ->type_name("FILE");
  std::string trace_path;
  std::uint32_t trace_sample = 8;
  std::uint64_t trace_max_events = 1'000'000;
  app.add_option("--trace", trace_path,
                 "write the run's timeline to FILE in the Chrome trace format (Perfetto, chrome://tracing): "
                 "CPU operators' frames, the kernel's rounds per block, copies, file reads, tuning "
                 "(under mpirun: FILE.rank<r>)")
      ->type_name("FILE");
  app.add_option("--trace-sample", trace_sample,
                 "--trace: one CPU frame, one GPU block, one copy step and one read in N (default 8)")
      ->check(CLI::Range(1u, 1u << 20));
  app.add_option("--trace-max-events", trace_max_events,
                 "--trace: events kept at most (default 1000000); the rest are counted in the file")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 32));
  std::string metrics_at;
  app.add_option(
         "--metrics", metrics_at,
         "serve live metrics while the run goes: Prometheus /metrics, /healthz, /readyz on 127.0.0.1:PORT "
         "(0: any free port), or on ADDRESS:PORT given explicitly; under mpirun rank r on PORT + r")
      ->type_name("[ADDRESS:]PORT");
  std::string checkpoint_path, resume_path;
  unsigned checkpoint_ms = 1000;
  app.add_option("--checkpoint", checkpoint_path,
                 "commit the offsets every sink has durably finished to FILE every --checkpoint-ms "
                 "(atomically: FILE.tmp, fsync, rename), so that --resume FILE restarts from there")
      ->type_name("FILE");
  app.add_option("--resume", resume_path,
                 "resume the run a checkpoint FILE describes (the same topology and --set overrides): "
                 "sources restart from the smallest committed offset downstream; checkpoints go on into "
                 "FILE (or --checkpoint's)")
      ->type_name("FILE");
  app.add_option("--checkpoint-ms", checkpoint_ms, "with --checkpoint or --resume: ms between commits (1000)")
      ->check(CLI::Range(1u, 3'600'000u));
  app.add_flag("-v,--verbose", verbose, "more logging (-vv: trace); -v and -q win over XEFLOW_LOG_LEVEL");
  app.add_flag("-q,--quiet", quiet, "warnings and errors only, no progress line");
  std::string log_file;
  app.add_option("--log-file", log_file,
                 "write the log to FILE as well as to stderr, with timestamps (under mpirun: FILE.rank<r>)")
      ->type_name("FILE");
  app.set_version_flag("--version", version_line,
                       "print the version, commit, build type, CUDA and MPI; exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? exit_ok : exit_config_error;
  }
  if (!graph_stats_path.empty() && (validate_only || show_plan)) {
    std::cerr
        << "xeflow-run: error: --graph-stats draws a run: not with --validate or --plan (use --graph)\n";
    return exit_config_error;
  }
  const graph_format graph = parse_graph_format(graph_name).value_or(graph_format::dot);

  std::unique_ptr<process_group> group;
  try {
    group = join_process_group(argc, argv);
  } catch (const config_error& e) {
    std::cerr << "xeflow-run: error: " << e.first().message << '\n';
    return exit_config_error;
  } catch (const std::exception& e) {
    std::cerr << "xeflow-run: error: cannot join the MPI job: " << e.what() << '\n';
    return exit_config_error;
  }
  const bool ranked = group->size() > 1;
  const bool lead = group->rank() == 0;  // prints what concerns every rank
  log_options logging;
  if (quiet || verbose > 0) logging.command_line = level_of_verbosity(quiet ? -1 : verbose);
  logging.who = ranked ? "rank " + std::to_string(group->rank()) : "";
  if (!log_file.empty())
    logging.file = ranked ? log_file + ".rank" + std::to_string(group->rank()) : log_file;
  std::optional<std::string> problem;
  try {
    configure_logging(logging);
  } catch (const config_error& e) {
    problem = "xeflow-run: error: " + e.first().message;
  }
  if (any_rank_failed(*group, problem)) return exit_config_error;
  try {
    if (const std::string armed = inject::arm_from_environment(); !armed.empty())
      spdlog::warn("fault injection armed: XEFLOW_INJECT={}", armed);
  } catch (const std::invalid_argument& e) {
    problem = std::string("xeflow-run: error: ") + e.what();
  }
  if (any_rank_failed(*group, problem)) return exit_config_error;

  operator_registry registry;
  register_builtin_cpu_operators(registry);
  if (operators.add) operators.add(registry);
  for (const operator_entry* e : registry.entries())
    if (e->gpu_type && std::find(operators.kernel_types.begin(), operators.kernel_types.end(),
                                 *e->gpu_type) == operators.kernel_types.end()) {
      if (lead)
        std::cerr << "xeflow-run: error: GPU operator class '" << e->info.class_name
                  << "' is registered but not in the launcher's gpu_operator_list, which builds its kernel\n";
      return exit_config_error;
    }
  if (catalog_json && !list_operators) {
    if (lead)
      std::cerr << "xeflow-run: error: --json goes with --list-operators (--stats json for the stats)\n";
    return exit_config_error;
  }
  if (list_operators || print_schema) {
    if (lead) {
      if (print_schema)
        std::cout << topology_json_schema(registry).dump(1) << '\n';
      else if (catalog_json)
        std::cout << operator_catalog_json(registry).dump(1) << '\n';
      else
        print_operator_catalog(registry, std::cout);
    }
    return exit_ok;
  }
  if (topology_path.empty()) {
    if (lead) std::cerr << "xeflow-run: error: no topology given (try --help)\n";
    return exit_config_error;
  }
  std::optional<metrics_address> metrics_at_rank;
  if (!metrics_at.empty()) {
    std::string why;
    metrics_at_rank = parse_metrics_address(metrics_at, why);
    if (metrics_at_rank && !metrics_available())
      why =
          "--metrics: this xeflow-run was built without live metrics (meson option metrics: install "
          "prometheus-cpp-dev and libcivetweb-dev, configure again)";
    // Under mpirun every rank serves its own: rank r on PORT + r (port 0: each a free one of its own).
    if (metrics_at_rank && metrics_at_rank->port != 0) metrics_at_rank->port += group->rank();
    if (metrics_at_rank && metrics_at_rank->port > 65535)
      why = "--metrics " + metrics_at + ": rank " + std::to_string(group->rank()) + "'s port is above 65535";
    if (!why.empty()) {
      if (lead) std::cerr << "xeflow-run: error: " << why << '\n';
      return exit_config_error;
    }
  }

  const auto load_start = std::chrono::steady_clock::now();
  topology_spec spec;
  try {
    spec = load_topology_file(topology_path, registry, overrides);
  } catch (const config_error& e) {
    problem = e.what();
  }
  if (any_rank_failed(*group, problem)) return exit_config_error;
  const std::optional<rank_part> part =
      ranked ? std::optional<rank_part>{rank_part{group->rank(), group->size()}} : std::nullopt;
  // Before the first CUDA call, which version_line makes.
  limit_visible_gpus_for(spec, force_host, part, group->node_rank());
  spdlog::debug("{}", version_line());
  if (ranked) {
    // Every rank must run the same topology: the same file and overrides everywhere.
    const std::vector<std::string> forms = group->gather(to_yaml(spec));
    std::optional<std::string> differs;
    for (std::size_t r = 1; r < forms.size(); ++r)
      if (forms[r] != forms[0]) {
        differs = "xeflow-run: error: rank " + std::to_string(r) +
                  " loaded a different topology than rank 0 (" + topology_path +
                  " and the --set overrides must be the same on every rank)";
        break;
      }
    if (any_rank_failed(*group, differs)) return exit_config_error;
  }
  // --trace's file too: opened before the run (each rank its own under mpirun).
  std::ofstream trace_file;
  if (!trace_path.empty() && !validate_only && !show_plan) {
    if (ranked) trace_path += ".rank" + std::to_string(group->rank());
    trace_file.open(trace_path);
    if (!trace_file)
      problem = "xeflow-run: error: cannot write the trace to " + trace_path + ": " + std::strerror(errno);
    if (any_rank_failed(*group, problem)) return exit_config_error;
  }
  // --graph-stats' file is opened before the run, so that a path it cannot write fails now, not after it.
  std::ofstream graph_file;
  if (!graph_stats_path.empty()) {
    if (lead) {
      graph_file.open(graph_stats_path);
      if (!graph_file)
        problem =
            "xeflow-run: error: cannot write the graph to " + graph_stats_path + ": " + std::strerror(errno);
    }
    if (any_rank_failed(*group, problem)) return exit_config_error;
  } else if (!graph_name.empty() && !show_plan) {
    if (lead) write_graph(std::cout, graph, spec, registry);
    return exit_ok;
  }
  const auto loaded = std::chrono::steady_clock::now();
  if (validate_only) {
    if (lead) {
      std::cout << topology_path << ": ok (" << spec.topics.size() << " topics, " << spec.operators.size()
                << " operators";
      if (ranked) std::cout << ", " << group->size() << " ranks";
      std::cout << ")\n";
      print_placement(spec, std::cout);
    }
    return exit_ok;
  }
  // The ranks of this node whose kernels share this rank's GPU.
  std::uint32_t gpu_sharers = 1;
  if (ranked) {
    constexpr std::uint32_t no_gpu = ~std::uint32_t{0};
    const std::uint32_t mine =
        runs_kernel(spec, part, force_host) ? device_ordinal(spec, part, group->node_rank()) : no_gpu;
    const std::vector<std::uint32_t> node = group->node_values(mine);
    if (mine != no_gpu) gpu_sharers = static_cast<std::uint32_t>(std::count(node.begin(), node.end(), mine));
  }
  plan p;
  try {
    p = plan_for_this_machine(spec, registry, force_host, kernel, part, group->node_rank(), gpu_sharers);
  } catch (const config_error& e) {
    problem = e.what();
  }
  if (any_rank_failed(*group, problem)) return exit_config_error;
  if (ranked && lead) {
    std::uint32_t highest = 0;
    for (const operator_spec& o : spec.operators) highest = std::max(highest, o.rank);
    if (highest + 1 < group->size())
      spdlog::info("operators are placed on ranks 0 to {}: ranks {} to {} run none", highest, highest + 1,
                   group->size() - 1);
  } else if (!ranked) {
    std::uint32_t highest = 0;
    for (const operator_spec& o : spec.operators) highest = std::max(highest, o.rank);
    if (highest > 0)
      spdlog::info(
          "operators are placed on ranks 0 to {}: this one process runs them all (mpirun -n {} "
          "places them)",
          highest, highest + 1);
  }
  if (show_plan && !graph_name.empty()) {
    graph_facts facts;
    facts.add_plan(p);
    write_graph_of_ranks(std::cout, graph, spec, registry, facts, *group);
    return exit_ok;
  }
  if (show_plan) {
    const std::vector<std::string> plans = group->gather(p.describe());
    for (const std::string& text : plans) std::cout << text << '\n';
    return exit_ok;
  }
  spdlog::info("{}", p.describe());
  // Checkpoints: refused for what a restart would get wrong, checked against the topology resumed.
  checkpoint_options checkpointing;
  std::vector<std::uint64_t> first_offsets;
  const bool checkpointed = !checkpoint_path.empty() || !resume_path.empty();
  if (!checkpointed && app.count("--checkpoint-ms") > 0) {
    if (lead) std::cerr << "xeflow-run: error: --checkpoint-ms goes with --checkpoint or --resume\n";
    return exit_config_error;
  }
  if (checkpointed) {
    if (const std::optional<std::string> why = checkpoint_refusal(p)) {
      if (lead) std::cerr << "xeflow-run: error: " << *why << '\n';
      return exit_config_error;
    }
    checkpointing.path = checkpoint_path.empty() ? resume_path : checkpoint_path;
    // Its directory must take the checkpoint's temporary file and rename: said now rather than as the
    // run's first commit fails.
    const std::string::size_type slash = checkpointing.path.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "."
                            : slash == 0               ? "/"
                                                       : checkpointing.path.substr(0, slash);
    if (::access(dir.c_str(), W_OK | X_OK) != 0) {
      if (lead)
        std::cerr << "xeflow-run: error: cannot write the checkpoint '" << checkpointing.path << "' in '"
                  << dir << "': " << std::strerror(errno) << '\n';
      return exit_config_error;
    }
    checkpointing.interval = std::chrono::milliseconds(checkpoint_ms);
    checkpointing.topology_hash = topology_hash(to_yaml(spec));
    checkpointing.topology_name = spec.name;
  }
  if (!resume_path.empty()) {
    try {
      const checkpoint_state state = read_checkpoint(resume_path);
      if (state.topology_hash != checkpointing.topology_hash)
        throw std::runtime_error("the checkpoint '" + resume_path + "' is of another topology ('" +
                                 state.topology_name + "', hash " + state.topology_hash + "; this is '" +
                                 spec.name + "', hash " + checkpointing.topology_hash +
                                 "): resume with the topology file and --set overrides it was made with");
      if (state.complete) {
        spdlog::info("--resume: the checkpoint '{}' says the run completed: nothing to resume", resume_path);
        return exit_ok;
      }
      first_offsets = resume_offsets(p, state);
      for (std::size_t i : sink_operators(p))
        for (const checkpoint_state::sink_entry& e : state.sinks)
          if (e.name == p.operators[i].spec->name) checkpointing.committed_before.push_back(e.committed);
      for (const planned_operator& po : p.operators)
        if (po.entry->info.role == operator_role::source)
          spdlog::info("--resume: source '{}' restarts its stream '{}' at offset {}", po.spec->name,
                       p.topics[po.outputs[0]].spec->name, first_offsets[po.outputs[0]]);
    } catch (const std::runtime_error& e) {
      if (lead) std::cerr << "xeflow-run: error: --resume: " << e.what() << '\n';
      return exit_config_error;
    }
  }
  // Live metrics: serving before the run sets up (/readyz says so), until this function returns.
  std::unique_ptr<metrics_server> metrics;
  if (metrics_at_rank) {
    try {
      metrics = std::make_unique<metrics_server>(*metrics_at_rank, spec.name);
    } catch (const std::exception& e) {
      problem = std::string("xeflow-run: error: ") + e.what();
    }
    if (any_rank_failed(*group, problem)) return exit_config_error;
    spdlog::info("live metrics at {} (/healthz and /readyz beside it)", metrics->url());
    std::cerr << (ranked ? "rank " + std::to_string(group->rank()) + ": " : "")
              << "metrics: " << metrics->url() << std::endl;
  }

  run_control control;
  g_control = &control;
  struct sigaction action {};
  action.sa_handler = on_sigint;
  sigemptyset(&action.sa_mask);
  // mpirun passes an interrupt on to the ranks as SIGTERM (and SIGKILL a while later: Open MPI's
  // odls_base_sigkill_timeout, 1 s by default).
  struct sigaction previous[std::size(interrupt_signals)]{};
  for (std::size_t i = 0; i < std::size(interrupt_signals); ++i)
    sigaction(interrupt_signals[i], &action, &previous[i]);

  progress_line progress;
  run_options run_options;
  run_options.kernel = kernel;
  run_options.timeline_interval = std::chrono::milliseconds(timeline_ms);
  frame_ledger ledger;
  if (!ledger_path.empty()) run_options.ledger = &ledger;
  // A ranked run's progress line is rank 0's, with every rank's sinks (the sessions send theirs).
  std::unique_ptr<rank_session> session;
  if (!quiet && lead && isatty(STDERR_FILENO))
    run_options.on_progress = [&](const run_progress& r) {
      progress.show(session ? session->merged_progress(r) : r);
    };
  else if (!quiet && ranked)
    run_options.on_progress = [&](const run_progress& r) { session->report_progress(r); };
  const std::chrono::duration<double> load_seconds = loaded - load_start,
                                      plan_seconds = std::chrono::steady_clock::now() - loaded;
  // The whole topology as one host process: what the verify sinks here replay of the chains upstream of
  // them, wherever those run.
  std::optional<plan> whole;
  if (ranked) {
    plan_options one_process;
    one_process.force_host = true;
    whole = make_plan(spec, registry, one_process);
    run_options.replay = &*whole;
  }
  if (metrics) run_options.on_sample = [&](const run_sample& s) { metrics->update(s); };
  if (ranked) session = group->start_session(spec, p, control);
  run_options.carrier = session.get();
  if (checkpointed) run_options.checkpoint = &checkpointing;
  run_options.first_offsets = first_offsets;
  run_options.resumed = !resume_path.empty();
  if (trace_file.is_open()) trace::start(trace_max_events, trace_sample);
  const auto run_start = std::chrono::steady_clock::now();
  run_stats stats = run_topology(p, spec, control, run_options);
  if (trace_file.is_open()) {
    trace::stop();
    write_trace(trace_file, trace_path, stats, spec, *group);
  }
  // Planning asks the GPU what it can run: its first CUDA call sets up the driver and the context. What
  // run_topology took beyond its phases is the teardown (the topics' pinned frames freed, the kernel's
  // buffers released).
  const std::chrono::duration<double> run_seconds = std::chrono::steady_clock::now() - run_start;
  double phase_seconds = 0;
  for (const auto& ph : stats.phases) phase_seconds += ph.seconds;
  stats.phases.insert(stats.phases.begin(),
                      {{"load", load_seconds.count()}, {"GPU and plan", plan_seconds.count()}});
  stats.phases.push_back({"teardown", std::max(0.0, run_seconds.count() - phase_seconds)});
  if (metrics) metrics->finish(stats);
  progress.clear();
  if (stats.status == xf::run_status::failed && stats.device_wedged) {
    // The GPU kernel hung or faulted: tearing the CUDA context down would wait on it. End here (every
    // rank, in a ranked run: the others cannot finish theirs without this one).
    spdlog::error("{}", stats.error);
    spdlog::default_logger()->flush();
    group->end_job(exit_run_failed, "xeflow-run: the GPU kernel is wedged; ending");
  }
  const bool told = session && session->failure_was_told();
  if (session) session->finish();
  session.reset();
  for (std::size_t i = 0; i < std::size(interrupt_signals); ++i)
    sigaction(interrupt_signals[i], &previous[i], nullptr);
  g_control = nullptr;

  if (!ledger_path.empty()) write_ledger(ledger_path, ledger, p, spec, *group);
  if (!graph_stats_path.empty()) {
    graph_facts facts;
    facts.add_plan(p);
    facts.add_stats(stats);
    write_graph_of_ranks(graph_file, graph, spec, registry, facts, *group);
    if (lead && !graph_file.flush()) spdlog::error("cannot write the graph to {}", graph_stats_path);
  }
  const std::string shown = stats_format == "json" ? format_stats_json(stats) : format_stats_table(stats);
  const std::vector<std::string> all_stats = group->gather(shown);
  std::string stats_unwritten;  // why the stats could not be written: a failure of the command
  if (lead) {
    errno = 0;
    if (!ranked)
      std::cout << shown;
    else if (stats_format == "json") {
      std::cout << format_ranked_stats_json(all_stats);
    } else {
      for (std::size_t r = 0; r < all_stats.size(); ++r) std::cout << (r ? "\n" : "") << all_stats[r];
    }
    std::cout << (stats_format == "json" ? "\n" : "") << std::flush;
    if (stdout_closed)
      stats_unwritten = "standard output is closed";
    else if (!std::cout)
      stats_unwritten = errno != 0 ? std::strerror(errno) : "the stream failed";
  }
  // The errors: every rank's own failure (a failure it was told of names its origin already).
  const std::string own_error = stats.status == xf::run_status::failed && !told ? stats.error : "";
  const std::vector<std::string> errors = group->gather(own_error);
  for (std::size_t r = 0; r < errors.size(); ++r)
    if (!errors[r].empty()) {
      if (ranked)
        spdlog::error("rank {}: {}", r, errors[r]);
      else
        spdlog::error("{}", errors[r]);
    }
  const int code = stats.status == xf::run_status::failed        ? exit_run_failed
                   : stats.status == xf::run_status::interrupted ? exit_interrupted
                                                                 : exit_ok;
  const int agreed = code_of(group->max_over_ranks(severity(code)));
  if (agreed == exit_interrupted && lead)
    spdlog::warn("interrupted: streams drained, stats above are partial");
  if (!stats_unwritten.empty()) {
    // The stats are the run's result for a script reading them: not having them is a failure.
    spdlog::error("cannot write the stats to standard output: {}", stats_unwritten);
    return exit_run_failed;
  }
  return agreed;
}

}  // namespace xf
