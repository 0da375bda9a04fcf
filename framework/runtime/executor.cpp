// Running a topology: the run's context, the CPU workers, the kernel executor the plan chose, a monitor
// for progress, and the stats once every thread has stopped.
#include "framework/runtime/executor.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <filesystem>
#include <thread>
#include <utility>

#include "framework/core/backoff.hpp"
#include "framework/core/timer_slack.hpp"
#include "framework/runtime/checkpoint.hpp"
#include "framework/runtime/cpu_workers.hpp"
#include "framework/runtime/kernel_executor.hpp"
#include "framework/runtime/run_context.hpp"
#include "framework/runtime/run_sampler.hpp"
#include "framework/runtime/stats_builder.hpp"
#include "framework/runtime/topic_carrier.hpp"

namespace xf {
namespace {

/// Samples the sinks' totals every step for the progress callback and the timeline, and the live metrics
/// (at once: every operator has started, then every sample_interval), until `done`.
void monitor_run(run_context& run, const run_options& options, run_clock::time_point start,
                 const std::atomic<bool>& done, std::vector<run_progress>& timeline,
                 kernel_executor* executor, const topic_carrier* carrier) {
  const plan& p = run.plan_of();
  const auto step =
      options.timeline_interval.count() > 0
          ? std::min<run_clock::duration>(options.timeline_interval, std::chrono::milliseconds(20))
          : run_clock::duration(std::chrono::milliseconds(20));
  auto next_progress = run_clock::now() + options.progress_interval;
  auto next_sample = run_clock::now() + options.timeline_interval;
  auto next_metrics = run_clock::now();
  while (!done.load()) {
    if (options.on_sample && run_clock::now() >= next_metrics) {
      const auto now = run_clock::now();
      options.on_sample(
          sample_run(run, executor, carrier, std::chrono::duration<double>(now - start).count()));
      next_metrics = now + options.sample_interval;
    }
    std::this_thread::sleep_for(step);
    if (done.load()) break;
    const auto now = run_clock::now();
    const bool sample = options.timeline_interval.count() > 0 && now >= next_sample;
    const bool report = options.on_progress && now >= next_progress;
    if (!sample && !report) continue;
    run_progress progress;
    progress.elapsed_seconds = std::chrono::duration<double>(now - start).count();
    for (std::size_t i = 0; i < p.operators.size(); ++i)
      if (p.operators[i].entry->info.role == operator_role::sink) {
        progress.sink_frames += run.counters()[i].frames_in.load(std::memory_order_relaxed);
        progress.sink_bytes += run.counters()[i].bytes_in.load(std::memory_order_relaxed);
      }
    if (sample) {
      timeline.push_back(progress);
      next_sample += options.timeline_interval;
    }
    if (report) {
      options.on_progress(progress);
      next_progress = now + options.progress_interval;
    }
  }
}

/// GPU sinks' accumulators become their counters once the whole stream was folded in: not after a failed
/// run, nor an interrupted one (its fold is partial). On the device the accumulators are copied out first,
/// one after another; then the sinks finish at once, on up to a thread a core: a finish may sort and write
/// millions of result rows, and no two sinks' finishes share anything. Failures are reported in operator
/// order.
std::vector<operator_counters> finish_kernel_sinks(run_context& run, kernel_executor& executor) {
  const plan& p = run.plan_of();
  std::vector<operator_counters> counters;
  if (run.control().failure() || run.control().draining()) return counters;
  counters.resize(p.operators.size());
  std::vector<std::exception_ptr> errors(p.operators.size());
  std::vector<std::pair<std::size_t, host_kernel_op*>> sinks;
  for (std::size_t k = 0; k < p.kernel_operators.size(); ++k) {
    const std::size_t i = p.kernel_operators[k];
    host_kernel_op* kernel = i < run.instances().size() ? run.instances()[i].kernel.get() : nullptr;
    if (kernel == nullptr || !p.operators[i].outputs.empty()) continue;
    try {
      executor.collect_accumulator(static_cast<std::uint32_t>(k), *kernel);
      sinks.emplace_back(i, kernel);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  }
  std::atomic<std::size_t> next{0};
  const auto finish_sinks = [&] {
    for (std::size_t s; (s = next.fetch_add(1)) < sinks.size();) {
      const auto [i, kernel] = sinks[s];
      try {
        counters[i] = kernel->finish();
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const std::size_t workers =
      std::min<std::size_t>(sinks.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < workers; ++t) threads.emplace_back(finish_sinks);
  finish_sinks();
  for (std::thread& t : threads) t.join();
  for (std::size_t i = 0; i < errors.size(); ++i) {
    if (!errors[i]) continue;
    try {
      std::rethrow_exception(errors[i]);
    } catch (const run_error& e) {
      run.control().fail(e);
    } catch (const std::exception& e) {
      run.control().fail(run_error(run.site(i, p.operators[i].inputs[0], std::nullopt),
                                   std::string("finish failed: ") + e.what()));
    }
  }
  return counters;
}

}  // namespace

run_stats run_topology(const plan& p, const topology_spec& spec, run_control& control,
                       const run_options& options) {
  // Before any thread of the run starts: they inherit it.
  const scoped_timer_slack slack(std::uint64_t{spec.runtime.timer_slack_us} * 1000);
  const scoped_backoff_sleep_cap sleep_cap(spec.runtime.max_sleep_us);
  const auto start = run_clock::now();
  std::vector<run_stats::phase> phases;
  auto phase_start = start;
  const auto end_phase = [&](const char* name) {
    const auto now = run_clock::now();
    phases.push_back({name, std::chrono::duration<double>(now - phase_start).count()});
    spdlog::debug("phase '{}': {:.3f} s", name, phases.back().seconds);
    phase_start = now;
  };
  run_context run(p, spec, control);
  run.ledger = options.ledger;
  run.replay = options.replay;
  run.first_offsets = options.first_offsets;
  run.resumed = options.resumed;
  std::unique_ptr<checkpointer> checkpoints;
  std::unique_ptr<kernel_executor> executor;
  topic_carrier* carrier = nullptr;  // attached: detached before the topics go
  std::vector<std::thread> threads;
  std::atomic<bool> workers_done{false};
  std::vector<run_progress> timeline;
  std::thread monitor;
  try {
    executor = make_kernel_executor(run, options);
    end_phase("executor");
    run.make_topics(executor->topic_memory_for_run(),
                    [&](std::size_t t, topic_config& config) { executor->configure_topic(t, config); });
    end_phase("topics");
    if (std::any_of(p.topics.begin(), p.topics.end(),
                    [](const planned_topic& t) { return t.bridge_from || !t.bridge_to.empty(); })) {
      XF_EXPECTS(options.carrier != nullptr, "a carrier for the plan's bridged topics");
      std::vector<topic_view> views;
      for (std::size_t t = 0; t < p.topics.size(); ++t) views.push_back(run.view(t));
      options.carrier->attach(views, control);
      carrier = options.carrier;
    }
    run.make_operators();
    run.make_objects();
    run.make_file_cache(executor->cache_memory_for_run(), p.blocks);
    run.start_operators();
    run.objects().writers_started();
    end_phase("operators");
    // The kernel operators are set up and started before any CPU worker runs. On the device, its setup
    // (device replicas, moving device-only topics' frames to the GPU, loading the kernel) used to run
    // after the source had started, so every stream paid it inside its window and its first frames waited
    // for it: C(G)4C, 1 GiB streamed, 57–59 ms → 39–40 ms at 4 MiB fma, 47–48 → 37–38 ms at 64 KiB scale,
    // p99 latency 35–37 → 20–22 ms (H100).
    executor->start(threads);
    end_phase("kernel start");
    start_cpu_workers(run, threads);
    if (options.checkpoint != nullptr) {
      checkpoints = std::make_unique<checkpointer>(run, *options.checkpoint, options.first_offsets);
      checkpoints->start();
    }
    for (const planned_operator& po : p.operators) {
      if (po.in_kernel)
        spdlog::debug("operator '{}' ({}): in the kernel's {} blocks, {} warps each", po.spec->name,
                      po.spec->class_name, po.workers, po.warps);
      else
        spdlog::debug("operator '{}' ({}): {} CPU worker thread{}", po.spec->name, po.spec->class_name,
                      po.workers, po.workers == 1 ? "" : "s");
    }
    if (options.on_progress || options.timeline_interval.count() > 0 || options.on_sample)
      monitor = std::thread([&, executor = executor.get()] {
        monitor_run(run, options, start, workers_done, timeline, executor, carrier);
      });
    executor->watch();
  } catch (const run_error& e) {
    control.fail(e);
  } catch (const std::exception& e) {
    control.fail(run_error(fault_site{}, e.what()));
  }
  for (auto& t : threads) t.join();
  // The bridges outlive the workers: a stream this rank published is carried to its end, one it receives
  // ends when its writer's does.
  const bool transfers_in_flight = carrier != nullptr && carrier->detach();
  end_phase("run");
  workers_done.store(true);
  // The live metrics' last look, once every stream ended (the stats then add what only the end knows):
  // where the run got as far as sampling.
  const bool sampled = options.on_sample && monitor.joinable();
  if (monitor.joinable()) monitor.join();
  if (sampled)
    options.on_sample(sample_run(run, executor.get(), carrier,
                                 std::chrono::duration<double>(run_clock::now() - start).count()));
  if (run.files() != nullptr) run.files()->stop();
  // The last commit of what the sinks finished, before their on_stop closes what make_durable syncs: a
  // failed or interrupted run is resumed from there.
  if (checkpoints) {
    checkpoints->stop();
    checkpoints->commit(false);
  }
  run.stop_operators();
  // A rank whose streams come in over bridges has no source to open its stream window: the first frame a
  // bridge brought in does.
  std::vector<bridge_stats> bridges;
  if (carrier != nullptr) bridges = carrier->stats();
  for (const bridge_stats& b : bridges)
    if (!b.sends && b.first_ns != 0) fetch_min_relaxed(run.stream_first_ns, b.first_ns);
  const std::vector<operator_counters> sinks = executor && !executor->wedged()
                                                   ? finish_kernel_sinks(run, *executor)
                                                   : std::vector<operator_counters>{};
  // Only now is the run known to have completed: the outputs become visible under their names.
  run.commit_operators();
  for (const auto& [name, path] : run.uncommitted_outputs()) {
    if (options.discard_outputs) {
      std::error_code ignored;  // gone already, or never created: nothing to remove
      std::filesystem::remove(path, ignored);
    } else if (run.control().failure() || run.control().draining()) {
      spdlog::warn(
          "operator '{}': the run did not complete, so its output was not renamed: what was "
          "written is in '{}'",
          name, path);
    }
  }
  // Every stream ended, every sink's on_stop succeeded and its output is under its name: nothing is left
  // to resume.
  if (checkpoints && !control.failure() && !control.draining()) checkpoints->commit(true);
  end_phase("finish");
  run_stats stats = build_stats(run, executor.get(), sinks, timeline,
                                std::chrono::duration<double>(run_clock::now() - start).count());
  stats.phases = std::move(phases);
  stats.rank = p.rank;
  stats.ranks = p.ranks;
  stats.bridges = std::move(bridges);
  if (transfers_in_flight) run.leak();
  return stats;
}

}  // namespace xf
