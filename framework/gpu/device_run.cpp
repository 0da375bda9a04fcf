// The host side of a virtualised-kernel run: catalog, control words, launch, and the watchdog.
#include "framework/gpu/device_run.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <sstream>
#include <thread>

#include "framework/core/trace.hpp"
#include "framework/core/units.hpp"
#include "framework/model/pages_read.hpp"

namespace xf {
namespace {

/// How often each block stores its heartbeat. A millisecond keeps the PCIe traffic of heartbeats negligible
/// while the watchdog reacts well within a second.
constexpr std::uint32_t report_interval_ns = 1'000'000;
/// Most rounds a lane whose input lags lets pass between two polls of it (each poll is a PCIe read), and
/// the longest sleep of a block with nothing to run. Measured on the H100 (4 KiB frames, 4 source
/// threads): skips of 0–16 rounds streamed 18–19 GB/s alike, while a late look at a published frame
/// holds back the whole window (the publisher waits for its oldest offset): so short backoffs.
constexpr std::uint32_t poll_skip_max = 4;
constexpr std::uint32_t idle_sleep_max_ns = 1024;
/// How often a block adds its measured round times to the totals the host reads (a few device atomics):
/// a tuner's window of a few milliseconds then misses at most this much of each block's work at its end.
constexpr std::uint32_t cost_flush_interval_ns = 200'000;
constexpr std::size_t params_alignment = 16;
/// How long the watchdog waits for its copy of the lane snapshots before dumping without them.
constexpr auto snapshot_copy_timeout = std::chrono::seconds(2);

std::string_view phase_name(std::uint32_t phase) {
  switch (phase) {
    case lane_idle:
      return "idle";
    case lane_wait_input:
      return "waiting for its input frame";
    case lane_wait_output:
      return "input ready, waiting for its output slot";
    case lane_done:
      return "done";
    case lane_running:
      return "running the operator on it";
    case lane_reading:
      return "reading its files (stages fetched and computed)";
    case lane_wait_version:
      return "input ready, waiting for a shared object's writer to make its version final";
  }
  return "?";
}

/// What the kernel's subscribers of topic t read of each frame, when every one of them says (a columnar
/// topic's page readers): the union of their parts. Empty when one reads whole frames.
frame_selector gpu_pages_read(const plan& p, std::size_t t,
                              const std::vector<const host_kernel_op*>& operators) {
  std::vector<const host_kernel_op*> readers;
  for (std::size_t k = 0; k < p.kernel_operators.size(); ++k) {
    const planned_operator& po = p.operators[p.kernel_operators[k]];
    if (std::find(po.inputs.begin(), po.inputs.end(), t) == po.inputs.end()) continue;
    if (k >= operators.size() || operators[k] == nullptr || !operators[k]->reads_pages()) return {};
    readers.push_back(operators[k]);
  }
  return pages_read_by(std::move(readers), p.index_rest);
}

template <class T>
T load_acquire_host(T& word) {
  return std::atomic_ref<T>(word).load(std::memory_order_acquire);
}

}  // namespace

device_run::device_run(const plan& p, std::vector<topic>& topics,
                       const std::vector<std::vector<std::byte>>& params,
                       const std::vector<std::span<const std::byte>>& accumulators,
                       const std::vector<const host_kernel_op*>& operators, const kernel_program& program,
                       managed_topic_memory& memory, const kernel_files* readers,
                       std::span<const shared::version_table_view> objects)
    : plan_(p),
      device_(static_cast<int>(p.device)),
      program_(program),
      blocks_(p.blocks),
      threads_(p.warps_per_block * 32),
      watchdog_(p.watchdog_ms),
      memory_(memory),
      readers_(readers) {
  const auto op_count = static_cast<std::uint32_t>(p.kernel_operators.size());
  XF_EXPECTS(op_count >= 1 && op_count <= max_kernel_operators, "1 to 32 kernel operators");
  XF_EXPECTS(params.size() == op_count, "one params blob per kernel operator");
  XF_EXPECTS(accumulators.size() == op_count, "one accumulator per kernel operator");
  // Everything below, and the launch and the watchdog's calls after it, are on the plan's GPU through this
  // thread's current device (cudaMalloc, streams and the launch take none).
  XF_CUDA_TRY(cudaSetDevice(device_));

  auto catalog = [&](std::size_t bytes) {
    void* ptr = memory_.allocate(bytes, topic_layer::catalog, memory_side::device);
    catalog_.push_back({ptr, bytes});
    return ptr;
  };

  // Parameter arena: each operator's params struct at a 16-byte aligned offset.
  std::vector<std::uint64_t> params_offsets;
  std::size_t arena_bytes = 0;
  for (const auto& blob : params) {
    params_offsets.push_back(arena_bytes);
    arena_bytes += (blob.size() + params_alignment - 1) / params_alignment * params_alignment;
  }
  auto* arena = static_cast<std::byte*>(catalog(std::max<std::size_t>(arena_bytes, params_alignment)));
  for (std::uint32_t k = 0; k < op_count; ++k)
    if (!params[k].empty()) std::memcpy(arena + params_offsets[k], params[k].data(), params[k].size());

  // The copy engines' bridge: the kernel sees each dma topic's device replica and the bridge's seq words.
  std::vector<copy_bridge::route> routes;
  for (std::size_t t = 0; t < p.topics.size(); ++t)
    if (p.topics[t].dma)
      routes.push_back({t, p.topics[t].dma_to_device,
                        p.topics[t].dma_to_device ? gpu_pages_read(p, t, operators) : frame_selector{}});
  bridge_ = std::make_unique<copy_bridge>(topics, std::move(routes), device_);
  auto* views = static_cast<topic_view*>(catalog(sizeof(topic_view) * topics.size()));
  for (std::size_t t = 0; t < topics.size(); ++t)
    views[t] = bridge_->routes(t) ? bridge_->kernel_view(t) : topics[t].view();

  // The shared objects' version tables (their words and buffers are where the caller put them).
  if (!objects.empty()) {
    auto* tables = static_cast<shared::version_table_view*>(
        catalog(sizeof(shared::version_table_view) * objects.size()));
    std::copy(objects.begin(), objects.end(), tables);
    args_.objects = tables;
  }

  // Operator table, staging areas and part counters.
  auto* ops = static_cast<kernel_op*>(catalog(sizeof(kernel_op) * op_count));
  std::uint64_t scratch_per_block = 0;
  std::uint32_t first_warp = 0;
  std::uint32_t item_count = 0;
  parts_done_.reserve(op_count);
  accumulators_.reserve(op_count);
  for (std::uint32_t k = 0; k < op_count; ++k) {
    const planned_operator& po = p.operators[p.kernel_operators[k]];
    const auto type = program.index_of(*po.entry->gpu_type);
    if (!type)
      throw run_error(fault_site{po.spec->name, {}, {}},
                      "class '" + po.spec->class_name +
                          "' is registered but not compiled into this launcher's GPU kernel (add its type to "
                          "the launcher's gpu_operator_list)");
    kernel_op& op = ops[k];
    op = planned_kernel_op(p, k, readers_);
    op.type = *type;
    XF_EXPECTS(po.outputs.empty() == !accumulators[k].empty(), "GPU sinks, and only they, accumulate");
    first_warp += po.warps;
    item_count += po.items;
    op.params_offset = params_offsets[k];
    if (po.stage) {
      op.stage_offset = scratch_per_block;
      scratch_per_block += op.stage_stride * po.items;
    }
    if (po.stage_output) {
      op.stage_output_offset = scratch_per_block;
      scratch_per_block += op.stage_stride * po.items;
    }
    parts_done_.emplace_back(po.parts > 1 ? p.topics[po.inputs[0]].spec->capacity : 0);
    op.parts_done = parts_done_.back().get();
    accumulators_.emplace_back(accumulators[k].size());
    // The fold starts from the host's prepared accumulator; one its operator did not prepare is zero, as
    // the device buffer already is (a projection's room for rows is large).
    const bool prepared =
        k >= operators.size() || operators[k] == nullptr || operators[k]->accumulator_prepared();
    if (!accumulators[k].empty() && prepared)
      XF_CUDA_TRY(cudaMemcpy(accumulators_.back().get(), accumulators[k].data(), accumulators[k].size(),
                             cudaMemcpyHostToDevice));
    op.state = accumulators_.back().get();
  }
  XF_EXPECTS(first_warp <= p.warps_per_block, "the partition fits the block");
  XF_EXPECTS(item_count <= max_block_items, "one leader-warp lane per work item");
  set_up_readers(ops, item_count);

  stop_word_ = pinned_buffer<std::uint32_t>(1);
  *stop_word_.get() = 1;
  failure_ = pinned_buffer<kernel_failure>(1);
  heartbeats_ = pinned_buffer<block_heartbeat>(blocks_);
  snapshots_ = device_buffer<lane_snapshot>(blocks_);
  snapshot_copy_ = pinned_buffer<lane_snapshot>(blocks_);
  device_words_ = device_buffer<std::uint32_t>(3);
  timings_ = device_buffer<block_timing>(blocks_);
  counters_ = device_buffer<kernel_op_counters>(op_count);
  // The plan's partition is generation 0 (both buffers, so a stale read cannot see zeros).
  partition_source_ = pinned_buffer<partition_control>(1);
  for (std::uint32_t k = 0; k < op_count; ++k) {
    const std::uint32_t w = p.operators[p.kernel_operators[k]].warps;
    partition_source_.get()->warps[0][k] = partition_source_.get()->warps[1][k] = w;
    partition_.push_back(w);
  }
  partition_control_ = device_buffer<partition_control>(1);
  XF_CUDA_TRY(cudaMemcpy(partition_control_.get(), partition_source_.get(), sizeof(partition_control),
                         cudaMemcpyHostToDevice));
  block_generation_ = device_buffer<std::uint32_t>(blocks_);
  block_generation_copy_ = pinned_buffer<std::uint32_t>(blocks_);
  costs_ = device_buffer<op_cost>(op_count);
  costs_copy_ = pinned_buffer<op_cost>(op_count);
  {
    int khz = 0;
    XF_CUDA_TRY(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device_));
    sm_clock_khz_ = static_cast<std::uint64_t>(khz);
  }
  scratch_ = device_buffer<std::byte>(scratch_per_block * blocks_);
  stream_ = std::make_unique<cuda_stream>();
  side_stream_ = std::make_unique<cuda_stream>();

