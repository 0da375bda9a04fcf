// The host executor: CPU threads that play the kernel's blocks, driving the same round as the GPU's
// persistent kernel (framework/kernel/round_steps.hpp) over host memory, one thread a block, its lanes in
// turn. The fallback on machines without a GPU, what `--host` selects, and the device's oracle.
#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>

#include "framework/core/backoff.hpp"
#include "framework/core/trace.hpp"
#include "framework/kernel/kernel_table.hpp"
#include "framework/kernel/round_steps.hpp"
#include "framework/runtime/cpu_workers.hpp"
#include "framework/runtime/kernel_executor.hpp"

namespace xf {
namespace {

/// The round's Dispatch over the operators' host compute (host_kernel_op), by kernel operator index.
struct host_dispatch {
  const std::vector<const host_kernel_op*>* ops;
  read_step reads(const kernel_op& op, std::uint32_t k, const frame_call& c, read_list& list) const {
    return (*ops)[k]->reads(c, op.element, list);
  }
  std::uint64_t frame_bytes(const kernel_op&, std::uint32_t k, const frame_call& c) const {
    return (*ops)[k]->frame_bytes(c.file_sizes, c.out_capacity, c.offset);
  }
};

class host_kernel_executor final : public kernel_executor {
 public:
  explicit host_kernel_executor(run_context& run) : run_(run) {}

  std::unique_ptr<topic_memory> topic_memory_for_run() override {
    return std::make_unique<host_topic_memory>();
  }

  void start(std::vector<std::thread>& threads) override {
    const plan& p = run_.plan_of();
    if (p.kernel_operators.empty()) return;
    build_table();
    // A file source in the kernel starts the stream with the blocks (a CPU source stamps its first publish).
    if (std::any_of(p.kernel_operators.begin(), p.kernel_operators.end(),
                    [&](std::size_t i) { return p.operators[i].inputs.empty(); }))
      fetch_min_relaxed(run_.stream_first_ns, now_ns());
    const std::size_t first = p.kernel_operators.front();
    for (std::uint32_t b = 0; b < p.blocks; ++b)
      start_run_thread(threads, fault_site{p.operators[first].spec->name, {}, {}},
                       "host executor's block thread " + std::to_string(b + 1) + " of " +
                           std::to_string(p.blocks) + " (runtime.blocks: " +
                           (run_.spec().runtime.blocks ? std::to_string(run_.spec().runtime.blocks)
                                                       : std::string("one a core")) +
                           ")",
                       [this, b, first] { run_.guarded(first, [&] { block(b); }); });
  }

  std::vector<kernel_op_counters> op_counters() override { return counters_; }
  std::vector<kernel_op_counters> live_op_counters() override {
    std::vector<kernel_op_counters> live(counters_.size());
    for (std::size_t k = 0; k < counters_.size(); ++k) {
      live[k].frames = std::atomic_ref<std::uint64_t>(counters_[k].frames).load(std::memory_order_relaxed);
      live[k].bytes = std::atomic_ref<std::uint64_t>(counters_[k].bytes).load(std::memory_order_relaxed);
    }
    return live;
  }
  void collect(run_stats&) override {}
  fetch_counters fetch_totals() override {
    std::lock_guard lock(fetch_mutex_);
    return fetch_totals_;
  }
  std::optional<fetch_counters> live_fetch_totals() override {
    if (!live_fetch_) return std::nullopt;
    fetch_counters sum;
    for (std::uint32_t b = 0; b < run_.plan_of().blocks; ++b) sum += live_fetch_[b].load();
    return sum;
  }

 private:
  void build_table();
  void block(std::uint32_t b);
  /// After a round in which a lane failed its item (fail_item): the run fails with the recorded fault,
  /// worded as the device's are; every block stops.
  [[noreturn]] void fail_from_record();

