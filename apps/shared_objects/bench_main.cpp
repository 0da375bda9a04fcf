// xeflow-shared-bench: the ADSM/GMAC paper's evaluation (its Figs. 7–12) for xeflow's shared objects on one
// GPU. Six workloads (vector addition, a 3D stencil, and Parboil's cp, mri-q, mri-fhd and tpacf, each
// written anew from its description) run with the same kernels seven ways: explicit copies (the paper's
// CUDA baseline; host copies pageable, and pinned), the shared objects under batch, lazy and rolling
// update, and managed memory without and with hints. Experiments:
//   table            every workload at its size, every variant: slowdown against explicit (Fig. 7), bytes
//                    moved (Fig. 8), where the time goes (Fig. 10)
//   stencil-volumes  the stencil at several volumes: lazy against rolling at several blocks (Fig. 9)
//   block-sizes      vector addition under rolling update at several blocks (Fig. 11)
//   rolling-sizes    tpacf under rolling update at several blocks and rolling sizes (Fig. 12)
// A self-check first runs every variant of every workload at a small size against the whole CPU reference.
// Output: a table on stdout, --json PATH (bench/shared_bench.py reads it). Exit codes: 0 every run correct,
// 1 a run failed or was wrong, 2 no usable GPU, 3 bad command line or sizes that do not fit.
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "apps/shared_objects/cp/cp.hpp"
#include "apps/shared_objects/mri_fhd/mri_fhd.hpp"
#include "apps/shared_objects/mri_q/mri_q.hpp"
#include "apps/shared_objects/report.hpp"
#include "apps/shared_objects/runner.hpp"
#include "apps/shared_objects/stencil/stencil.hpp"
#include "apps/shared_objects/tpacf/tpacf.hpp"
#include "apps/shared_objects/vecadd/vecadd.hpp"
#include "bench/common/run_stamp.hpp"
#include "framework/core/cuda_check.hpp"
#include "framework/core/units.hpp"