  args_.topics = views;
  args_.ops = ops;
  args_.params = arena;
  args_.op_count = op_count;
  args_.report_interval_ns = report_interval_ns;
  args_.device_abort = device_words_.get();
  args_.fail_claim = device_words_.get() + 1;
  args_.failure = failure_.get();
  args_.heartbeats = heartbeats_.get();
  args_.snapshots = snapshots_.get();
  args_.timings = timings_.get();
  args_.counters = counters_.get();
  args_.scratch = scratch_.get();
  args_.scratch_per_block = scratch_per_block;
  args_.item_count = item_count;
  args_.poll_skip_max = poll_skip_max;
  args_.spread_warps = p.spread_warps ? 1u : 0u;
  args_.idle_sleep_max_ns = idle_sleep_max_ns;
  args_.partition = partition_control_.get();
  args_.block_generation = block_generation_.get();
  args_.costs = costs_.get();
  args_.cost_flush_interval_ns = cost_flush_interval_ns;
  args_.drain = device_words_.get() + 2;
  if (trace::enabled()) {
    // One block in trace::sample_every() traced, each keeping a ring the host drains every few ms.
    constexpr std::uint32_t ring = 4096;
    constexpr std::uint32_t gap_ns = 50'000;
    const std::uint32_t every = trace::sample_every();
    const std::uint32_t traced = (blocks_ + every - 1) / every;
    trace_rounds_ = pinned_buffer<round_record>(std::uint64_t{traced} * ring);
    trace_clock_ = pinned_buffer<std::uint64_t>(1);
    args_.trace_rounds = trace_rounds_.get();
    args_.trace_clock = trace_clock_.get();
    args_.trace_every = every;
    args_.trace_ring = ring;
    args_.trace_gap_ns = gap_ns;
    trace_taken_.assign(traced, 0);
    for (std::uint32_t i = 0; i < traced; ++i)
      trace_tracks_.push_back(
          trace::new_track("GPU " + std::to_string(device_) + " block " + std::to_string(i * every), 10 + i));
    const char* phases[] = {"subscribe", "schedule", "compute", "publish"};
    for (int i = 0; i < 4; ++i) trace_phase_names_[i] = trace::intern(phases[i], "round", "round");
    trace_overrun_name_ = trace::intern("rounds lost (the host drained too late)", "round", "rounds");
  }