  run_context& run_;
  std::vector<const host_kernel_op*> kernels_;  // by kernel operator index
  std::vector<topic_view> views_;
  std::vector<kernel_op> ops_;
  std::vector<std::vector<std::uint32_t>> parts_done_;
  std::vector<kernel_op_counters> counters_;
  std::vector<reader_lane> readers_;
  std::vector<std::uint32_t> reader_entries_;
  // The run's control words, as the kernel's: the abort word (a failed item or the run's abort), the
  // first failure's claim and record, and the drain word file sources read.
  std::uint32_t abort_ = 0, fail_claim_ = 0, drain_ = 0;
  kernel_failure failure_{};
  kernel_args args_{};
  std::once_flag failed_once_;
  std::mutex fetch_mutex_;
  fetch_counters fetch_totals_;
  /// Each block's fetch counters as of its last round, for live metrics: a line a block, written only by
  /// its block (relaxed stores once a round), so the readers' rounds never share a line or wait.
  struct alignas(64) live_fetch {
    std::atomic<std::uint64_t> hits{0}, misses{0}, waits{0}, requests{0}, no_page{0}, ahead_pages{0},
        ahead_hits{0};
    void store(const fetch_counters& c) noexcept {
      hits.store(c.hits, std::memory_order_relaxed);
      misses.store(c.misses, std::memory_order_relaxed);
      waits.store(c.waits, std::memory_order_relaxed);
      requests.store(c.requests, std::memory_order_relaxed);
      no_page.store(c.no_page, std::memory_order_relaxed);
      ahead_pages.store(c.ahead_pages, std::memory_order_relaxed);
      ahead_hits.store(c.ahead_hits, std::memory_order_relaxed);
    }
    fetch_counters load() const noexcept {
      fetch_counters c;
      c.hits = hits.load(std::memory_order_relaxed);
      c.misses = misses.load(std::memory_order_relaxed);
      c.waits = waits.load(std::memory_order_relaxed);
      c.requests = requests.load(std::memory_order_relaxed);
      c.no_page = no_page.load(std::memory_order_relaxed);
      c.ahead_pages = ahead_pages.load(std::memory_order_relaxed);
      c.ahead_hits = ahead_hits.load(std::memory_order_relaxed);
      return c;
    }
  };
  std::unique_ptr<live_fetch[]> live_fetch_;  ///< by block; null without file readers
};

void host_kernel_executor::build_table() {
  const plan& p = run_.plan_of();
  const auto op_count = static_cast<std::uint32_t>(p.kernel_operators.size());
  XF_EXPECTS(op_count <= max_kernel_operators, "at most 32 kernel operators");
  for (const topic& t : run_.topics()) views_.push_back(t.view());
  const kernel_files* files = run_.files() != nullptr ? &run_.kernel_files_of() : nullptr;
  std::uint32_t item_count = 0;
  parts_done_.resize(op_count);
  for (std::uint32_t k = 0; k < op_count; ++k) {
    const std::size_t i = p.kernel_operators[k];
    host_kernel_op* kernel = run_.instances()[i].kernel.get();
    kernels_.push_back(kernel);
    kernel_op op = planned_kernel_op(p, k, files);
    op.type = k;
    // Host memory is local: nothing to stage.
    op.stage = 0;
    op.stage_output = 0;
    if (op.parts > 1) parts_done_[k].assign(views_[op.input].capacity, 0);
    op.parts_done = parts_done_[k].data();
    op.state = kernel->accumulator().empty() ? nullptr : kernel->accumulator().data();
    item_count += op.items;
    ops_.push_back(op);
  }
  XF_EXPECTS(item_count <= max_block_items, "one lane per work item");
  counters_.assign(op_count, kernel_op_counters{});
  args_.topics = views_.data();
  args_.ops = ops_.data();
  args_.op_count = op_count;
  args_.device_abort = &abort_;
  args_.fail_claim = &fail_claim_;
  args_.failure = &failure_;
  args_.counters = counters_.data();
  args_.item_count = item_count;
  args_.poll_skip_max = 0;  // a poll is a local load here: every round
  args_.spread_warps = p.spread_warps ? 1u : 0u;
  args_.drain = &drain_;
  args_.objects = run_.objects().host_views().empty() ? nullptr : run_.objects().host_views().data();
  if (files != nullptr) {
    const file_cache& cache = *files->cache;
    // The most pages one stage may hold: a block's room, and over all lanes at most 64 MiB of entries.
    constexpr std::uint64_t entries_budget = std::uint64_t{64} << 20;
    const std::uint64_t lanes = std::uint64_t{p.blocks} * item_count;
    const std::uint64_t per_lane = std::max<std::uint64_t>(1, entries_budget / sizeof(std::uint32_t) / lanes);
    args_.entries_per_lane =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(cache.block_room(), per_lane));
    args_.block_room = cache.block_room();
    args_.files = cache.view();
    args_.fetch_blocks = cache.blocks();
    readers_.assign(lanes, reader_lane{});
    live_fetch_ = std::make_unique<live_fetch[]>(p.blocks);
    reader_entries_.assign(lanes * args_.entries_per_lane, 0);
    args_.readers = readers_.data();
    args_.reader_entries = reader_entries_.data();
  }
}

void host_kernel_executor::fail_from_record() {
  std::call_once(failed_once_, [&] {
    run_.control().fail(fault_error(failure_, run_.plan_of(),
                                    run_.files() != nullptr ? &run_.kernel_files_of() : nullptr,
                                    run_.plan_of().blocks));
  });
  throw run_aborted();
}

void host_kernel_executor::block(std::uint32_t b) {
  const plan& p = run_.plan_of();
  const kernel_args& a = args_;
  std::vector<lane_state> lanes(a.item_count);
  for (std::uint32_t s = 0; s < a.item_count; ++s) lanes[s] = initial_lane(a, s);
  std::array<std::uint32_t, max_kernel_operators> ops_closed{};
  std::array<bool, max_block_items> publishes{};
  fetch_counters counters;
  struct add_counters {  // into the run's totals however the block ends
    host_kernel_executor& executor;
    const fetch_counters& c;
    ~add_counters() {
      std::lock_guard lock(executor.fetch_mutex_);
      executor.fetch_totals_ += c;
    }
  } totals{*this, counters};
  const host_dispatch dispatch{&kernels_};
  inline_moves moves;
  backoff idle;
  // --trace: one block in trace::sample_every() puts its busy rounds' phases on the timeline (the host
  // has no schedule phase of its own: it is part of subscribe here), at most one every 50 µs, as the
  // kernel's traced blocks do.
  constexpr std::uint64_t trace_gap_ns = 50'000;
  const bool traced = trace::enabled() && b % trace::sample_every() == 0;
  std::uint32_t phase_names[3] = {};
  if (trace::enabled()) trace::name_this_thread("host block " + std::to_string(b), 10 + b);
  if (traced) {
    const char* phases[] = {"subscribe", "compute", "publish"};
    for (int i = 0; i < 3; ++i) phase_names[i] = trace::intern(phases[i], "round", "round");
  }
  std::uint64_t last_traced_ns = 0, traced_rounds = 0;
  for (std::uint64_t round = 0;; ++round) {
    const std::uint64_t round_start = traced ? trace::now_ns() : 0;
    const bool tracing_round = traced && round_start - last_traced_ns >= trace_gap_ns;
    if (run_.control().aborting()) throw run_aborted();
    if (std::atomic_ref<std::uint32_t>(abort_).load(std::memory_order_relaxed) != 0) {
      if (std::atomic_ref<std::uint64_t>(failure_.failed).load(std::memory_order_acquire) != 0)
        fail_from_record();
      throw run_aborted();
    }
    if (run_.control().draining()) std::atomic_ref<std::uint32_t>(drain_).store(1, std::memory_order_relaxed);
    // 1. subscribe
    bool progressed = false;
    for (std::uint32_t s = 0; s < a.item_count; ++s) {
      const std::uint32_t phase = lanes[s].phase;
      subscribe_lane(a, lanes[s], b, s, nullptr, ops_closed.data());
      progressed = progressed || lanes[s].phase != phase;
    }
    // 1b. the file readers' stages
    if (a.readers != nullptr) {
      const fetch_counters before = counters;
      advance_readers(a, lanes.data(), b, dispatch, moves, counters, round);
      live_fetch_[b].store(counters);
      progressed = progressed || counters.requests != before.requests || counters.hits != before.hits ||
                   counters.ahead_hits != before.ahead_hits;
    }
    bool running = false;
    for (const lane_state& l : lanes) {
      running = running || l.phase != lane_done;
      progressed = progressed || l.ready || l.compute;
    }
    if (!running) break;
    const std::uint64_t compute_start = tracing_round ? trace::now_ns() : 0;
    // 3. compute: each item's warps' virtual threads, on this thread.
    std::uint32_t computing = 0;
    for (std::uint32_t s = 0; s < a.item_count; ++s)
      if (lanes[s].compute && lanes[s].item_bytes != 0) computing |= 1u << s;
    place_round_warps(lanes.data(), computing, p.warps_per_block, a.spread_warps != 0);
    for (std::uint32_t s = 0; s < a.item_count; ++s) {
      lane_state& l = lanes[s];
      if (!l.compute || l.item_bytes == 0) continue;
      const kernel_op& op = a.ops[l.op];
      file_pages pages;
      const reader_lane* r = nullptr;
      if (l.reader != reader_none) {
        r = &reader_of(a, b, s);
        pages = file_pages::paged(&a.files, &r->item, op.first_file);
      }
      frame_call call = item_call(a, l, op, r, &pages);
      call.thread_count = l.round_warps * 32;
      call.failure = &l.failure;
      const std::size_t i = p.kernel_operators[l.op];
      try {
        run_.call_hook(i, run_.error_topic(i), call.offset,
                       [&] { kernels_[l.op]->run(call, op.element, 0, call.thread_count); });
      } catch (...) {
        // The pages of a stage stay pinned by nobody once the run ends: give them back first.
        if (r != nullptr) fetch_release(a.files, reader_of(a, b, s).item);
        throw;
      }
    }
    // 4. publish: finish every item, then commit the finished frames with release stores.
    const std::uint64_t publish_start = tracing_round ? trace::now_ns() : 0;
    for (std::uint32_t s = 0; s < a.item_count; ++s) publishes[s] = finish_item(a, lanes[s]);
    for (std::uint32_t s = 0; s < a.item_count; ++s) {
      lane_state& l = lanes[s];
      if (publishes[s]) publish_item(a, l, b, s, publish_order::release);
      if (l.ready && l.failure == 0) retire_item(l);
    }
    if (tracing_round && progressed) {
      const std::uint64_t end = trace::now_ns();
      last_traced_ns = end;
      ++traced_rounds;
      trace::span(phase_names[0], round_start, compute_start, traced_rounds, true);
      trace::span(phase_names[1], compute_start, publish_start, traced_rounds, true);
      trace::span(phase_names[2], publish_start, end, traced_rounds, true);
    }
    if (progressed) {
      idle = backoff{};
    } else {
      // Waiting for I/O shows here: a failed read or a hung one (the watchdog) ends the run.
      if (run_.files() != nullptr)
        if (std::optional<run_error> error = run_.files()->poll()) throw *error;
      idle.pause();
    }
  }
  // GPU sinks deliver in the blocks: the stream window ends when the last block does.
  if (std::any_of(p.kernel_operators.begin(), p.kernel_operators.end(),
                  [&](std::size_t i) { return p.operators[i].outputs.empty(); }))
    fetch_max_relaxed(run_.stream_last_ns, now_ns());
}

}  // namespace

std::unique_ptr<kernel_executor> make_host_kernel_executor(run_context& run) {
  return std::make_unique<host_kernel_executor>(run);
}

std::unique_ptr<kernel_executor> make_kernel_executor(run_context& run, const run_options& options) {
  if (run.plan_of().executor == resolved_executor::device) return make_device_kernel_executor(run, options);
  return make_host_kernel_executor(run);
}

}  // namespace xf
