// The live metrics' sampler.
#include "framework/runtime/run_sampler.hpp"

#include <algorithm>

#include "framework/runtime/kernel_executor.hpp"
#include "framework/runtime/topic_carrier.hpp"

namespace xf {
namespace {

/// The names of topic t's subscriber groups: the subscribing operator's (with "#2", "#3", … when one
/// operator subscribes more than once), then the bridges'.
std::vector<std::string> group_names(const plan& p, std::size_t t) {
  const planned_topic& pt = p.topics[t];
  std::vector<std::string> names;
  for (std::size_t g = 0; g < pt.subscribers.size(); ++g) {
    const std::string& name = p.operators[pt.subscribers[g]].spec->name;
    const auto seen = std::count(pt.subscribers.begin(),
                                 pt.subscribers.begin() + static_cast<std::ptrdiff_t>(g), pt.subscribers[g]);
    names.push_back(seen == 0 ? name : name + "#" + std::to_string(seen + 1));
  }
  for (const std::uint32_t rank : pt.bridge_to) names.push_back("bridge to rank " + std::to_string(rank));
  return names;
}

void sample_topic(const topic& tp, const planned_topic& pt, std::vector<std::string> names,
                  run_sample::topic_sample& out) {
  // The index lives in device memory when every party is a GPU operator on the device: the host never
  // polls it, and a look from here would pull its pages across PCIe under the kernel.
  const topic_config& config = tp.config();
  bool on_device = config.publishers_on_gpu;
  for (std::uint32_t g = 0; g < config.groups; ++g)
    on_device = on_device && g < config.groups_on_gpu.size() && config.groups_on_gpu[g];
  out.index_sampled = !on_device;
  if (on_device) return;
  // Published first, released after: the released marks only grow meanwhile, so no lag exceeds the
  // capacity (topic::released_mark).
  const std::uint64_t published = tp.published_mark();
  std::uint64_t slowest = published;
  for (std::uint32_t g = 0; g < config.groups && g < pt.groups(); ++g) {
    const std::uint64_t released = std::min(published, tp.released_mark(g));
    slowest = std::min(slowest, released);
    out.groups.push_back({std::move(names[g]), published - released});
  }
  out.occupancy = published - slowest;
}

}  // namespace

run_sample sample_run(run_context& run, kernel_executor* executor, const topic_carrier* carrier,
                      double elapsed_seconds) {
  const plan& p = run.plan_of();
  run_sample s;
  s.elapsed_seconds = elapsed_seconds;
  s.draining = run.control().draining();
  if (const std::optional<run_error> failure = run.control().failure()) s.failure = failure->what();
  const std::vector<kernel_op_counters> kernel =
      executor != nullptr ? executor->live_op_counters() : std::vector<kernel_op_counters>{};

  s.topics.resize(run.topics().size());
  for (std::size_t t = 0; t < run.topics().size(); ++t) {
    const topic& tp = run.topics()[t];
    run_sample::topic_sample& ts = s.topics[t];
    ts.name = tp.name();
    ts.capacity = tp.config().capacity;
    ts.frames = tp.counters().frames.load(std::memory_order_relaxed);
    ts.bytes = tp.counters().bytes.load(std::memory_order_relaxed);
    ts.blocked_ns = tp.counters().blocked_ns.load(std::memory_order_relaxed);
    sample_topic(tp, p.topics[t], group_names(p, t), ts);
  }

  s.operators.reserve(p.operators.size());
  for (std::size_t i = 0; i < p.operators.size(); ++i) {
    const planned_operator& po = p.operators[i];
    const live_counters& c = run.counters()[i];
    run_sample::operator_sample& o = s.operators.emplace_back();
    o.name = po.spec->name;
    o.role = std::string(name_of(po.entry->info.role));
    o.kernel = po.in_kernel;
    o.frames_in = c.frames_in.load(std::memory_order_relaxed);
    o.bytes_in = c.bytes_in.load(std::memory_order_relaxed);
    o.frames_out = c.frames_out.load(std::memory_order_relaxed);
    o.bytes_out = c.bytes_out.load(std::memory_order_relaxed);
    o.busy_ns = c.busy_ns.load(std::memory_order_relaxed);
    o.input_wait_ns = c.input_wait_ns.load(std::memory_order_relaxed);
    o.blocked_ns = c.blocked_ns.load(std::memory_order_relaxed);
    if (po.in_kernel) {
      // As the stats count them (stats_builder.cpp): the round's frames and input bytes, a map's output
      // its share of those, published on its output topic.
      o.frames_live = po.kernel_index < kernel.size();
      if (o.frames_live) {
        const kernel_op_counters& k = kernel[po.kernel_index];
        if (!po.inputs.empty()) {
          o.frames_in = k.frames;
          o.bytes_in = k.bytes;
        }
        if (!po.outputs.empty()) {
          o.frames_out = k.frames;
          o.bytes_out = po.output.of(k.bytes);
          s.topics[po.outputs[0]].frames += o.frames_out;
          s.topics[po.outputs[0]].bytes += o.bytes_out;
        }
      }
    } else if (po.entry->info.role == operator_role::sink) {
      o.latency.resize(latency_histogram::buckets);
      for (std::size_t b = 0; b < latency_histogram::buckets; ++b) o.latency[b] = c.latency.bucket(b);
    }
  }

  if (executor != nullptr) {
    if (run.files() != nullptr) s.file_cache = executor->live_fetch_totals();
    if (const std::optional<std::chrono::nanoseconds> age = executor->heartbeat_age())
      s.kernel_heartbeat = run_sample::heartbeat{std::chrono::duration<double>(*age).count(),
                                                 static_cast<double>(p.watchdog_ms) / 2e3};
  }
  if (carrier != nullptr) s.bridges = carrier->live_stats();
  return s;
}

}  // namespace xf