  // Device-placed topic regions and the catalog's read-only replica go to the GPU before the launch.
  memory_.settle();
  last_beat_.assign(blocks_, 0);
}

device_run::~device_run() {
  if (wedged_) {
    // A hung or faulted kernel: freeing would wait for it (or fail). The process is about to end.
    stop_word_.leak();
    failure_.leak();
    trace_rounds_.leak();
    trace_clock_.leak();
    heartbeats_.leak();
    snapshots_.leak();
    snapshot_copy_.leak();
    device_words_.leak();
    timings_.leak();
    counters_.leak();
    partition_control_.leak();
    partition_source_.leak();
    block_generation_.leak();
    block_generation_copy_.leak();
    costs_.leak();
    costs_copy_.leak();
    for (auto& b : parts_done_) b.leak();
    for (auto& b : accumulators_) b.leak();
    scratch_.leak();
    reader_lanes_.leak();
    reader_entries_.leak();
    fetch_totals_.leak();
    if (stream_) stream_->leak();
    if (side_stream_) side_stream_->leak();
    if (bridge_) bridge_->leak();
    return;
  }
  if (launched_ && !finished_) {
    request_stop();
    cuda_ok(cudaStreamSynchronize(stream_->get()));
  }
  if (bridge_) bridge_->stop();
  for (const auto& c : catalog_) memory_.deallocate(c.p, c.bytes, topic_layer::catalog);
}

