// xeflow-kmeans' iterations: an xeflow run per assignment pass, planned and run as xeflow-run plans and
// runs a topology, then the reference's update step over the ids the pass wrote into the file.
#include "apps/kmeans/xeflow_kmeans.hpp"

#include <zlib.h>

#include <unistd.h>
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <fstream>

#include "apps/dataset_support/parallel.hpp"
#include "apps/dataset_support/tool_cli.hpp"
#include "apps/kmeans/centre_update.hpp"
#include "apps/kmeans/live_update.hpp"
#include "framework/kernel/kernel_program.hpp"
#include "framework/launch/launcher.hpp"
#include "framework/model/spec_validation.hpp"
#include "framework/model/topology_builder.hpp"
#include "framework/runtime/executor.hpp"
#include "operators/builtin.hpp"
#include "operators/builtin_gpu.hpp"
#include "operators/transforms/kmeans_assign.hpp"

namespace xf::apps::kmeans {
namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

// What travels: x, y, z to kmeans_assign (one field: they are adjacent), the cluster id back.
constexpr std::uint64_t position_bytes = 3 * sizeof(float);
static_assert(offsetof(particle, y) == offsetof(particle, x) + sizeof(float) &&
              offsetof(particle, z) == offsetof(particle, y) + sizeof(float));

/// kmeans_assign's `centres` parameter. Each coordinate is written as the shortest text that reads back as
/// the same double, which is the float itself, so the pass assigns with exactly the updated centres.
std::string centres_param(const std::vector<centre>& centres) {
  std::string text;
  for (const centre& c : centres) {
    const char* separator = text.empty() ? "" : "; ";
    for (const float v : {c.x, c.y, c.z}) {
      char number[32];  // a double's shortest round-trip text is at most 24 characters
      const auto [end, ec] = std::to_chars(number, number + sizeof number, static_cast<double>(v));
      text.append(separator).append(number, end);
      separator = " ";
    }
  }
  return text;
}

/// prefetch_source / prefetch_writeback over the particle file: the fields they read or write ("OFFSET:BYTES"
/// in the record, kmeans_format.hpp), `records_per_frame` (the sink's frame o must be the source's) and the
/// stream's passes over the file.
op particle_dataset(const char* name, const char* class_name, bool writes, const std::string& path,
                    const xeflow_options& opt, std::uint64_t records_per_frame, std::int64_t passes) {
  const std::string fields =
      writes ? std::to_string(offsetof(particle, cluster)) + ":" + std::to_string(sizeof(particle::cluster))
             : std::to_string(offsetof(particle, x)) + ":" + std::to_string(position_bytes);
  return op(name, class_name)
      .threads(opt.lloyd.threads)
      .param("path", path)
      .param("record_bytes", particle_bytes)
      .param("fields", fields)
      .param("records_per_frame", records_per_frame)
      .param("passes", passes);
}

/// The two topics, x y z to the GPU and the ids back (the default ring of 64 frames, as
/// topologies/kmeans_assign.yaml).
void particle_topics(topology_builder& b, const xeflow_options& opt) {
  for (const char* topic : {"xyz", "ids"})
    b.topic(topic).frame_bytes(opt.frame_bytes).element(element_type::f32);
  b.runtime().executor(opt.force_host ? executor_kind::host : executor_kind::automatic);
}

/// One assignment pass: the source gathers x, y, z of `records_per_frame` particles per frame, kmeans_assign
/// assigns them to `centres`, the write-back sink stores the ids into the same records of the file.
topology_spec assignment_pass(const std::string& path, const std::vector<centre>& centres,
                              const xeflow_options& opt, std::uint64_t records_per_frame) {
  topology_builder b{"kmeans_assign"};
  particle_topics(b, opt);
  b.link({}, particle_dataset("particles", "prefetch_source", false, path, opt, records_per_frame, 1),
         {"xyz"});
  b.link({"xyz"}, op("assign", "kmeans_assign").on(placement::gpu).param("centres", centres_param(centres)),
         {"ids"});
  b.link({"ids"}, particle_dataset("store", "prefetch_writeback", true, path, opt, records_per_frame, 1), {});
  return b.build();
}

/// Every iteration in one run: the source's passes, the centres a shared object kmeans_update publishes and
/// kmeans_assign reads, the ids both written back and folded as they stream.
topology_spec iterations_in_one_run(const std::string& path, const xeflow_options& opt,
                                    std::uint64_t records_per_frame, const std::string& result) {
  topology_builder b{"kmeans_iterations"};
  particle_topics(b, opt);
  const std::uint32_t k = opt.lloyd.clusters;
  b.shared_object("centres").element(element_type::f32).count(3 * std::uint64_t{k}).versions(2);
  const std::int64_t passes = opt.lloyd.iterations;
  b.link({}, particle_dataset("particles", "prefetch_source", false, path, opt, records_per_frame, passes),
         {"xyz"});
  b.link({"xyz"},
         op("assign", "kmeans_assign")
             .on(placement::gpu)
             .param("clusters", std::int64_t{k})
             .shared("centres", "centres"),
         {"ids"});
  b.link({"ids"}, particle_dataset("store", "prefetch_writeback", true, path, opt, records_per_frame, passes),
         {});
  b.link({"ids"},
         op("update", "kmeans_update")
             .threads(opt.lloyd.threads)
             .param("path", path)
             .param("clusters", std::int64_t{k})
             .param("iterations", passes)
             .param("records_per_frame", records_per_frame)
             .param("block_particles", static_cast<std::int64_t>(opt.lloyd.block_particles))
             .param("result", result)
             .shared("centres", "centres"),
         {});
  return b.build();
}

/// Validates, plans and runs one topology of xeflow-kmeans as xeflow-run would; throws for a run that did
/// not complete, naming `what` (wedged_device_error for a hung or faulted kernel).
run_stats run_checked(topology_spec& spec, const operator_registry& registry, const xeflow_options& opt,
                      const std::string& what) {
  validate_topology(spec, registry);
  const plan p =
      plan_for_this_machine(spec, registry, opt.force_host, compiled_kernel<builtin_gpu_operators>());
  run_control control;
  run_options run;
  run.kernel = compiled_kernel<builtin_gpu_operators>();
  run_stats stats = run_topology(p, spec, control, run);
  if (stats.device_wedged) throw wedged_device_error(what + ": " + stats.error);
  if (stats.status != xf::run_status::completed)
    throw std::runtime_error(what + " " + std::string(xf::name_of(stats.status)) +
                             (stats.error.empty() ? "" : ": " + stats.error));
  return stats;
}

void check_options(const xeflow_options& opt) {
  const options& o = opt.lloyd;
  if (o.clusters == 0 || o.clusters > kmeans_assign_op::max_centres)
    throw usage_error("--clusters " + std::to_string(o.clusters) + ": kmeans_assign takes 1 to " +
                      std::to_string(kmeans_assign_op::max_centres) + " centres");
  if (o.iterations == 0 || o.threads == 0 || o.block_particles == 0)
    throw usage_error("--iterations and --threads must be at least 1");
  if (const std::string problem = frame_size_problem(opt.frame_bytes); !problem.empty())
    throw usage_error("--frame-size: " + problem);
}

xeflow_result run_in_one(const std::string& path, const xeflow_options& opt, clock_type::time_point start) {
  const options& lloyd = opt.lloyd;
  const std::uint32_t k = lloyd.clusters;
  std::uint64_t n = 0;
  {
    const mapped_file file = mapped_file::open(path, map_access::read_write);
    n = particles_of(file, k).size();
  }
  xeflow_result r;
  r.one_run = true;
  r.records_per_frame = opt.frame_bytes / position_bytes;
  const std::string result_path =
      (std::filesystem::temp_directory_path() / ("xeflow-kmeans-" + std::to_string(::getpid()) + ".json"))
          .string();
  operator_registry registry;
  register_builtin_operators(registry);
  registry.add<kmeans_update>("kmeans_update");
  topology_spec spec = iterations_in_one_run(path, opt, r.records_per_frame, result_path);
  const auto run_start = clock_type::now();
  run_stats stats;
  try {
    stats = run_checked(spec, registry, opt, "the run");
  } catch (...) {
    std::filesystem::remove(result_path);
    throw;
  }
  r.run_seconds = seconds_since(run_start);
  r.executor = stats.executor;
  nlohmann::json j;
  {
    std::ifstream in(result_path);
    if (!in) throw std::runtime_error("kmeans_update left no result in " + result_path);
    in >> j;
  }
  std::filesystem::remove(result_path);

  result& out = r.lloyd;
  for (const auto& c : j.at("centres"))
    out.centres.push_back({c.at("x").get<float>(), c.at("y").get<float>(), c.at("z").get<float>(),
                           c.at("particles").get<std::uint64_t>()});
  const auto changed = j.at("changed_per_pass").get<std::vector<std::uint64_t>>();
  const auto ends = j.at("pass_end_seconds").get<std::vector<double>>();
  for (std::size_t i = 0; i < changed.size(); ++i) {
    iteration_stats it;
    it.assign_seconds = ends[i] - (i == 0 ? 0.0 : ends[i - 1]);
    it.changed = changed[i];
    r.iterations.push_back(it);
  }
  const auto crcs = j.at("block_crcs").get<std::vector<std::uint32_t>>();
  out.particles = n;
  out.iterations = lloyd.iterations;
  out.threads = lloyd.threads;
  out.dataset_bytes = n * particle_bytes;
  out.changed_last_iteration = changed.empty() ? 0 : changed.back();
  out.digest = result_digest(crcs, n, lloyd.block_particles, out.centres);
  out.seconds = seconds_since(start);
  return r;
}

}  // namespace

