// The run's stats from its counters.
#include "framework/runtime/stats_builder.hpp"

#include <algorithm>

#include "framework/runtime/provenance.hpp"
#include "topics/columnar_layout.hpp"

namespace xf {
namespace {

/// The kernel operators' frames and bytes, from the round's counters (kernel order): a map's input and
/// output, a sink's input, a file source's output.
void add_kernel_counters(run_stats& stats, const plan& p, const std::vector<kernel_op_counters>& counters) {
  for (std::size_t k = 0; k < counters.size() && k < p.kernel_operators.size(); ++k) {
    const std::size_t i = p.kernel_operators[k];
    operator_stats& o = stats.operators[i];
    if (!p.operators[i].inputs.empty()) {  // a file source's frames are all output
      o.frames_in = counters[k].frames;
      o.bytes_in = counters[k].bytes;
    }
    if (p.operators[i].outputs.empty()) continue;  // a GPU sink publishes nothing
    // The round counts input bytes; a map with an output share (operator.hpp) published that share of
    // them (exact: such maps take frames of whole records).
    const std::uint64_t bytes_out = p.operators[i].output.of(counters[k].bytes);
    o.frames_out = counters[k].frames;
    o.bytes_out = bytes_out;
    topic_stats& out = stats.topics[p.operators[i].outputs[0]];
    out.frames += counters[k].frames;
    out.bytes += bytes_out;
  }
}

/// Each columnar topic's pages per column, summed over its page readers' counters (operator.hpp:
/// page_reader).
void add_column_pages(run_stats& stats, const plan& p) {
  for (std::size_t i = 0; i < p.operators.size() && i < stats.operators.size(); ++i) {
    const planned_operator& po = p.operators[i];
    if (!po.entry->info.reads_columnar || po.inputs.empty()) continue;
    std::vector<topic_stats::column_pages>& columns = stats.topics[po.inputs[0]].columns;
    for (const auto& [key, value] : stats.operators[i].counters) {
      const bool skipped = key.rfind("pages_skipped.", 0) == 0;
      if (!skipped && key.rfind("pages.", 0) != 0) continue;
      const std::string column = key.substr(key.find('.') + 1);
      auto it =
          std::find_if(columns.begin(), columns.end(), [&](const auto& c) { return c.column == column; });
      if (it == columns.end()) it = columns.insert(columns.end(), {column, 0, 0, 0});
      (skipped ? it->pages_skipped : it->pages) += value;
    }
  }
  for (topic_stats& t : stats.topics)
    for (auto& c : t.columns) c.bytes_skipped = c.pages_skipped * columnar_page_bytes;
}

void add_file_cache(run_stats& stats, file_cache& cache, const fetch_counters& totals) {
  file_cache_stats c;
  c.page_bytes = cache.view().page_bytes();
  c.slots = cache.view().slot_count;
  c.replacement = std::string(name_of(cache.spec().replacement));
  c.hits = totals.hits;
  c.misses = totals.misses;
  c.waits = totals.waits;
  c.requests = totals.requests;
  c.no_page = totals.no_page;
  c.ahead_pages = totals.ahead_pages;
  c.ahead_hits = totals.ahead_hits;
  for (const io_thread_stats& t : cache.io_stats())
    c.io_threads.push_back({t.requests, t.chunks, t.bytes, t.busy_ns});
  stats.file_cache = std::move(c);
}

}  // namespace

run_stats build_stats(run_context& run, kernel_executor* executor,
                      const std::vector<operator_counters>& sink_counters,
                      const std::vector<run_progress>& timeline, double wall_seconds) {
  const plan& p = run.plan_of();
  run_control& control = run.control();
  run_stats stats;
  stats.topology = run.spec().name;
  stats.executor = p.executor == resolved_executor::device ? "device (" + p.executor_reason + ")"
                                                           : "host (" + p.executor_reason + ")";
  if (p.executor == resolved_executor::device) stats.gpu = p.device;
  stats.provenance = collect_provenance(stats.gpu);
  stats.wall_seconds = wall_seconds;
  for (const run_progress& s : timeline)
    stats.timeline.push_back({s.elapsed_seconds, s.sink_frames, s.sink_bytes});
  const std::uint64_t first = run.stream_first_ns.load(), last = run.stream_last_ns.load();
  if (first != ~std::uint64_t{0} && last > first)
    stats.stream_seconds = static_cast<double>(last - first) / 1e9;
  if (auto failure = control.failure()) {
    stats.status = run_status::failed;
    stats.error = failure->what();
  } else {
    stats.status = control.draining() ? run_status::interrupted : run_status::completed;
  }
  for (std::size_t i = 0; i < p.operators.size(); ++i) {
    const planned_operator& po = p.operators[i];
    operator_stats o;
    o.name = po.spec->name;
    o.class_name = po.spec->class_name;
    o.placement = std::string(name_of(po.spec->on));
    o.workers = po.workers;
    o.warps = po.warps;
    const live_counters& c = run.counters()[i];
    o.frames_in = c.frames_in.load();
    o.bytes_in = c.bytes_in.load();
    o.frames_out = c.frames_out.load();
    o.bytes_out = c.bytes_out.load();
    o.busy_ns = c.busy_ns.load();
    o.input_wait_ns = c.input_wait_ns.load();
    o.blocked_ns = c.blocked_ns.load();
    o.latency_frames = c.latency.count();
    o.latency_p50_ns = c.latency.percentile(0.50);
    o.latency_p99_ns = c.latency.percentile(0.99);
    if (i < run.instances().size() && run.instances()[i].cpu) o.counters = run.instances()[i].cpu->counters();
    if (i < sink_counters.size()) o.counters.merge(operator_counters(sink_counters[i]));
    stats.operators.push_back(std::move(o));
  }
  for (std::size_t t = 0; t < run.topics().size(); ++t) {
    topic& tp = run.topics()[t];
    topic_stats ts;
    ts.name = tp.name();
    ts.frame_bytes = tp.config().frame_bytes;
    ts.capacity = tp.config().capacity;
    ts.frames = tp.counters().frames.load();
    ts.bytes = tp.counters().bytes.load();
    ts.blocked_ns = tp.counters().blocked_ns.load();
    const std::uint64_t end = tp.view().end();
    ts.end_offset = end == no_offset ? 0 : end;
    stats.topics.push_back(std::move(ts));
  }
  add_column_pages(stats, p);
  if (run.has_objects()) stats.objects = run.objects().stats();
  if (executor != nullptr && !executor->wedged()) {
    try {
      add_kernel_counters(stats, p, executor->op_counters());
      if (run.files() != nullptr) add_file_cache(stats, *run.files(), executor->fetch_totals());
      executor->collect(stats);
    } catch (const std::exception& e) {
      if (stats.error.empty()) {
        stats.status = run_status::failed;
        stats.error = std::string("reading the kernel's counters: ") + e.what();
      }
    }
  }
  if (executor != nullptr && executor->wedged()) stats.device_wedged = true;
  return stats;
}

}  // namespace xf