void device_run::launch() {
  trace_launch_ns_ = trace::now_ns();
  program_.launch(args_, blocks_, threads_, stream_->get());
  launched_ = true;
  bridge_->start();
  beat_seen_.assign(blocks_, std::chrono::steady_clock::now());
}

void device_run::request_stop() noexcept {
  if (stop_requested_ || !side_stream_) return;
  stop_requested_ = true;
  // The bridge waits for frames nobody will publish any more: it ends with the run.
  if (bridge_) bridge_->stop();
  // Not a memset: that may run as a kernel, which would wait for this one to end.
  cuda_ok(cudaMemcpyAsync(device_words_.get(), stop_word_.get(), sizeof(std::uint32_t),
                          cudaMemcpyHostToDevice, side_stream_->get()));
}

void device_run::request_drain() noexcept {
  if (drain_requested_ || !side_stream_) return;
  drain_requested_ = true;
  cuda_ok(cudaMemcpyAsync(device_words_.get() + 2, stop_word_.get(), sizeof(std::uint32_t),
                          cudaMemcpyHostToDevice, side_stream_->get()));
}

void device_run::set_up_readers(kernel_op* ops, std::uint32_t item_count) {
  bool any = false;
  for (std::uint32_t k = 0; k < plan_.kernel_operators.size(); ++k) any = any || ops[k].reader != reader_none;
  if (!any) return;
  const file_cache& cache = *readers_->cache;
  XF_EXPECTS(cache.block_count() == blocks_, "a file cache share per block");
  // The most pages one stage may hold: a block's room, and over all lanes at most 64 MiB of entries.
  constexpr std::uint64_t entries_budget = std::uint64_t{64} << 20;
  const std::uint64_t lanes = std::uint64_t{blocks_} * item_count;
  const std::uint64_t per_lane = std::max<std::uint64_t>(1, entries_budget / sizeof(std::uint32_t) / lanes);
  args_.entries_per_lane = static_cast<std::uint32_t>(std::min<std::uint64_t>(cache.block_room(), per_lane));
  args_.block_room = cache.block_room();
  args_.files = cache.view();
  args_.fetch_blocks = cache.blocks();
  reader_lanes_ = device_buffer<reader_lane>(lanes);  // zero: no run claimed, no stage started
  reader_entries_ = device_buffer<std::uint32_t>(lanes * args_.entries_per_lane);
  fetch_totals_ = device_buffer<fetch_counters>(blocks_);
  args_.readers = reader_lanes_.get();
  args_.reader_entries = reader_entries_.get();
  args_.fetch_totals = fetch_totals_.get();
}

