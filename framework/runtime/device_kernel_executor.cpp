// The device executor: the kernel operators run inside the one persistent kernel on the GPU (device_run),
// over topics in managed memory with the run's coherence policies; this thread watches it (completion,
// failures, the watchdog) and feeds the partition tuner. Built with CUDA only; device_kernel_none.cpp
// stands in without it.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "framework/core/cuda_check.hpp"
#include "framework/core/trace.hpp"
#include "framework/core/units.hpp"
#include "framework/gpu/device_cache_memory.hpp"
#include "framework/gpu/device_run.hpp"
#include "framework/gpu/object_replica.hpp"
#include "framework/gpu/um_counters.hpp"
#include "framework/plan/partition_tuner.hpp"
#include "framework/runtime/kernel_executor.hpp"
#include "topics/managed_topic_memory.hpp"

namespace xf {
namespace {

class device_kernel_executor final : public kernel_executor {
 public:
  device_kernel_executor(run_context& run, const run_options& options)
      : run_(run), program_(options.kernel), stop_after_tuning_(options.stop_after_tuning) {
    XF_EXPECTS(program_ != nullptr, "the device executor needs the launcher's kernel_program");
    // This thread makes the run's memory, launches the kernel and watches it: everything it does is on
    // the plan's GPU, and the calls that take no device (cudaMemGetInfo, cudaMalloc, the launch, streams)
    // use the thread's current one. Before any other CUDA call, so no context is made on GPU 0 for nothing.
    const std::uint32_t device = run_.plan_of().device;
    try {
      XF_CUDA_TRY(cudaSetDevice(static_cast<int>(device)));
    } catch (const cuda_error& e) {
      throw run_error(fault_site{}, "cannot run on GPU " + std::to_string(device) + ": " + e.what());
    }
  }
  ~device_kernel_executor() override {
    if (device_ && device_->wedged()) {
      // A hung or faulted kernel still owns the topics' memory and the file cache: freeing them would
      // wait for the kernel. The caller ends the process (run_stats::device_wedged).
      run_.leak();
      (void)device_.release();
    }
  }

  std::unique_ptr<topic_memory> topic_memory_for_run() override;
  void configure_topic(std::size_t t, topic_config& config) const override;
  std::unique_ptr<cache_memory> cache_memory_for_run() override {
    return std::make_unique<device_cache_memory>(static_cast<int>(run_.plan_of().device));
  }
  void start(std::vector<std::thread>& threads) override;
  void watch() override;
  void collect_accumulator(std::uint32_t k, host_kernel_op& sink) override {
    if (!device_) return;
    const std::span<std::byte> host = sink.accumulator();
    const std::uint64_t head = std::min<std::uint64_t>(sink.accumulator_head_bytes(), host.size());
    if (head == 0) {
      device_->copy_accumulator(k, host, 0, host.size());
      return;
    }
    device_->copy_accumulator(k, host, 0, head);
    const std::uint64_t used = std::max(head, sink.accumulator_bytes_used(host.first(head)));
    device_->copy_accumulator(k, host, head, used);
  }
  std::vector<kernel_op_counters> op_counters() override {
    return device_ && !device_->wedged() ? device_->counters() : std::vector<kernel_op_counters>{};
  }
  void collect(run_stats& stats) override;
  fetch_counters fetch_totals() override {
    return device_ && !device_->wedged() && run_.files() != nullptr ? device_->fetch_totals()
                                                                    : fetch_counters{};
  }
  bool wedged() const override { return device_ && device_->wedged(); }
  std::optional<std::chrono::nanoseconds> heartbeat_age() const override {
    return device_ ? device_->heartbeat_age() : std::nullopt;
  }