namespace xf::shared_bench {
namespace {
using xf::bench::command_line;
using xf::bench::git_commit;
using xf::bench::utc_now;

enum exit_code : int { exit_ok = 0, exit_failed = 1, exit_no_gpu = 2, exit_usage = 3 };

const std::vector<std::string> workload_names = {"vecadd", "stencil", "cp", "mri-q", "mri-fhd", "tpacf"};
const std::vector<std::string> experiment_names = {"table", "stencil-volumes", "block-sizes",
                                                   "rolling-sizes"};

struct options {
  std::string vecadd_elements = "32Mi";
  std::size_t stencil_edge = 256, stencil_iterations = 32;
  std::size_t cp_grid = 1024, cp_atoms = 40000, cp_chunk = 4000;
  std::string mri_voxels = "2Mi";
  std::size_t mri_samples = 4096, mri_chunk = 1024;
  std::size_t tpacf_points = 32768, tpacf_sets = 8, tpacf_bins = 20;
  std::string block_size = "256KiB";
  std::vector<std::size_t> stencil_edges = {64, 128, 192, 256, 384};
  std::vector<std::string> block_sizes = {"64KiB", "256KiB", "1MiB", "4MiB", "32MiB"};
  std::vector<std::uint32_t> rolling_sizes = {1, 2, 4};
  std::vector<std::string> sweep_elements = {"8Mi", "32Mi"};
  std::vector<std::string> experiments = experiment_names;
  std::vector<std::string> workloads = workload_names;
  std::vector<std::string> variants;
  unsigned reps = 5, warmup = 1, sweep_reps = 3;
  std::size_t sweep_tpacf_points = 8192, sweep_tpacf_sets = 4;
  double time_budget_s = 165;
  double slow_run_s = 2;
  bool no_self_check = false, quick = false;
  std::string json_path, commit;
  int device = 0;
};

/// The sizes the options name, parsed.
struct sizes {
  std::size_t vecadd_elements, mri_voxels, block_bytes;
  std::vector<std::size_t> block_sizes, sweep_elements;
};

std::uint64_t parse_count(const char* option, const std::string& text) {
  if (const auto v = parse_bytes(text)) return *v;
  throw std::invalid_argument(std::string(option) + " '" + text + "': " + bytes_syntax_problem(text));
}

template <class Problem>
group describe(const Problem& p, std::function<std::unique_ptr<workload>()> make) {
  group g;
  g.workload = std::string(Problem::name);
  g.size = p.size();
  g.device_bytes = p.device_bytes();
  g.device_arrays = p.device_arrays();
  g.source_bytes = p.source_bytes();
  g.make = std::move(make);
  return g;
}

group vecadd_group(std::size_t n) {
  vecadd_problem p;
  p.n = n;
  return describe(p, [=] { return make_vecadd(n); });
}
group stencil_group(std::size_t edge, std::size_t iterations) {
  stencil_problem p;
  p.edge = edge;
  p.iterations = iterations;
  return describe(p, [=] { return make_stencil(edge, iterations); });
}
group cp_group(std::size_t grid_x, std::size_t grid_y, std::size_t atoms, std::size_t chunk) {
  cp_problem p;
  p.grid_x = grid_x;
  p.grid_y = grid_y;
  p.atoms = atoms;
  p.chunk = chunk;
  return describe(p, [=] { return make_cp(grid_x, grid_y, atoms, chunk); });
}
group mri_q_group(std::size_t voxels, std::size_t samples, std::size_t chunk) {
  mri_q_problem p;
  p.voxels = voxels;
  p.samples = samples;
  p.chunk = chunk;
  return describe(p, [=] { return make_mri_q(voxels, samples, chunk); });
}
group mri_fhd_group(std::size_t voxels, std::size_t samples, std::size_t chunk) {
  mri_fhd_problem p;
  p.voxels = voxels;
  p.samples = samples;
  p.chunk = chunk;
  return describe(p, [=] { return make_mri_fhd(voxels, samples, chunk); });
}
group tpacf_group(std::size_t points, std::size_t random_sets, std::size_t bins) {
  tpacf_problem p;
  p.points = points;
  p.random_sets = random_sets;
  p.bins = bins;
  return describe(p, [=] { return make_tpacf(points, random_sets, bins); });
}

/// A workload at its measured size (the table's, and the sweeps' where they use it).
group measured_group(const std::string& name, const options& o, const sizes& s) {
  if (name == "vecadd") return vecadd_group(s.vecadd_elements);
  if (name == "stencil") return stencil_group(o.stencil_edge, o.stencil_iterations);
  if (name == "cp") return cp_group(o.cp_grid, o.cp_grid, o.cp_atoms, o.cp_chunk);
  if (name == "mri-q") return mri_q_group(s.mri_voxels, o.mri_samples, o.mri_chunk);
  if (name == "mri-fhd") return mri_fhd_group(s.mri_voxels, o.mri_samples, o.mri_chunk);
  return tpacf_group(o.tpacf_points, o.tpacf_sets, o.tpacf_bins);
}

/// A workload at the self-check's size: small, with sizes that are no multiple of a page, a block or a
/// tile, so that every partial range is exercised.
group check_group(const std::string& name, const options& o) {
  if (name == "vecadd") return vecadd_group((std::size_t{1} << 20) + 3);
  if (name == "stencil") return stencil_group(40, 6);
  if (name == "cp") return cp_group(200, 130, 1500, 256);
  if (name == "mri-q") return mri_q_group(3000, 700, 256);
  if (name == "mri-fhd") return mri_fhd_group(3000, 700, 256);
  return tpacf_group(1000, 2, o.tpacf_bins);
}

/// The self-check's rolling block: small, so that its objects span several blocks and the ring evicts.
constexpr std::size_t self_check_block_bytes = 16 * KiB;

std::vector<group> plan(const options& o, const sizes& s, const std::vector<variant>& table_variants) {
  std::vector<group> groups;
  auto selected = [&](const std::string& experiment) {
    return std::find(o.experiments.begin(), o.experiments.end(), experiment) != o.experiments.end();
  };
  std::vector<std::string> in_use;  // the workloads some experiment runs, in the usual order
  for (const std::string& w : workload_names) {
    const bool table =
        selected("table") && std::find(o.workloads.begin(), o.workloads.end(), w) != o.workloads.end();
    if (table || (w == "stencil" && selected("stencil-volumes")) ||
        (w == "vecadd" && selected("block-sizes")) || (w == "tpacf" && selected("rolling-sizes")))
      in_use.push_back(w);
  }
  if (!o.no_self_check)
    for (const std::string& w : in_use) {
      group g = check_group(w, o);
      g.experiment = "self-check";
      g.thorough = true;
      g.warmup = 0;
      g.reps = 1;
      for (variant v : all_variants)
        g.runs.push_back({v, v == variant::rolling ? self_check_block_bytes : 0, 0});
      g.runs.push_back({variant::rolling, self_check_block_bytes, 1});  // evicting at every second block
      groups.push_back(std::move(g));
    }
  if (selected("table"))
    for (const std::string& w : workload_names) {
      if (std::find(o.workloads.begin(), o.workloads.end(), w) == o.workloads.end()) continue;
      group g = measured_group(w, o, s);
      g.experiment = "table";
      g.warmup = o.warmup;
      g.reps = o.reps;
      for (variant v : table_variants) g.runs.push_back({v, v == variant::rolling ? s.block_bytes : 0, 0});
      groups.push_back(std::move(g));
    }
  auto sweep = [&](group g, const std::string& experiment, const std::vector<std::uint32_t>& rolling_sizes) {
    g.experiment = experiment;
    g.warmup = o.warmup;
    g.reps = o.sweep_reps;
    g.runs.push_back({variant::explicit_copies, 0, 0});
    if (experiment == "stencil-volumes") g.runs.push_back({variant::lazy, 0, 0});
    for (std::uint32_t rolling : rolling_sizes)
      for (std::size_t block : s.block_sizes) g.runs.push_back({variant::rolling, block, rolling});
    groups.push_back(std::move(g));
  };
  if (selected("stencil-volumes"))
    for (std::size_t edge : o.stencil_edges)
      sweep(stencil_group(edge, o.stencil_iterations), "stencil-volumes", {0});
  if (selected("block-sizes"))
    for (std::size_t n : s.sweep_elements) sweep(vecadd_group(n), "block-sizes", {0});
  if (selected("rolling-sizes"))
    sweep(tpacf_group(o.sweep_tpacf_points, o.sweep_tpacf_sets, o.tpacf_bins), "rolling-sizes",
          o.rolling_sizes);
  return groups;
}

/// MemAvailable of /proc/meminfo in bytes, or 0 where it cannot be read.
std::uint64_t host_available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t value = 0;
  std::string unit;
  while (meminfo >> key >> value >> unit)
    if (key == "MemAvailable:") return value * KiB;
  return 0;
}

/// Every group whose memory does not fit: GPU memory as the library takes it (each object rounded up to
/// the driver's 2 MiB granularity) beside 512 MiB for the context and kernels; host memory for the
/// inputs, the host copies or the library's views, the output and the first correct output kept to compare.
std::vector<std::string> misfits(const std::vector<group>& groups, std::size_t free_device_bytes,
                                 std::uint64_t available_host_bytes) {
  constexpr std::uint64_t granularity = 2 * MiB, headroom = 512 * MiB;
  std::vector<std::string> problems;
  for (const group& g : groups) {
    const std::uint64_t device = g.device_bytes + g.device_arrays * granularity + headroom;
    const std::string what = g.experiment + " " + g.workload + " (" + size_text(g.size) + ")";
    if (device > free_device_bytes)
      problems.push_back(what + " needs " + format_bytes(device) + " of GPU memory (headroom included); " +
                         format_bytes(free_device_bytes) + " are free");
    const std::uint64_t host = g.source_bytes + 3 * g.device_bytes + headroom;
    if (available_host_bytes != 0 && host > available_host_bytes)
      problems.push_back(what + " needs about " + format_bytes(host) + " of host memory; " +
                         format_bytes(available_host_bytes) + " are available");
  }
  return problems;
}

std::string progress_line(double seconds, const std::vector<row>& rows) {
  std::string s;
  char text[64];
  std::snprintf(text, sizeof text, "[%6.1f s] ", seconds);
  s += text;
  if (!rows.empty())
    s += rows.front().experiment + " " + rows.front().workload + " " + size_text(rows.front().size) + ":";
  for (const row& r : rows) {
    s += " " + std::string(name_of(r.spec.which));
    if (r.spec.which == variant::rolling)
      s += "(" + format_bytes(r.spec.block_bytes) +
           (r.spec.rolling_size ? "," + std::to_string(r.spec.rolling_size) : "") + ")";
    if (r.status == "ok" && r.median() != nullptr) {
      std::snprintf(text, sizeof text, " %.1f ms", r.median()->ms);
      s += text;
    } else {
      s += " " + r.status;
    }
  }
  return s;
}

int run_benchmark(const options& o, const sizes& s, std::vector<variant> table_variants, int argc,
                  char** argv) {
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };

  int devices = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess || devices == 0) {
    std::cerr << "xeflow-shared-bench: no usable CUDA GPU ("
              << (e != cudaSuccess ? describe_cuda_error(e) : std::string("no device found")) << ")\n";
    return exit_no_gpu;
  }
  if (o.device < 0 || o.device >= devices) {
    std::cerr << "xeflow-shared-bench: --device " << o.device << ": this machine has " << devices
              << " GPU(s)\n";
    return exit_usage;
  }
  cudaDeviceProp prop{};
  std::size_t free_bytes = 0, total_bytes = 0;
  int driver = 0, runtime = 0;
  try {
    XF_CUDA_TRY(cudaSetDevice(o.device));
    XF_CUDA_TRY(cudaFree(nullptr));  // the context, before anything is timed
    XF_CUDA_TRY(cudaGetDeviceProperties(&prop, o.device));
    XF_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
    XF_CUDA_TRY(cudaDriverGetVersion(&driver));
    XF_CUDA_TRY(cudaRuntimeGetVersion(&runtime));
  } catch (const cuda_error& e) {
    std::cerr << "xeflow-shared-bench: no usable CUDA GPU: " << e.what() << "\n";
    return exit_no_gpu;
  }
  // The managed variants write managed memory while kernels run elsewhere in it (tpacf), which needs the
  // device's concurrent managed access.
  std::string managed_note;
  if (!prop.managedMemory || !prop.concurrentManagedAccess) {
    managed_note = "the GPU lacks concurrent managed access: managed variants left out";
    std::erase_if(table_variants, [](variant v) { return uses_managed(v); });
    std::cerr << "xeflow-shared-bench: " << managed_note << "\n";
  }

  std::vector<group> groups = plan(o, s, table_variants);
  if (const auto problems = misfits(groups, free_bytes, host_available_bytes()); !problems.empty()) {
    std::cerr << "xeflow-shared-bench: sizes that do not fit this machine (choose smaller ones):\n";
    for (const std::string& p : problems) std::cerr << "  " << p << "\n";
    return exit_usage;
  }
  if (!managed_note.empty())
    for (group& g : groups) std::erase_if(g.runs, [](const run_spec& r) { return uses_managed(r.which); });

  std::fprintf(stderr, "%s, %d SMs, %s free of %s; %zu groups\n", prop.name, prop.multiProcessorCount,
               format_bytes(free_bytes).c_str(), format_bytes(total_bytes).c_str(), groups.size());
  runner run(o.device);
  std::vector<row> rows;
  std::vector<std::string> variant_names;
  for (variant v : table_variants) variant_names.emplace_back(name_of(v));
  const std::string date = utc_now();
  const std::string commit = o.commit.empty() ? git_commit() : o.commit;
  auto all_ok = [&] {
    return !run.context_lost() && std::all_of(rows.begin(), rows.end(), [](const row& r) {
      return r.status == "ok" || r.status == "skipped";
    });
  };
  auto budget_hit = [&] {
    return std::any_of(rows.begin(), rows.end(), [](const row& r) { return r.status == "skipped"; });
  };
  // Rewritten after every group, so that a run stopped from outside keeps what it finished.
  auto write_json = [&](bool finished) {
    if (o.json_path.empty()) return true;
    nlohmann::json out_rows = nlohmann::json::array();
    for (const row& r : rows) out_rows.push_back(to_json(r));
    const nlohmann::json doc = {
        {"program", "xeflow-shared-bench"},
        {"device",
         {{"name", prop.name},
          {"ordinal", o.device},
          {"compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor)},
          {"multiprocessors", prop.multiProcessorCount},
          {"memory_bytes", total_bytes},
          {"free_bytes_at_start", free_bytes},
          {"pci_bus", prop.pciBusID},
          {"driver_version", driver},
          {"runtime_version", runtime}}},
        {"date", date},
        {"commit", commit},
        {"command_line", command_line(argc, argv)},
        {"config",
         {{"experiments", o.experiments},
          {"workloads", o.workloads},
          {"variants", variant_names},
          {"reps", o.reps},
          {"warmup", o.warmup},
          {"sweep_reps", o.sweep_reps},
          {"block_bytes", s.block_bytes},
          {"block_sizes", s.block_sizes},
          {"rolling_sizes", o.rolling_sizes},
          {"stencil_edges", o.stencil_edges},
          {"sweep_elements", s.sweep_elements},
          {"time_budget_s", o.time_budget_s},
          {"slow_run_s", o.slow_run_s},
          {"quick", o.quick},
          {"managed_note", managed_note}}},
        {"finished", finished},
        {"elapsed_s", elapsed()},
        {"budget_hit", budget_hit()},
        {"context_lost", run.context_lost()},
        {"all_ok", finished && all_ok()},
        {"rows", out_rows}};
    std::ofstream file(o.json_path);
    file << doc.dump(1) << "\n";
    if (!file) std::cerr << "xeflow-shared-bench: cannot write " << o.json_path << "\n";
    return static_cast<bool>(file);
  };

  const std::map<std::string, std::string> titles = {
      {"self-check",
       "self-check: every variant at a small size against the whole CPU reference (one run each)"},
      {"table",
       "table: every workload, every variant (Figs. 7, 8, 10); ms = inputs written to outputs read, median"},
      {"stencil-volumes", "stencil-volumes: the stencil by volume, lazy against rolling by block (Fig. 9)"},
      {"block-sizes", "block-sizes: vector addition under rolling update by block (Fig. 11)"},
      {"rolling-sizes", "rolling-sizes: tpacf under rolling update by block and rolling size (Fig. 12)"}};
  const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(o.time_budget_s));
  std::string shown;  // the experiment whose title is printed last
  bool json_ok = true;
  for (const group& g : groups) {
    if (run.context_lost()) break;
    const std::vector<row> got = run.run(g, deadline, o.slow_run_s);
    std::fprintf(stderr, "%s\n", progress_line(elapsed(), got).c_str());
    if (g.experiment != shown) print_title(titles.at(g.experiment));
    shown = g.experiment;
    print_rows(got);
    rows.insert(rows.end(), got.begin(), got.end());
    json_ok = write_json(false) && json_ok;
  }
  json_ok = write_json(true) && json_ok;
  std::printf("\n%s%s%s; %.1f s\n",
              all_ok() ? "every run checked and correct" : "SOME RUNS FAILED OR WERE WRONG",
              budget_hit() ? "; the time budget left runs out" : "",
              run.context_lost() ? "; the CUDA context was lost" : "", elapsed());
  if (!json_ok) return exit_failed;
  return all_ok() ? exit_ok : exit_failed;
}

}  // namespace
}  // namespace xf::shared_bench