std::uint32_t device_run::request_partition(const std::vector<std::uint32_t>& warps) {
  XF_EXPECTS(warps.size() == partition_.size(), "one warp count per kernel operator");
  std::uint32_t total = 0;
  for (std::size_t k = 0; k < warps.size(); ++k) {
    const planned_operator& po = plan_.operators[plan_.kernel_operators[k]];
    XF_EXPECTS(warps[k] >= po.items, "at least one warp per work item");
    total += warps[k];
  }
  XF_EXPECTS(total <= plan_.warps_per_block, "the partition fits the block");
  const std::uint32_t next = generation_ + 1;
  partition_control& source = *partition_source_.get();
  for (std::size_t k = 0; k < warps.size(); ++k) source.warps[next % 2][k] = warps[k];
  source.generation = next;
  // The warps first; the generation in a later copy on the same stream, so a block that sees it finds them.
  XF_CUDA_TRY(cudaMemcpyAsync(&partition_control_.get()->warps[next % 2], &source.warps[next % 2],
                              sizeof(source.warps[0]), cudaMemcpyHostToDevice, side_stream_->get()));
  XF_CUDA_TRY(cudaMemcpyAsync(&partition_control_.get()->generation, &source.generation,
                              sizeof(source.generation), cudaMemcpyHostToDevice, side_stream_->get()));
  XF_CUDA_TRY(cudaStreamSynchronize(side_stream_->get()));
  generation_ = next;
  partition_ = warps;
  return next;
}

device_run::cost_reading device_run::read_costs() {
  XF_CUDA_TRY(cudaMemcpyAsync(costs_copy_.get(), costs_.get(), sizeof(op_cost) * costs_.size(),
                              cudaMemcpyDeviceToHost, side_stream_->get()));
  XF_CUDA_TRY(cudaMemcpyAsync(block_generation_copy_.get(), block_generation_.get(),
                              sizeof(std::uint32_t) * blocks_, cudaMemcpyDeviceToHost, side_stream_->get()));
  XF_CUDA_TRY(cudaStreamSynchronize(side_stream_->get()));
  cost_reading r;
  r.ops.assign(costs_copy_.get(), costs_copy_.get() + costs_.size());
  r.adopted = true;
  for (std::uint32_t b = 0; b < blocks_; ++b) {
    const bool exited = load_acquire_host(heartbeats_.get()[b].beat) == ~std::uint64_t{0};
    if (block_generation_copy_.get()[b] != generation_ && !exited) r.adopted = false;
  }
  return r;
}

void device_run::drain_trace() {
  if (trace_taken_.empty()) return;
  if (!trace_calibrated_) {
    // Block 0's clock at its start happened between the launch and now: the middle is the host's guess.
    const std::uint64_t kernel_start = load_acquire_host(*trace_clock_.get());
    if (kernel_start == 0) return;
    const std::uint64_t seen = trace::now_ns();
    trace_offset_ns_ = static_cast<std::int64_t>(trace_launch_ns_ + (seen - trace_launch_ns_) / 2) -
                       static_cast<std::int64_t>(kernel_start);
    trace_calibrated_ = true;
  }
  const std::uint32_t ring = args_.trace_ring;
  const auto host = [&](std::uint64_t kernel_ns) {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(kernel_ns) + trace_offset_ns_);
  };
  for (std::size_t i = 0; i < trace_taken_.size(); ++i) {
    round_record* block_ring = trace_rounds_.get() + i * ring;
    for (;;) {
      const std::uint64_t want = trace_taken_[i] + 1;
      round_record& slot = block_ring[(want - 1) % ring];
      const std::uint64_t round = load_acquire_host(slot.round);
      if (round < want) break;  // not written yet
      if (round > want) {
        // The ring went round before the host came: the rounds in between are gone.
        trace::instant(trace_overrun_name_, host(slot.subscribe_ns), round - want, true, trace_tracks_[i]);
        trace_taken_[i] = round - 1;
        continue;
      }
      const round_record r = slot;
      trace_taken_[i] = want;
      const std::uint64_t t[5] = {r.subscribe_ns, r.schedule_ns, r.compute_ns, r.publish_ns, r.end_ns};
      bool ordered = r.round == want;
      for (int k = 1; k < 5; ++k) ordered = ordered && t[k] >= t[k - 1];
      if (!ordered) continue;  // caught while the kernel was writing it
      for (int k = 0; k < 4; ++k)
        trace::span(trace_phase_names_[k], host(t[k]), host(t[k + 1]), want, true, trace_tracks_[i]);
    }
  }
}