 private:
  run_context& run_;
  const kernel_program* program_;
  bool stop_after_tuning_;
  std::unique_ptr<um_counters> um_;  // before device_: outlives the kernel's run
  std::unique_ptr<device_run> device_;
  // The auto partitions' controller (partition auto / auto-online), fed from the watch loop.
  std::unique_ptr<partition_tuner> tuner_;
  std::uint32_t partition_switches_ = 0;
};

std::unique_ptr<topic_memory> device_kernel_executor::topic_memory_for_run() {
  const plan& p = run_.plan_of();
  // Never ask for more managed memory than the card has free: the topics' and catalog's managed memory
  // stays within 90% of it, whatever the policies migrate where.
  um_ = std::make_unique<um_counters>(static_cast<int>(p.device));  // before any managed memory exists
  std::size_t free_bytes = 0, total_bytes = 0;
  XF_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  // The copy engines' device replicas (cudaMalloc) come out of the same 90% first.
  std::uint64_t budget = free_bytes / 10 * 9;
  for (const auto& t : p.topics) {
    if (!t.dma) continue;
    const std::uint64_t replica = t.spec->frame_bytes * t.spec->capacity;
    if (replica > budget)
      throw run_error(fault_site{{}, t.spec->name, {}},
                      "the device replica of the topic's frames (" + format_bytes(replica) +
                          ", copied by the copy engines) does not fit in the GPU's free memory (" +
                          format_bytes(budget) + " left of 90% of " + format_bytes(free_bytes) +
                          " free): lower its capacity or frame size, or set its transfer to mapped");
    budget -= replica;
  }
  return std::make_unique<managed_topic_memory>(run_.spec().runtime.coherence, static_cast<int>(p.device),
                                                budget);
}

void device_kernel_executor::configure_topic(std::size_t t, topic_config& config) const {
  const plan& p = run_.plan_of();
  const planned_topic& pt = p.topics[t];
  config.publishers_on_gpu = !pt.publishers.empty() && p.operators[pt.publishers[0]].in_kernel;
  for (std::size_t s : pt.subscribers) config.groups_on_gpu.push_back(p.operators[s].in_kernel);
  config.copy_engines = pt.dma;
}

void device_kernel_executor::start(std::vector<std::thread>&) {
  const plan& p = run_.plan_of();
  if (um_) {
    for (std::size_t t = 0; t < run_.topics().size(); ++t)
      run_.topics()[t].for_each_region([&](void* ptr, std::size_t bytes, topic_layer) {
        um_->add_range(reinterpret_cast<std::uintptr_t>(ptr), bytes, t);
      });
  }
  std::vector<std::vector<std::byte>> params;
  std::vector<std::span<const std::byte>> accumulators;
  std::vector<const host_kernel_op*> operators;
  for (std::size_t k : p.kernel_operators) {
    params.push_back(p.operators[k].entry->make_gpu_params(p.operators[k].spec->params, run_.input_infos(k)));
    accumulators.push_back(run_.instances()[k].kernel->accumulator());
    operators.push_back(run_.instances()[k].kernel.get());
  }
  // Shared objects the kernel reads get their versions in device memory; the kernel polls their tables
  // in (pinned) host memory.
  std::vector<shared::version_table_view> objects;
  run_objects& shared_objects = run_.objects();
  for (std::size_t i = 0; i < shared_objects.size(); ++i) {
    shared::version_table_view v = shared_objects.host_views()[i];
    if (shared_objects.read_in_kernel(i)) {
      auto replica = std::make_unique<cuda_version_replica>(shared_objects.object(i), v.words,
                                                            static_cast<int>(p.device));
      v.words = replica->device_words();
      v.buffers = replica->buffers();
      shared_objects.object(i).attach_replica(std::move(replica));
    }
    objects.push_back(v);
  }
  device_ =
      std::make_unique<device_run>(p, run_.topics(), params, accumulators, operators, *program_,
                                   static_cast<managed_topic_memory&>(run_.memory()),
                                   run_.files() != nullptr ? &run_.kernel_files_of() : nullptr, objects);
  // A file source in the kernel starts the stream with the launch (a CPU source stamps its first publish).
  if (std::any_of(p.kernel_operators.begin(), p.kernel_operators.end(),
                  [&](std::size_t i) { return p.operators[i].inputs.empty(); }))
    fetch_min_relaxed(run_.stream_first_ns, now_ns());
  device_->launch();
}

void device_kernel_executor::watch() {
  const plan& p = run_.plan_of();
  run_control& control = run_.control();
  // Watch the kernel until it ends. A failure elsewhere (a CPU operator, an abort) asks it to stop; its
  // own failures (a failed frame, a CUDA error, a stalled block) fail the run, which unwinds the CPU
  // threads waiting on its topics.
  constexpr auto poll_interval = std::chrono::milliseconds(2);
  // While tuning, the tuner's windows end on these looks: a shorter interval keeps tuning short.
  constexpr auto tuning_poll_interval = std::chrono::microseconds(500);
  const auto run_start = run_clock::now();
  if (is_tuned(run_.spec().runtime.partition)) {
    tuner_settings settings;
    settings.policy = run_.spec().runtime.partition;
    settings.tuning = run_.spec().runtime.tuning;
    settings.block_warps = p.warps_per_block;
    for (std::size_t k : p.kernel_operators) {
      settings.min_warps.push_back(p.operators[k].items);
      settings.initial.push_back(p.operators[k].warps);
    }
    tuner_ = std::make_unique<partition_tuner>(std::move(settings));
  }
  bool stop_sent = false;
  while (true) {
    if (control.draining()) device_->request_drain();  // GPU file sources claim no more (idempotent)
    const device_run::state state = device_->poll();
    if (state == device_run::state::finished) {
      // GPU sinks deliver in the kernel: the stream window ends when it did (to within a poll interval).
      if (std::any_of(p.kernel_operators.begin(), p.kernel_operators.end(),
                      [&](std::size_t i) { return p.operators[i].outputs.empty(); }))
        fetch_max_relaxed(run_.stream_last_ns, now_ns());
      break;
    }
    if (state == device_run::state::failed) {  // the kernel has ended (or is wedged)
      if (device_->error()) control.fail(*device_->error());
      break;
    }
    if (control.aborting() && !stop_sent) {
      device_->request_stop();
      stop_sent = true;
    }
    if (tuner_ && !tuner_->done() && !stop_sent) {
      try {
        const device_run::cost_reading reading = device_->read_costs();
        std::vector<cost_total> totals;
        for (const op_cost& c : reading.ops) totals.push_back({c.cycles, c.items});
        const double now_ms = std::chrono::duration<double, std::milli>(run_clock::now() - run_start).count();
        if (auto warps = tuner_->step(now_ms, totals, reading.adopted)) {
          device_->request_partition(*warps);
          ++partition_switches_;
          if (trace::enabled()) {
            // The switch on the timeline, with the warps each operator gets from now on.
            std::string split;
            for (const std::uint32_t w : *warps) split += (split.empty() ? "" : "/") + std::to_string(w);
            trace::instant(trace::intern("partition " + split, "tuning", "switch"), trace::now_ns(),
                           partition_switches_, true);
          }
        }
      } catch (const std::exception& e) {
        // A CUDA error here is the kernel's too: poll() reports it next; the partition stays as it is.
        spdlog::warn("partition tuning stopped: {}", e.what());
        tuner_ = nullptr;
      }
    }
    if (stop_after_tuning_ && tuner_ && !tuner_->tuning() && !control.draining() &&
        (tuner_->done() || !tuner_->history().empty()))
      control.request_drain();
    if (tuner_ && tuner_->tuning())
      std::this_thread::sleep_for(tuning_poll_interval);
    else
      std::this_thread::sleep_for(poll_interval);
  }
}

void device_kernel_executor::collect(run_stats& stats) {
  if (!device_) return;
  const plan& p = run_.plan_of();
  stats.device_wedged = device_->wedged();
  if (device_->wedged()) return;
  if (um_) {
    if (um_->available()) {
      const std::vector<um_traffic> traffic = um_->stop(stats.topics.size());
      for (std::size_t t = 0; t < stats.topics.size(); ++t) {
        topic_stats& ts = stats.topics[t];
        ts.um_known = true;
        ts.gpu_page_faults = traffic[t].gpu_page_faults;
        ts.cpu_page_faults = traffic[t].cpu_page_faults;
        ts.bytes_to_device = traffic[t].bytes_to_device;
        ts.bytes_to_host = traffic[t].bytes_to_host;
      }
    } else {
      stats.um_note = um_->why();
    }
  }
  for (const auto& b : device_->bridged()) {
    topic_stats& ts = stats.topics[b.topic];
    ts.copied_to = b.to_device ? "device" : "host";
    ts.copies = b.counters.copies;
    ts.copied_bytes = b.counters.bytes;
    ts.skipped_bytes = b.counters.bytes_skipped;
    ts.copy_cuda_calls = b.counters.cuda_calls;
    ts.copy_busy_ns = b.counters.busy_ns;
    ts.copy_choice_wait_ns = b.counters.choice_wait_ns;
  }
  const block_timing t = device_->timing();
  kernel_breakdown k;
  k.subscribe = t.subscribe;
  k.schedule = t.schedule;
  k.compute = t.compute;
  k.publish = t.publish;
  k.fence = t.fence;
  k.fences = t.fences;
  k.placed_warps = t.placed_warps;
  k.computed_items = t.computed_items;
  k.sm_clock_mhz = static_cast<double>(device_->sm_clock_khz()) / 1e3;
  k.idle = t.idle;
  k.rounds = t.rounds;
  k.busy_rounds = t.busy_rounds;
  k.blocks = p.blocks;
  k.warps_per_block = p.warps_per_block;
  stats.kernel = k;

  partition_stats ps;
  ps.policy = std::string(name_of(run_.spec().runtime.partition));
  ps.sm_clock_mhz = static_cast<double>(device_->sm_clock_khz()) / 1e3;
  const double cycles_per_us = ps.sm_clock_mhz > 0 ? ps.sm_clock_mhz : 1;
  ps.busy_round_us = t.busy_rounds ? static_cast<double>(t.subscribe + t.schedule + t.compute + t.publish) /
                                         static_cast<double>(t.busy_rounds) / cycles_per_us
                                   : 0;
  const device_run::cost_reading costs = device_->read_costs();
  for (std::size_t n = 0; n < p.kernel_operators.size(); ++n) {
    const planned_operator& po = p.operators[p.kernel_operators[n]];
    ps.operators.push_back(po.spec->name);
    ps.warps.push_back(device_->partition()[n]);
    ps.items_per_round.push_back(po.items);
    ps.items_per_frame.push_back(po.parts);
    ps.items.push_back(costs.ops[n].items);
    ps.item_us.push_back(costs.ops[n].items ? static_cast<double>(costs.ops[n].cycles) /
                                                  static_cast<double>(costs.ops[n].items) / cycles_per_us
                                            : 0);
    stats.operators[p.kernel_operators[n]].warps = device_->partition()[n];
  }
  ps.switches = partition_switches_;
  if (tuner_) ps.tunings = tuner_->history();
  stats.partition = std::move(ps);
}

}  // namespace

std::unique_ptr<kernel_executor> make_device_kernel_executor(run_context& run, const run_options& options) {
  return std::make_unique<device_kernel_executor>(run, options);
}

}  // namespace xf