int main(int argc, char** argv) {
  using namespace xf::shared_bench;
  options o;
  for (variant v : all_variants) o.variants.emplace_back(name_of(v));
  std::vector<std::string> variant_choices = o.variants;
  CLI::App app{
      "xeflow-shared-bench: the ADSM/GMAC paper's evaluation of shared objects (Figs. 7-12) on one GPU. Six "
      "workloads (vecadd, stencil, cp, mri-q, mri-fhd, tpacf), the same kernels in every variant: explicit "
      "copies (pageable and pinned host copies), the shared objects under batch, lazy and rolling update, "
      "managed memory without and with hints. Every output is checked before its time is reported. Times: "
      "from the first input written to the last output read on the CPU, median of --reps after --warmup."};
  app.option_defaults()->always_capture_default();
  app.add_option("--experiments", o.experiments, "experiments to run")
      ->delimiter(',')
      ->check(CLI::IsMember(experiment_names));
  app.add_option("--workloads", o.workloads, "the table's workloads")
      ->delimiter(',')
      ->check(CLI::IsMember(workload_names));
  app.add_option("--variants", o.variants, "the table's variants")
      ->delimiter(',')
      ->check(CLI::IsMember(variant_choices));
  app.add_option("--reps", o.reps, "timed runs per table entry (the median is reported)")
      ->check(CLI::Range(1u, 1000u));
  app.add_option("--sweep-reps", o.sweep_reps, "timed runs per sweep entry")->check(CLI::Range(1u, 1000u));
  app.add_option("--warmup", o.warmup, "untimed runs before them")->check(CLI::Range(0u, 100u));
  app.add_option("--vecadd-elements", o.vecadd_elements,
                 "vector addition: floats per vector (Ki, Mi suffixes)");
  app.add_option("--stencil-edge", o.stencil_edge, "stencil (table): the volume's edge (edge³ floats)")
      ->check(CLI::Range(std::size_t{3}, std::size_t{2048}));
  app.add_option("--stencil-iterations", o.stencil_iterations, "stencil: time steps")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));
  app.add_option("--cp-grid", o.cp_grid, "cp: grid points per side")
      ->check(CLI::Range(std::size_t{1}, std::size_t{65535}));
  app.add_option("--cp-atoms", o.cp_atoms, "cp: atoms")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30));
  app.add_option("--cp-chunk", o.cp_chunk, "cp: atoms per kernel call")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 24));
  app.add_option("--mri-voxels", o.mri_voxels, "mri-q and mri-fhd: voxels (Ki, Mi suffixes)");
  app.add_option("--mri-samples", o.mri_samples, "mri-q and mri-fhd: k-space samples")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 26));
  app.add_option("--mri-chunk", o.mri_chunk, "mri-q and mri-fhd: samples per launch")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 26));
  app.add_option("--tpacf-points", o.tpacf_points, "tpacf: points per set")
      ->check(CLI::Range(std::size_t{2}, std::size_t{1} << 26));
  app.add_option("--tpacf-sets", o.tpacf_sets, "tpacf: random sets")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000}));
  app.add_option("--tpacf-bins", o.tpacf_bins, "tpacf: angular bins")
      ->check(CLI::Range(std::size_t{1}, std::size_t{tpacf_max_bins}));
  app.add_option("--block-size", o.block_size,
                 "rolling update's block in the table (a multiple of the page size)");
  app.add_option("--stencil-edges", o.stencil_edges, "stencil-volumes: volume edges")
      ->delimiter(',')
      ->check(CLI::Range(std::size_t{3}, std::size_t{2048}));
  app.add_option("--block-sizes", o.block_sizes,
                 "the sweeps' rolling blocks (stencil-volumes, block-sizes, rolling-sizes)")
      ->delimiter(',');
  app.add_option("--rolling-sizes", o.rolling_sizes, "rolling-sizes: fixed rolling sizes (dirty blocks)")
      ->delimiter(',')
      ->check(CLI::Range(1u, 4096u));
  app.add_option("--sweep-elements", o.sweep_elements, "block-sizes: vector lengths (floats)")
      ->delimiter(',');
  app.add_option(
         "--sweep-tpacf-points", o.sweep_tpacf_points,
         "rolling-sizes: tpacf's points per set (smaller than the table's: with a rolling size below the "
         "blocks one point's writes touch, every write evicts, as the paper's Fig. 12 shows)")
      ->check(CLI::Range(std::size_t{2}, std::size_t{1} << 26));
  app.add_option("--sweep-tpacf-sets", o.sweep_tpacf_sets, "rolling-sizes: tpacf's random sets")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000}));
  app.add_option("--slow-run", o.slow_run_s,
                 "seconds: once a run takes longer (allocation included), its entry makes no more runs");
  app.add_option("--time-budget", o.time_budget_s,
                 "seconds after which no further run starts (those left out are listed as skipped)");
  app.add_flag("--no-self-check", o.no_self_check, "skip the small-size check of every variant");
  app.add_flag("--quick", o.quick, "small sizes and few runs everywhere: a smoke test of a few seconds");
  app.add_option("--json", o.json_path, "also write every result as JSON to this file");
  app.add_option("--commit", o.commit, "commit recorded in the JSON (default: git rev-parse HEAD here)");
  app.add_option("--device", o.device, "CUDA device ordinal");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? exit_ok : exit_usage;
  }
  if (o.quick) {
    o.vecadd_elements = "4Mi";
    o.stencil_edge = 96;
    o.stencil_iterations = 8;
    o.cp_grid = 256;
    o.cp_atoms = 4000;
    o.cp_chunk = 1000;
    o.mri_voxels = "64Ki";
    o.mri_samples = 1024;
    o.mri_chunk = 512;
    o.tpacf_points = 4096;
    o.tpacf_sets = 2;
    o.stencil_edges = {64, 96};
    o.block_sizes = {"64KiB", "1MiB"};
    o.rolling_sizes = {1, 4};
    o.sweep_elements = {"4Mi"};
    o.sweep_tpacf_points = 4096;
    o.sweep_tpacf_sets = 2;
    o.reps = 2;
    o.sweep_reps = 1;
  }
  sizes s{};
  std::vector<variant> table_variants;
  try {
    s.vecadd_elements = parse_count("--vecadd-elements", o.vecadd_elements);
    s.mri_voxels = parse_count("--mri-voxels", o.mri_voxels);
    s.block_bytes = parse_count("--block-size", o.block_size);
    for (const std::string& b : o.block_sizes) s.block_sizes.push_back(parse_count("--block-sizes", b));
    for (const std::string& n : o.sweep_elements)
      s.sweep_elements.push_back(parse_count("--sweep-elements", n));
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    for (std::size_t b : s.block_sizes)
      if (b == 0 || b % page != 0)
        throw std::invalid_argument("--block-sizes: " + std::to_string(b) +
                                    " is no multiple of the page size");
    if (s.block_bytes == 0 || s.block_bytes % page != 0)
      throw std::invalid_argument("--block-size must be a positive multiple of the page size (" +
                                  std::to_string(page) + ")");
    if (s.vecadd_elements == 0 || s.mri_voxels == 0 || o.cp_grid == 0)
      throw std::invalid_argument("sizes must be positive");
    for (std::size_t n : s.sweep_elements)
      if (n == 0) throw std::invalid_argument("--sweep-elements must be positive");
    for (const std::string& name : o.variants) table_variants.push_back(*variant_named(name));
  } catch (const std::exception& e) {
    std::cerr << "xeflow-shared-bench: " << e.what() << "\n";
    return exit_usage;
  }
  try {
    return run_benchmark(o, s, table_variants, argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "xeflow-shared-bench: " << e.what() << "\n";
    return exit_failed;
  }
}