device_run::state device_run::poll() {
  if (finished_) return error_ ? state::failed : state::finished;
  if (!trace_taken_.empty()) {
    const auto now = std::chrono::steady_clock::now();
    if (now - trace_drained_ >= std::chrono::milliseconds(2)) {
      trace_drained_ = now;
      drain_trace();
    }
  }
  // A failure the kernel reported (the kernel then winds down by itself).
  kernel_failure& f = *failure_.get();
  if (!error_ && load_acquire_host(f.failed) != 0) error_ = fault_error(f, plan_, readers_, blocks_);
  // A read that failed or hung (the I/O watchdog): the readers waiting for it would loop for ever.
  if (!error_ && readers_ != nullptr && readers_->cache != nullptr) {
    if (std::optional<run_error> io = readers_->cache->poll()) {
      error_ = std::move(io);
      request_stop();
    }
  }
  // A bridge that failed stops the kernel like a failed frame does.
  if (!error_ && bridge_->finished() && bridge_->error()) {
    error_ = bridge_->error();
    request_stop();
  }
  const cudaError_t status = kernel_done_ ? cudaSuccess : cudaStreamQuery(stream_->get());
  if (status == cudaSuccess) {
    kernel_done_ = true;
    stalest_beat_ns_.store(0, std::memory_order_relaxed);
    // The kernel has published its last frame; the bridge may still be copying the last ones out.
    if (!error_ && !bridge_->finished()) return state::running;
    if (!error_ && bridge_->error()) error_ = bridge_->error();
    finished_ = true;
    drain_trace();  // the rounds since the last drain
    return error_ ? state::failed : state::finished;
  }
  if (status != cudaErrorNotReady) {
    cudaGetLastError();
    wedged_ = true;
    finished_ = true;
    error_ = run_error(fault_site{}, "the GPU kernel failed: " + describe_cuda_error(status) +
                                         " (the device context is lost; run compute-sanitizer to find the "
                                         "faulting access)");
    return state::failed;
  }
  // Watchdog: a block whose heartbeat did not move for the whole watchdog period has stopped looping.
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::uint32_t> stalled;
  std::optional<std::chrono::steady_clock::time_point> stalest;
  for (std::uint32_t b = 0; b < blocks_; ++b) {
    const std::uint64_t beat = load_acquire_host(heartbeats_.get()[b].beat);
    if (beat == ~std::uint64_t{0}) continue;  // exited
    if (beat != last_beat_[b]) {
      last_beat_[b] = beat;
      beat_seen_[b] = now;
    } else if (now - beat_seen_[b] > watchdog_) {
      stalled.push_back(b);
    }
    stalest = stalest ? std::min(*stalest, beat_seen_[b]) : beat_seen_[b];
  }
  stalest_beat_ns_.store(
      stalest ? std::chrono::duration_cast<std::chrono::nanoseconds>(stalest->time_since_epoch()).count() : 0,
      std::memory_order_relaxed);
  if (!stalled.empty()) {
    wedged_ = true;
    finished_ = true;
    request_stop();
    error_ =
        run_error(fault_site{}, "the GPU kernel stopped making progress: " + std::to_string(stalled.size()) +
                                    " of " + std::to_string(blocks_) + " blocks showed no heartbeat for " +
                                    std::to_string(watchdog_.count()) + " ms (runtime.watchdog_ms)\n" +
                                    describe_blocks(stalled));
    return state::failed;
  }
  return state::running;
}

std::optional<std::chrono::nanoseconds> device_run::heartbeat_age() const noexcept {
  const std::int64_t at = stalest_beat_ns_.load(std::memory_order_relaxed);
  if (at == 0) return std::nullopt;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch()) -
         std::chrono::nanoseconds(at);
}