xeflow_result run_xeflow(const std::string& path, const xeflow_options& opt) {
  const auto start = clock_type::now();
  check_options(opt);
  if (!opt.per_iteration) return run_in_one(path, opt, start);
  const options& lloyd = opt.lloyd;
  const std::uint32_t k = lloyd.clusters;
  // The reference's mapping and checks. Read-write, so an unwritable file fails here as it does there;
  // the passes' ids reach this mapping through the page cache (the write-back maps the file shared too).
  const mapped_file file = mapped_file::open(path, map_access::read_write);
  const std::span<const particle> particles = particles_of(file, k);
  const std::uint64_t n = particles.size();
  centre_update update(n, k, lloyd.block_particles);
  const std::uint64_t blocks = update.blocks();
  const auto threads = static_cast<unsigned>(std::min<std::uint64_t>(lloyd.threads, blocks));

  // The ids before each pass: the reference counts a particle as changed when its pass's id differs from
  // what the record held, and the write-back overwrites that.
  std::vector<std::uint32_t> ids(n);
  run_parallel(threads, [&](unsigned t) {
    const index_range mine = split_range(n, threads, t);
    for (std::uint64_t i = mine.begin; i < mine.end; ++i) ids[i] = particles[i].cluster;
  });

  operator_registry registry;
  register_builtin_operators(registry);
  xeflow_result r;
  r.records_per_frame = opt.frame_bytes / position_bytes;
  std::vector<centre> centres = initial_centres(particles, k);
  std::vector<std::uint32_t> block_crc(blocks);
  std::vector<std::uint64_t> changed(threads);

  for (std::uint32_t iteration = 0; iteration < lloyd.iterations; ++iteration) {
    const bool last = iteration + 1 == lloyd.iterations;
    const std::string pass = "assignment pass " + std::to_string(iteration + 1);
    iteration_stats it;

    const auto assign_start = clock_type::now();
    topology_spec spec = assignment_pass(path, centres, opt, r.records_per_frame);
    const run_stats stats = run_checked(spec, registry, opt, pass);
    it.assign_seconds = seconds_since(assign_start);
    it.stream_seconds = stats.stream_seconds;
    r.executor = stats.executor;

    const auto update_start = clock_type::now();
    run_parallel(threads, [&](unsigned t) {
      const index_range mine = split_range(blocks, threads, t);
      std::uint64_t changed_here = 0;
      for (std::uint64_t b = mine.begin; b < mine.end; ++b) {
        const std::span<partial_sum> sums = update.start_block(b);
        const index_range block = update.block(b);
        for (std::uint64_t i = block.begin; i < block.end; ++i) {
          const particle& q = particles[i];
          const std::uint32_t c = q.cluster;
          if (c >= k)  // a pass that stored something else than an id: never sum out of bounds
            throw dataset_error(path, i * particle_bytes + offsetof(particle, cluster),
                                pass + " wrote cluster id " + std::to_string(c) + ", not one of the " +
                                    std::to_string(k) + " centres");
          changed_here += c != ids[i];
          ids[i] = c;
          centre_update::add(sums, c, q.x, q.y, q.z);
        }
        if (last)
          block_crc[b] = static_cast<std::uint32_t>(crc32_z(
              0, reinterpret_cast<const Bytef*>(&ids[block.begin]), block.size() * sizeof(std::uint32_t)));
      }
      changed[t] = changed_here;
    });
    update.move_centres(centres);
    it.update_seconds = seconds_since(update_start);
    for (const std::uint64_t c : changed) it.changed += c;
    r.iterations.push_back(it);
  }

  result& out = r.lloyd;
  out.particles = n;
  out.iterations = lloyd.iterations;
  out.threads = threads;
  out.dataset_bytes = n * particle_bytes;
  out.changed_last_iteration = r.iterations.back().changed;
  out.digest = result_digest(block_crc, n, lloyd.block_particles, centres);
  out.centres = std::move(centres);
  out.seconds = seconds_since(start);
  return r;
}

nlohmann::json to_json(const xeflow_result& r, const xeflow_options& opt) {
  nlohmann::json j = to_json(r.lloyd);
  nlohmann::json per_iteration = nlohmann::json::array();
  double assign_seconds = 0, update_seconds = 0;
  for (std::size_t i = 0; i < r.iterations.size(); ++i) {
    const iteration_stats& it = r.iterations[i];
    per_iteration.push_back({{"iteration", i + 1},
                             {"assign_seconds", it.assign_seconds},
                             {"stream_seconds", it.stream_seconds},
                             {"update_seconds", it.update_seconds},
                             {"changed", it.changed}});
    assign_seconds += it.assign_seconds;
    update_seconds += it.update_seconds;
  }
  j["executor"] = r.executor;
  j["mode"] = r.one_run ? "one_run" : "per_iteration";
  if (r.one_run) j["run_seconds"] = r.run_seconds;
  j["frame_bytes"] = opt.frame_bytes;
  j["records_per_frame"] = r.records_per_frame;
  j["assign_seconds"] = assign_seconds;
  j["update_seconds"] = update_seconds;
  j["iteration_stats"] = per_iteration;
  return j;
}

}  // namespace xf::apps::kmeans