const lane_snapshot* device_run::read_snapshots(std::string& why_not) {
  // The kernel's stream is busy for good; the copy engines serve a second stream beside it.
  const cudaError_t copy =
      cudaMemcpyAsync(snapshot_copy_.get(), snapshots_.get(), sizeof(lane_snapshot) * blocks_,
                      cudaMemcpyDeviceToHost, side_stream_->get());
  if (copy != cudaSuccess) {
    why_not = describe_cuda_error(copy);
    return nullptr;
  }
  const auto deadline = std::chrono::steady_clock::now() + snapshot_copy_timeout;
  while (true) {
    const cudaError_t status = cudaStreamQuery(side_stream_->get());
    if (status == cudaSuccess) return snapshot_copy_.get();
    if (status != cudaErrorNotReady) {
      why_not = describe_cuda_error(status);
      return nullptr;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      why_not = "the copy from device memory did not finish";
      return nullptr;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::string device_run::describe_blocks(const std::vector<std::uint32_t>& stalled) {
  constexpr std::size_t shown = 8;
  std::string why_not;
  const lane_snapshot* snapshots = read_snapshots(why_not);
  std::ostringstream out;
  out << "per-block state (stalled blocks" << (stalled.size() > shown ? ", first 8" : "") << "):";
  if (snapshots == nullptr) out << " work items unknown: " << why_not;
  for (std::size_t i = 0; i < std::min(shown, stalled.size()); ++i) {
    const std::uint32_t b = stalled[i];
    if (snapshots == nullptr) {
      out << "\n  block " << b << ": " << heartbeats_.get()[b].rounds << " rounds at its last heartbeat";
      continue;
    }
    const lane_snapshot& r = snapshots[b];
    out << "\n  block " << b << ": " << r.rounds << " rounds";
    std::uint32_t lane = 0;
    for (std::uint32_t k = 0; k < args_.op_count; ++k) {
      const planned_operator& po = plan_.operators[plan_.kernel_operators[k]];
      for (std::uint32_t j = 0; j < po.items; ++j, ++lane) {
        out << "\n    " << po.spec->name;
        if (po.items > 1) out << " (item " << j + 1 << " of " << po.items << ")";
        out << ": ";
        const std::uint32_t phase = r.phase[lane];
        if (phase == lane_idle || phase == lane_done) {
          out << phase_name(phase);
          continue;
        }
        out << "offset " << r.item[lane] / po.parts;
        if (po.parts > 1) out << " part " << r.item[lane] % po.parts << "/" << po.parts;
        out << " of '" << plan_.topics[fault_topic(plan_, k)].spec->name << "', " << phase_name(phase);
      }
    }
  }
  return out.str();
}

std::vector<device_run::bridged_topic> device_run::bridged() const {
  std::vector<bridged_topic> out;
  const std::vector<bridge_counters> counters = bridge_->counters();
  for (std::size_t i = 0; i < counters.size(); ++i)
    out.push_back({bridge_->routes()[i].topic, bridge_->routes()[i].to_device, counters[i]});
  return out;
}

std::vector<kernel_op_counters> device_run::counters() const {
  std::vector<kernel_op_counters> host(args_.op_count);
  if (finished_ && !wedged_)
    XF_CUDA_TRY(cudaMemcpy(host.data(), counters_.get(), sizeof(kernel_op_counters) * host.size(),
                           cudaMemcpyDeviceToHost));
  return host;
}

void device_run::copy_accumulator(std::uint32_t k, std::span<std::byte> host, std::uint64_t from,
                                  std::uint64_t to) const {
  XF_EXPECTS(finished_ && !wedged_, "the kernel finished");
  XF_EXPECTS(k < accumulators_.size() && host.size() == accumulators_[k].size(), "the accumulator's size");
  XF_EXPECTS(from <= to && to <= host.size(), "a range of the accumulator");
  if (to > from)
    XF_CUDA_TRY(
        cudaMemcpy(host.data() + from, accumulators_[k].get() + from, to - from, cudaMemcpyDeviceToHost));
}

fetch_counters device_run::fetch_totals() const {
  fetch_counters sum;
  if (!finished_ || wedged_ || fetch_totals_.size() == 0) return sum;
  std::vector<fetch_counters> all(blocks_);
  XF_CUDA_TRY(cudaMemcpy(all.data(), fetch_totals_.get(), sizeof(fetch_counters) * all.size(),
                         cudaMemcpyDeviceToHost));
  for (const fetch_counters& c : all) sum += c;
  return sum;
}

block_timing device_run::timing() const {
  block_timing sum{};
  if (!finished_ || wedged_) return sum;
  std::vector<block_timing> all(blocks_);
  XF_CUDA_TRY(
      cudaMemcpy(all.data(), timings_.get(), sizeof(block_timing) * all.size(), cudaMemcpyDeviceToHost));
  for (const auto& t : all) {
    sum.subscribe += t.subscribe;
    sum.schedule += t.schedule;
    sum.compute += t.compute;
    sum.publish += t.publish;
    sum.idle += t.idle;
    sum.rounds += t.rounds;
    sum.busy_rounds += t.busy_rounds;
    sum.fence += t.fence;
    sum.fences += t.fences;
    sum.placed_warps += t.placed_warps;
    sum.computed_items += t.computed_items;
  }
  return sum;
}

}  // namespace xf
