// Running a topology: CPU operator threads, and the GPU operators on the device kernel or host blocks.
#include "framework/runtime/executor.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <condition_variable>
#include <memory>
#include <thread>

#include "framework/core/backoff.hpp"
#include "framework/files/file_cache.hpp"
#include "framework/core/latency_histogram.hpp"
#include "framework/plan/partition_tuner.hpp"
#include "framework/runtime/reference_chain.hpp"
#include "framework/core/units.hpp"
#include "topics/topic.hpp"
#include "topics/topic_driver.hpp"

#if defined(XF_HAVE_CUDA)
#include "framework/core/cuda_check.hpp"
#include "framework/gpu/device_cache_memory.hpp"
#include "framework/gpu/device_run.hpp"
#include "framework/gpu/um_counters.hpp"
#include "topics/managed_topic_memory.hpp"
#endif

namespace xf {
namespace {

using clock_type = std::chrono::steady_clock;

/// The host clock frames are stamped with at their source (index_slot::born_ns).
std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now().time_since_epoch()).count());
}

std::uint64_t ns_since(clock_type::time_point start) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now() - start).count());
}

/// Per-operator counters, updated by its workers (relaxed: only read for stats and progress).
struct live_counters {
  std::atomic<std::uint64_t> frames_in{0}, bytes_in{0}, frames_out{0}, bytes_out{0};
  std::atomic<std::uint64_t> busy_ns{0}, input_wait_ns{0}, blocked_ns{0};
  latency_histogram latency;  ///< sinks: source publish → delivery
};

void add(std::atomic<std::uint64_t>& counter, std::uint64_t value) {
  if (value) counter.fetch_add(value, std::memory_order_relaxed);
}

void fetch_min(std::atomic<std::uint64_t>& word, std::uint64_t value) {
  std::uint64_t seen = word.load(std::memory_order_relaxed);
  while (value < seen && !word.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

void fetch_max(std::atomic<std::uint64_t>& word, std::uint64_t value) {
  std::uint64_t seen = word.load(std::memory_order_relaxed);
  while (value > seen && !word.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

class topology_run {
 public:
  topology_run(const plan& p, const topology_spec& spec, run_control& control)
      : plan_(p), spec_(spec), control_(control), counters_(p.operators.size()) {}
  ~topology_run() {
#if defined(XF_HAVE_CUDA)
    if (device_ && device_->wedged()) {
      // A hung or faulted kernel still owns the topics' memory: freeing it would wait for the kernel.
      // Leak it; the caller ends the process (run_stats::device_wedged).
      (void)new std::vector<topic>(std::move(topics_));
      (void)memory_.release();
      (void)file_cache_.release();  // its pages and table are device memory the kernel still holds
    }
#endif
  }
  topology_run(const topology_run&) = delete;
  topology_run& operator=(const topology_run&) = delete;

  run_stats execute(const run_options& options);

 private:
  // ---- set-up ----
  void make_topics();
  void make_operators();
  /// File readers among the kernel operators: opens every reader's files into one file cache (the
  /// operator's file k is the cache's first_file_[op] + k; device memory on the device executor, host
  /// memory on the host's) and starts its I/O threads.
  void make_file_cache();
  void start_operators();
  void stop_operators();
  void finish_kernel_sinks();

  // ---- workers ----
  void source_worker(std::size_t op);
  void map_worker(std::size_t op);
  void sink_worker(std::size_t op);
  void kernel_block(std::uint32_t block);
  struct reader_lane;
  /// Advances a file reader's frame in block `block` as far as its pages allow.
  /// `ahead_limit`: readahead in that file (run-global id) stops before that page (a file source's run
  /// ends there); none by default.
  struct readahead_limit {
    std::uint32_t file = ~std::uint32_t{0};
    std::uint64_t end_page = 0;
  };
  struct reader_progress {
    bool finished = false;  ///< every stage ran: the output is complete
    bool moved = false;     ///< it found or asked for pages (the block's round was not idle)
  };
  reader_progress advance_reader(std::uint32_t block, std::size_t op, std::uint64_t offset, const frame_in& in,
                                 frame_out& out, reader_lane& r, fetch_counters& counters,
                                 readahead_limit ahead_limit);
  /// Steps of advance_reader, which reports whether they moved.
  bool advance_stages(std::uint32_t block, std::size_t op, std::uint64_t offset, const frame_in& in, frame_out& out,
                      reader_lane& r, fetch_counters& counters, readahead_limit ahead_limit);
  /// Where a file source's run [.., last] ends in its files: the end of the last range its last frame reads.
  readahead_limit run_limit(std::size_t op, std::uint64_t last);
  void collect_file_cache_stats(run_stats& stats);
  /// The topic a file reader's errors name: its input, or a source's output.
  std::size_t reader_topic(std::size_t op) const {
    const planned_operator& po = plan_.operators[op];
    return po.inputs.empty() ? po.outputs.at(0) : po.inputs[0];
  }
  /// Device executor: launches the kernel and watches it until it ends; returns whether it ended well.
  /// Builds the device side (replicas, placement, copy bridge) and launches the kernel.
  void launch_device_kernel(const kernel_program& program);
  /// Polls the launched kernel until it ends, fails or the run aborts.
  void watch_device_kernel();
  void collect_device_stats(run_stats& stats);
  void guarded(std::size_t op, const std::function<void()>& body);

  /// Runs an operator hook; anything it throws becomes a run_error naming operator, topic and offset.
  template <class Hook>
  auto call_hook(std::size_t op, std::size_t topic, std::uint64_t offset, Hook&& hook) -> decltype(hook()) {
    const auto start = clock_type::now();
    try {
      if constexpr (std::is_void_v<decltype(hook())>) {
        hook();
        add(counters_[op].busy_ns, ns_since(start));
      } else {
        auto result = hook();
        add(counters_[op].busy_ns, ns_since(start));
        return result;
      }
    } catch (const run_error&) {
      throw;
    } catch (const run_aborted&) {
      throw;
    } catch (const frame_failed& f) {
      throw run_error(site(op, topic, offset),
                      frame_failed_reason(f.code, plan_.operators[op].entry->info.failure_meaning(f.code)));
    } catch (const std::exception& e) {
      throw run_error(site(op, topic, offset), e.what());
    } catch (...) {
      throw run_error(site(op, topic, offset), "unknown exception");
    }
  }

  fault_site site(std::size_t op, std::size_t topic, std::optional<std::uint64_t> offset) const {
    return fault_site{plan_.operators[op].spec->name, plan_.topics[topic].spec->name, offset};
  }
  const topic_view& view(std::size_t topic) const {
    return topics_[topic].view();
  }

  /// Adds a publisher's backpressure wait to its operator and topic.
  void count_blocked(std::size_t op, std::size_t topic, std::uint64_t ns) {
    add(counters_[op].blocked_ns, ns);
    add(topics_[topic].counters().blocked_ns, ns);
  }
  void count_publish(std::size_t op, std::size_t topic, std::uint64_t bytes) {
    add(counters_[op].frames_out, 1);
    add(counters_[op].bytes_out, bytes);
    add(topics_[topic].counters().frames, 1);
    add(topics_[topic].counters().bytes, bytes);
  }

  const plan& plan_;
  const topology_spec& spec_;
  run_control& control_;
  std::unique_ptr<topic_memory> memory_;
  std::vector<topic> topics_;
  std::vector<operator_instance> instances_;
  std::vector<live_counters> counters_;
  std::vector<operator_counters> sink_counters_;  // GPU sinks' finish(), by operator index
  std::unique_ptr<reference_chain> references_;
  std::vector<bool> started_;
  std::unique_ptr<file_cache> file_cache_;
  std::vector<std::uint32_t> first_file_, file_count_;  // by operator index: its files in the cache
  // File sources in the kernel's blocks, by operator index: frames in the stream, offsets a block claims at
  // once (its run: read in order, so its reads of the file are sequential).
  std::vector<std::uint64_t> source_frames_, source_run_;
  std::mutex fetch_mutex_;
  fetch_counters fetch_totals_;  // the blocks' fetch counters, added as each block ends
  // The stream window: the first frame any source published, the last any sink received (host clock ns).
  std::atomic<std::uint64_t> stream_first_ns_{~std::uint64_t{0}};
  std::atomic<std::uint64_t> stream_last_ns_{0};
#if defined(XF_HAVE_CUDA)
  std::unique_ptr<um_counters> um_;  // before device_: outlives the kernel's run
  device_readers device_readers_;  // what device_ is told of the file cache
  std::unique_ptr<device_run> device_;
  // The auto partitions' controller (device runs with partition auto / auto-online), fed from the watch
  // loop; kept for the stats.
  std::unique_ptr<partition_tuner> tuner_;
  std::uint32_t partition_switches_ = 0;
#endif
  bool stop_after_tuning_ = false;
  // When execute() began: the one clock of the timeline's samples and the tunings' windows, so a plot can
  // put the two side by side.
  clock_type::time_point run_start_ = clock_type::now();
  std::vector<run_progress> timeline_;  // the monitor's samples (run_options::timeline_interval)
};

void topology_run::make_topics() {
  const bool device = plan_.executor == resolved_executor::device;
  if (!device) {
    memory_ = std::make_unique<host_topic_memory>();
  } else {
#if defined(XF_HAVE_CUDA)
    // Never ask for more managed memory than the card has free (HARDWARE.md): the topics' and catalog's
    // managed memory stays within 90% of it, whatever the policies migrate where.
    um_ = std::make_unique<um_counters>();  // enabled before any managed memory exists
    std::size_t free_bytes = 0, total_bytes = 0;
    XF_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
    // The copy engines' device replicas (cudaMalloc) come out of the same 90% first.
    std::uint64_t budget = free_bytes / 10 * 9;
    for (const auto& t : plan_.topics) {
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
    memory_ = std::make_unique<managed_topic_memory>(spec_.runtime.coherence, 0, budget);
#else
    throw run_error(fault_site{}, "the device executor needs a build with CUDA");
#endif
  }
  topics_.reserve(plan_.topics.size());
  for (const auto& t : plan_.topics) {
    topic_config config;
    config.name = t.spec->name;
    config.frame_bytes = t.spec->frame_bytes;
    config.capacity = t.spec->capacity;
    config.groups = static_cast<std::uint32_t>(t.subscribers.size());
    config.publishers = t.publisher_workers;
    if (device) {
      config.publishers_on_gpu = !t.publishers.empty() && plan_.operators[t.publishers[0]].in_kernel;
      for (std::size_t s : t.subscribers) config.groups_on_gpu.push_back(plan_.operators[s].in_kernel);
      config.copy_engines = t.dma;
    }
    try {
      topics_.emplace_back(config, *memory_);
    } catch (const std::exception& e) {
      throw run_error(fault_site{{}, t.spec->name, {}},
                      std::string("cannot allocate the topic: ") + e.what());
    }
#if defined(XF_HAVE_CUDA)
    if (um_)
      topics_.back().for_each_region([&](void* p, std::size_t bytes, topic_layer) {
        um_->add_range(reinterpret_cast<std::uintptr_t>(p), bytes, topics_.size() - 1);
      });
#endif
  }
}

void topology_run::make_operators() {
  instances_.resize(plan_.operators.size());
  for (std::size_t i = 0; i < plan_.operators.size(); ++i) {
    const planned_operator& po = plan_.operators[i];
    try {
      // Kernel operators get their host compute either way: the reference chain replays through it.
      if (po.in_kernel)
        instances_[i].kernel = po.entry->make_host_kernel(po.spec->params);
      else
        instances_[i].cpu = po.entry->make_cpu(po.spec->params);
    } catch (const std::exception& e) {
      throw run_error(fault_site{po.spec->name, {}, {}}, std::string("cannot create: ") + e.what());
    }
  }
}

void topology_run::make_file_cache() {
  std::vector<cache_file> files;
  first_file_.assign(plan_.operators.size(), 0);
  file_count_.assign(plan_.operators.size(), 0);
  for (std::size_t op : plan_.kernel_operators) {
    const host_kernel_op& kernel = *instances_[op].kernel;
    if (!kernel.reads_files()) continue;
    first_file_[op] = static_cast<std::uint32_t>(files.size());
    const file_list list = kernel.files();
    for (const file_list::entry& f : list.entries())
      files.push_back({f.path, site(op, reader_topic(op), std::nullopt), f.advice});
    file_count_[op] = static_cast<std::uint32_t>(files.size()) - first_file_[op];
  }
  source_frames_.assign(plan_.operators.size(), 0);
  source_run_.assign(plan_.operators.size(), 1);
  const bool any_reader = std::any_of(plan_.kernel_operators.begin(), plan_.kernel_operators.end(),
                                      [&](std::size_t op) { return instances_[op].kernel->reads_files(); });
  if (!any_reader) return;
  std::unique_ptr<cache_memory> memory;  // host memory unless the kernel runs on the device
#if defined(XF_HAVE_CUDA)
  if (plan_.executor == resolved_executor::device) memory = std::make_unique<device_cache_memory>();
#endif
  file_cache_ = std::make_unique<file_cache>(
      spec_.runtime.file_cache.value_or(file_cache_spec{}), plan_.blocks, files,
      // A request names its reader by operator index: the plan's on the host executor, the kernel's on
      // the device (kernel_op order).
      [this](std::uint32_t op, std::uint64_t frame_offset) {
        const std::size_t i = plan_.executor == resolved_executor::device ? plan_.kernel_operators.at(op) : op;
        return site(i, reader_topic(i), frame_offset);
      },
      std::chrono::milliseconds(plan_.watchdog_ms), std::move(memory));
  for (std::size_t op : plan_.kernel_operators) {
    const host_kernel_op& kernel = *instances_[op].kernel;
    if (!kernel.is_source()) continue;
    const topic_spec& out = *plan_.topics[plan_.operators[op].outputs[0]].spec;
    // The host's copy of the sizes: on the device executor view() points into device memory.
    source_frames_[op] = kernel.frame_count(file_cache_->sizes().data() + first_file_[op], out.frame_bytes);
    // A run as long as the readahead reaches (a block's misses in a run are sequential, so its requests
    // grow to page + readahead), and no more than the ring's capacity split among 2 x min(blocks, 16) runs:
    // a block whose run lies past the ring's free slots waits for them, so longer runs mean fewer blocks
    // reading at once. Measured on the H100 (file_scan, 4 GiB, 64 KiB frames and pages, page cache;
    // bench/results/h100-2026-11-24-24688a9-source-runs/): a ring of 64 with runs of 1 / 2 / 4 / 8 / 16
    // frames gave 10.2-10.9 / 12.7-13.3 / 10.6-11.1 / 8.7-9.0 / 6.0-6.2 GB/s, a ring of 256 with 4 / 8 / 16
    // 13.8-15.7 / 12.9-14.5 / 13.6-16.4: about 32 blocks reading at once is the knee. (Divided among all
    // the device's 64-264 blocks, as before, runs were one frame and never read ahead.)
    const std::uint64_t readahead = file_cache_->spec().readahead;
    const std::uint64_t runs = 2 * std::min<std::uint64_t>(plan_.blocks, 16);
    source_run_[op] = std::clamp<std::uint64_t>(readahead / out.frame_bytes, 1, std::max<std::uint64_t>(1, out.capacity / runs));
  }
  file_cache_->start();
}

void topology_run::start_operators() {
  started_.assign(plan_.operators.size(), false);
  // The chain holds pointers to the instances; it replays sources only once the run is under way, and
  // start_order starts every source before the verify sinks downstream of it.
  references_ = std::make_unique<reference_chain>(plan_, instances_);
  for (std::size_t i : plan_.start_order) {
    const planned_operator& po = plan_.operators[i];
    if (!instances_[i].cpu) continue;
    operator_setup setup;
    setup.name = po.spec->name;
    setup.threads = po.workers;
    setup.interrupted = &control_.drain_flag();
    auto info = [&](std::size_t t) {
      const topic_spec& ts = *plan_.topics[t].spec;
      return topic_info{ts.name, ts.frame_bytes, ts.capacity, ts.element};
    };
    for (std::size_t t : po.inputs) {
      setup.inputs.push_back(info(t));
      setup.input_references.push_back(references_->for_topic(t));
    }
    for (std::size_t t : po.outputs) setup.outputs.push_back(info(t));
    const std::size_t topic = po.inputs.empty() ? po.outputs.at(0) : po.inputs[0];
    try {
      instances_[i].cpu->on_start(setup);
    } catch (const run_error&) {
      throw;
    } catch (const std::exception& e) {
      throw run_error(site(i, topic, std::nullopt), std::string("on_start failed: ") + e.what());
    }
    started_[i] = true;
  }
}

void topology_run::stop_operators() {
  for (std::size_t i : plan_.start_order) {
    if (!started_.empty() && !started_[i]) continue;
    if (!instances_[i].cpu) continue;
    const planned_operator& po = plan_.operators[i];
    const std::size_t topic = po.inputs.empty() ? po.outputs.at(0) : po.inputs[0];
    try {
      instances_[i].cpu->on_stop();
    } catch (const run_error& e) {
      if (!control_.failure()) control_.fail(e);
    } catch (const std::exception& e) {
      if (!control_.failure()) control_.fail(run_error(site(i, topic, std::nullopt), e.what()));
    }
  }
}

/// GPU sinks' accumulators become their counters once the whole stream was folded in: not after a failed
/// run, nor an interrupted one (its fold is partial). On the device the accumulator is copied out first.
void topology_run::finish_kernel_sinks() {
  if (control_.failure() || control_.draining()) return;
  sink_counters_.resize(plan_.operators.size());
  for (std::size_t k = 0; k < plan_.kernel_operators.size(); ++k) {
    const std::size_t i = plan_.kernel_operators[k];
    const planned_operator& po = plan_.operators[i];
    host_kernel_op* kernel = i < instances_.size() ? instances_[i].kernel.get() : nullptr;
    if (kernel == nullptr || !po.outputs.empty()) continue;
    try {
#if defined(XF_HAVE_CUDA)
      if (device_) device_->copy_accumulator(static_cast<std::uint32_t>(k), kernel->accumulator());
#endif
      sink_counters_[i] = kernel->finish();
    } catch (const run_error& e) {
      control_.fail(e);
    } catch (const std::exception& e) {
      control_.fail(run_error(site(i, po.inputs[0], std::nullopt), std::string("finish failed: ") + e.what()));
    }
  }
}

void topology_run::guarded(std::size_t op, const std::function<void()>& body) {
  try {
    body();
  } catch (const run_aborted&) {
    // Another worker failed or the run was aborted: unwind quietly; the failure is already recorded.
  } catch (const run_error& e) {
    control_.fail(e);
  } catch (const std::exception& e) {
    control_.fail(run_error(fault_site{plan_.operators[op].spec->name, {}, {}}, e.what()));
  }
}

void topology_run::source_worker(std::size_t op) {
  const planned_operator& po = plan_.operators[op];
  const std::size_t out = po.outputs[0];
  const topic_view& v = view(out);
  const std::string& topic_name = plan_.topics[out].spec->name;
  auto* source = static_cast<cpu_source*>(instances_[op].cpu.get());
  const element_type element = plan_.topics[out].spec->element;
  std::uint64_t end = 0;       // one past the last offset this worker published
  std::uint64_t first_ns = 0;  // this worker's first publish (the stream window's start)
  while (!control_.draining()) {
    std::uint64_t blocked = 0;
    const publish_ticket t = reserve_claimed(v, topic_name, control_.abort_flag(), &blocked);
    count_blocked(op, out, blocked);
    frame_out f{t.data, v.frame_bytes, 0, element, t.frame};
    const bool more = call_hook(op, out, t.offset, [&] { return source->produce(t.offset, f); });
    end = t.offset + 1;
    if (!more) {
      publish_void(v, t);
      break;
    }
    if (f.bytes > v.frame_bytes)
      throw run_error(site(op, out, t.offset), "produced " + std::to_string(f.bytes) +
                                                   " bytes into a frame of " + std::to_string(v.frame_bytes));
    const std::uint64_t born = now_ns();
    if (first_ns == 0) first_ns = born;
    publish_frame(v, t, f.bytes, t.offset, born);
    count_publish(op, out, f.bytes);
  }
  v.close(end);
  if (first_ns != 0) fetch_min(stream_first_ns_, first_ns);
}

void topology_run::map_worker(std::size_t op) {
  const planned_operator& po = plan_.operators[op];
  const std::size_t in = po.inputs[0], out = po.outputs[0];
  const std::uint32_t group = po.input_groups[0];
  const topic_view& vi = view(in);
  const topic_view& vo = view(out);
  const std::string& out_name = plan_.topics[out].spec->name;
  auto* map = static_cast<cpu_map*>(instances_[op].cpu.get());
  const element_type in_element = plan_.topics[in].spec->element;
  const element_type out_element = plan_.topics[out].spec->element;
  while (true) {
    std::uint64_t waited = 0, blocked = 0;
    const delivery d = next_frame(vi, group, control_.abort_flag(), &waited);
    add(counters_[op].input_wait_ns, waited);
    if (d.ended) break;
    if (d.is_void()) {
      publish_void(vo, reserve_void_at(vo, d.offset, control_.abort_flag(), &blocked));
      count_blocked(op, out, blocked);
      vi.release(group, d.offset);
      continue;
    }
    const publish_ticket t = reserve_at(vo, out_name, d.offset, control_.abort_flag(), &blocked);
    count_blocked(op, out, blocked);
    add(counters_[op].frames_in, 1);
    add(counters_[op].bytes_in, d.slot->bytes);
    frame_in fi{d.data(vi), d.slot->bytes, in_element};
    frame_out fo{t.data, vo.frame_bytes, d.slot->bytes, out_element};
    call_hook(op, in, d.offset, [&] { map->on_frame(d.offset, fi, fo); });
    if (fo.bytes > vo.frame_bytes)
      throw run_error(
          site(op, out, d.offset),
          "wrote " + std::to_string(fo.bytes) + " bytes into a frame of " + std::to_string(vo.frame_bytes));
    publish_frame(vo, t, fo.bytes, d.slot->tag, d.slot->born_ns);
    vi.release(group, d.offset);
    count_publish(op, out, fo.bytes);
  }
  vo.close(vi.end());
}

void topology_run::sink_worker(std::size_t op) {
  const planned_operator& po = plan_.operators[op];
  const std::size_t in = po.inputs[0];
  const std::uint32_t group = po.input_groups[0];
  const topic_view& vi = view(in);
  auto* sink = static_cast<cpu_sink*>(instances_[op].cpu.get());
  const element_type element = plan_.topics[in].spec->element;
  std::uint64_t last_ns = 0;  // this worker's last delivery (the stream window's end)
  while (true) {
    std::uint64_t waited = 0;
    const delivery d = next_frame(vi, group, control_.abort_flag(), &waited);
    add(counters_[op].input_wait_ns, waited);
    if (d.ended) break;
    if (!d.is_void()) {
      frame_in fi{d.data(vi), d.slot->bytes, element};
      call_hook(op, in, d.offset, [&] { sink->on_frame(d.offset, fi); });
      const std::uint64_t delivered = now_ns();
      last_ns = delivered;
      if (d.slot->born_ns != 0) counters_[op].latency.record(delivered - d.slot->born_ns);
      add(counters_[op].frames_in, 1);
      add(counters_[op].bytes_in, d.slot->bytes);
    }
    vi.release(group, d.offset);
  }
  if (last_ns != 0) fetch_max(stream_last_ns_, last_ns);
}

/// A file reader's frame in one block: the stage it is at, that stage's fetch, and the carry.
struct topology_run::reader_lane {
  std::uint32_t stage = 0;
  bool fetching = false;  ///< the stage's ranges were declared and are being made resident
  fetch_item item;
  std::vector<std::uint32_t> entries;
  std::array<std::byte, frame_task<std::uint32_t>::carry_bytes> carry{};

  void next_frame() {  // keeps the entries' memory
    stage = 0;
    fetching = false;
    carry.fill(std::byte{0});
  }
};

topology_run::reader_progress topology_run::advance_reader(std::uint32_t block, std::size_t op, std::uint64_t offset,
                                                           const frame_in& in, frame_out& out, reader_lane& r,
                                                           fetch_counters& counters, readahead_limit ahead_limit) {
  const fetch_counters before = counters;
  const bool finished = advance_stages(block, op, offset, in, out, r, counters, ahead_limit);
  return {finished, counters.requests != before.requests || counters.hits != before.hits ||
                        counters.ahead_hits != before.ahead_hits};
}

/// True once every stage ran, false while a stage waits for pages.
bool topology_run::advance_stages(std::uint32_t block, std::size_t op, std::uint64_t offset, const frame_in& in,
                                  frame_out& out, reader_lane& r, fetch_counters& counters,
                                  readahead_limit ahead_limit) {
  const planned_operator& po = plan_.operators[op];
  const std::size_t topic = reader_topic(op);
  const host_kernel_op& kernel = *instances_[op].kernel;
  const file_cache_view& v = file_cache_->view();
  const std::uint64_t* sizes = v.file_size + first_file_[op];
  fetch_block& share = file_cache_->block(block);
  inline_moves moves;
  while (true) {
    if (!r.fetching) {
      read_list list;
      const read_step step = call_hook(op, topic, offset, [&] {
        return kernel.reads(in, &out, offset, {nullptr, r.stage, r.carry.data(), sizes}, list);
      });
      if (step == read_step::done) return true;
      list.shift_files(first_file_[op]);
      if (const range_check check = check_ranges(list, v.file_size, first_file_[op], file_count_[op]);
          check.problem != range_problem::none)
        throw file_cache_->files().range_failure(list, check, first_file_[op], file_count_[op], site(op, topic, offset));
      std::uint64_t pages = 0;
      for (std::uint32_t i = 0; i < list.size(); ++i) pages += fetch_item::pages_in(list[i], v.page_shift);
      // A stage holds all its pages at once: more than the block may hold would never resolve.
      const std::uint64_t room = share.global_hand != nullptr ? v.slot_count : share.lra.slot_count;
      if (pages > room)
        throw run_error(site(op, topic, offset),
                        "stage " + std::to_string(r.stage) + " reads " + std::to_string(pages) + " pages of " +
                            format_bytes(v.page_bytes()) + ", more than a block's share of the file cache (" +
                            std::to_string(room) + " pages of " + std::to_string(plan_.blocks) +
                            " blocks): raise runtime.file_cache.size");
      r.entries.resize(pages);
      r.item.begin(list.data(), list.size(), r.entries.data(), v.page_shift);
      r.item.ahead_limit_file = ahead_limit.file;
      r.item.ahead_end_page = ahead_limit.end_page;
      r.fetching = true;
    }
    const fetch_status status = fetch_step(v, share, r.item, static_cast<std::uint32_t>(op), offset, counters, moves);
    if (status == fetch_status::waiting) return false;
    if (status == fetch_status::failed) {
      // The I/O service recorded why (path, byte offset) with this reader's name and offset.
      if (std::optional<run_error> error = file_cache_->poll()) throw *error;
      throw run_error(site(op, topic, offset), "a page stage " + std::to_string(r.stage) + " reads failed to load");
    }
    const file_pages pages = file_pages::paged(&v, &r.item, first_file_[op]);
    const reader_stage reading{&pages, r.stage, r.carry.data(), sizes};
    const std::uint32_t threads = po.warps * 32;
    try {
      call_hook(op, topic, offset, [&] {
        for (std::uint32_t warp = 0; warp < po.warps; ++warp)
          kernel.run(in, &out, offset, warp * 32, warp * 32 + 32, threads, &reading);
      });
    } catch (...) {
      fetch_release(v, r.item);
      throw;
    }
    fetch_release(v, r.item);
    r.fetching = false;
    ++r.stage;
  }
}

topology_run::readahead_limit topology_run::run_limit(std::size_t op, std::uint64_t last) {
  // `reads` is a pure function of (params, input, offset, stage, carry): a source's stage 0 of its run's
  // last frame says where the run ends, whatever the operator's layout of files into frames.
  const host_kernel_op& kernel = *instances_[op].kernel;
  const topic_spec& out = *plan_.topics[plan_.operators[op].outputs[0]].spec;
  const std::uint64_t* sizes = file_cache_->sizes().data() + first_file_[op];
  frame_out frame{nullptr, out.frame_bytes, kernel.frame_bytes(sizes, out.frame_bytes, last), out.element};
  std::byte carry[frame_task<std::uint32_t>::carry_bytes] = {};
  read_list list;
  const read_step step = call_hook(op, reader_topic(op), last, [&] {
    return kernel.reads(frame_in{nullptr, 0, out.element}, &frame, last, {nullptr, 0, carry, sizes}, list);
  });
  if (step == read_step::done || list.size() == 0) return {};
  const file_range& r = list[list.size() - 1];
  const file_cache_view& v = file_cache_->view();
  return {r.file + first_file_[op], (r.offset + r.bytes + v.page_bytes() - 1) >> v.page_shift};
}

/// One host block of the virtualised kernel. Each round, for every kernel operator still running in this
/// block: hold an input offset, and once its frame is published and the output slot is free, run the
/// operator's warps over it (virtual thread ids 0..32·warps-1) and publish at the same offset. Nothing in
/// a round blocks — an operator whose frame is not ready waits for a later round, a file reader whose
/// pages are not resident yet asks for them and comes back — so blocks that feed each other through
/// topics never deadlock, exactly as the GPU kernel's blocks must not.
void topology_run::kernel_block(std::uint32_t block) {
  struct lane {
    std::size_t op = 0;
    std::uint64_t offset = 0;
    bool holding = false;
    bool reserved = false;
    bool done = false;
    std::uint32_t frame = no_frame;  ///< the output frame, once reserved (a reader fills it over rounds)
    std::unique_ptr<reader_lane> reader;
    // File sources: the claimed run of offsets [next, run_end), and one past the last offset published.
    std::uint64_t next = 0, run_end = 0, published_end = 0;
    readahead_limit ahead_limit;
  };
  std::vector<lane> lanes;
  for (std::size_t op : plan_.kernel_operators) {
    lane& l = lanes.emplace_back();
    l.op = op;
    if (instances_[op].kernel->reads_files()) l.reader = std::make_unique<reader_lane>();
  }
  fetch_counters counters;
  struct add_counters {  // into the run's totals however the block ends
    topology_run& run;
    const fetch_counters& c;
    ~add_counters() {
      std::lock_guard lock(run.fetch_mutex_);
      run.fetch_totals_ += c;
    }
  } totals{*this, counters};
  // Reserves the output slot at the lane's offset, with a frame unless the offset is void: false while
  // the slot is not free (backpressure).
  auto reserve = [&](lane& l, std::size_t out, bool with_frame) {
    if (l.reserved) return true;
    const topic_view& vo = view(out);
    if (!vo.slot_free(l.offset)) return false;
    vo.reclaim(l.offset);
    l.reserved = true;
    if (with_frame) {
      l.frame = vo.alloc_frame(l.offset);
      if (l.frame == no_frame)
        throw run_error(site(l.op, out, l.offset), "frame heap exhausted (broken invariant: one frame per slot)");
    }
    return true;
  };
  std::size_t running = lanes.size();
  backoff idle;
  while (running > 0) {
    if (control_.aborting()) throw run_aborted();
    bool progressed = false;
    for (lane& l : lanes) {
      if (l.done) continue;
      const planned_operator& po = plan_.operators[l.op];
      if (po.inputs.empty()) {  // a file source: claims runs of offsets, reads and publishes them in order
        const std::size_t out = po.outputs[0];
        const topic_view& vo = view(out);
        if (!l.holding) {
          if (l.next == l.run_end) {
            const std::uint64_t first = control_.draining() ? source_frames_[l.op] : vo.claim_offsets(source_run_[l.op]);
            if (first >= source_frames_[l.op]) {
              vo.close(l.published_end);
              l.done = true;
              --running;
              progressed = true;
              continue;
            }
            l.next = first;
            l.run_end = std::min(first + source_run_[l.op], source_frames_[l.op]);
            // Readahead ends with the run's last frame: the frames after it are another block's to read.
            l.ahead_limit = run_limit(l.op, l.run_end - 1);
          }
          l.offset = l.next++;
          l.holding = true;
        }
        if (!reserve(l, out, true)) continue;  // backpressure: try again next round
        const host_kernel_op& kernel = *instances_[l.op].kernel;
        const element_type element = plan_.topics[out].spec->element;
        const std::uint64_t bytes =
            kernel.frame_bytes(file_cache_->sizes().data() + first_file_[l.op], vo.frame_bytes, l.offset);
        frame_out fo{vo.frame_data(l.frame), vo.frame_bytes, bytes, element};
        const reader_progress read = advance_reader(block, l.op, l.offset, frame_in{nullptr, 0, element}, fo,
                                                    *l.reader, counters, l.ahead_limit);
        progressed = progressed || read.moved;
        if (!read.finished) continue;
        l.reader->next_frame();
        const std::uint64_t born = now_ns();
        fetch_min(stream_first_ns_, born);
        vo.publish(l.offset, l.frame, bytes, l.offset, 0, born);
        count_publish(l.op, out, bytes);
        l.published_end = l.offset + 1;
        l.holding = l.reserved = false;
        l.frame = no_frame;
        progressed = true;
        continue;
      }
      const std::size_t in = po.inputs[0];
      const topic_view& vi = view(in);
      const std::uint32_t group = po.input_groups[0];
      if (!l.holding) {
        l.offset = vi.take(group);
        l.holding = true;
      }
      const poll_result state = vi.poll(l.offset);
      if (state == poll_result::ended) {
        if (!po.outputs.empty()) view(po.outputs[0]).close(vi.end());
        l.done = true;
        --running;
        progressed = true;
        continue;
      }
      if (state == poll_result::pending) continue;
      const index_slot& slot = vi.slot(l.offset);
      const host_kernel_op& kernel = *instances_[l.op].kernel;
      const std::uint32_t threads = po.warps * 32;
      if (po.outputs.empty()) {  // a GPU sink folds the frame into its accumulator
        if (!(slot.flags & slot_void)) {
          frame_in fi{vi.frame_data(slot.frame), slot.bytes, plan_.topics[in].spec->element};
          call_hook(l.op, in, l.offset, [&] {
            for (std::uint32_t warp = 0; warp < po.warps; ++warp)
              kernel.run(fi, nullptr, l.offset, warp * 32, warp * 32 + 32, threads);
          });
          add(counters_[l.op].frames_in, 1);
          add(counters_[l.op].bytes_in, slot.bytes);
          fetch_max(stream_last_ns_, now_ns());  // a sink's delivery: the stream window's end
        }
        vi.release(group, l.offset);
        l.holding = false;
        progressed = true;
        continue;
      }
      const std::size_t out = po.outputs[0];
      const topic_view& vo = view(out);
      if (!reserve(l, out, !(slot.flags & slot_void))) continue;  // backpressure: try again next round
      if (slot.flags & slot_void) {
        vo.publish_void(l.offset);
      } else {
        const std::uint64_t out_bytes = kernel.output_bytes(slot.bytes);
        frame_in fi{vi.frame_data(slot.frame), slot.bytes, plan_.topics[in].spec->element};
        frame_out fo{vo.frame_data(l.frame), vo.frame_bytes, out_bytes, plan_.topics[out].spec->element};
        if (l.reader) {
          const reader_progress read = advance_reader(block, l.op, l.offset, fi, fo, *l.reader, counters, {});
          progressed = progressed || read.moved;
          if (!read.finished) continue;  // its pages are on their way: next round
          l.reader->next_frame();
        } else {
          call_hook(l.op, in, l.offset, [&] {
            for (std::uint32_t warp = 0; warp < po.warps; ++warp)
              kernel.run(fi, &fo, l.offset, warp * 32, warp * 32 + 32, threads);
          });
        }
        vo.publish(l.offset, l.frame, out_bytes, slot.tag, 0, slot.born_ns);
        add(counters_[l.op].frames_in, 1);
        add(counters_[l.op].bytes_in, slot.bytes);
        count_publish(l.op, out, out_bytes);
      }
      vi.release(group, l.offset);
      l.holding = l.reserved = false;
      l.frame = no_frame;
      progressed = true;
    }
    if (progressed) {
      idle = backoff{};
    } else {
      // Waiting for I/O shows here: a failed read or a hung one (the watchdog) ends the run.
      if (file_cache_)
        if (std::optional<run_error> error = file_cache_->poll()) throw *error;
      idle.pause();
    }
  }
}

run_stats topology_run::execute(const run_options& options) {
  const auto start = clock_type::now();
  run_start_ = start;
  stop_after_tuning_ = options.stop_after_tuning;
  std::vector<std::thread> threads;
  std::atomic<bool> workers_done{false};
  std::thread monitor;
  try {
    make_topics();
    make_operators();
    make_file_cache();
    start_operators();
    const bool on_device = plan_.executor == resolved_executor::device;
    // The device side is allocated, placed and launched before any CPU worker runs. Its setup (device
    // replicas, moving device-only topics' frames to the GPU, loading the kernel) used to run after the
    // source had started, so every stream paid it inside its window and its first frames waited for it:
    // C(G)4C, 1 GiB streamed, 57–59 ms → 39–40 ms at 4 MiB fma, 47–48 → 37–38 ms at 64 KiB scale, p99
    // latency 35–37 → 20–22 ms (H100, 2026-11-23).
    if (on_device) {
      XF_EXPECTS(options.kernel != nullptr, "the device executor needs the launcher's kernel_program");
      launch_device_kernel(*options.kernel);
    }
    for (std::size_t i = 0; i < plan_.operators.size(); ++i) {
      const planned_operator& po = plan_.operators[i];
      if (po.in_kernel) continue;
      for (std::uint32_t w = 0; w < po.workers; ++w) {
        switch (po.entry->info.role) {
          case operator_role::source:
            threads.emplace_back([this, i] { guarded(i, [&] { source_worker(i); }); });
            break;
          case operator_role::map:
            threads.emplace_back([this, i] { guarded(i, [&] { map_worker(i); }); });
            break;
          case operator_role::sink:
            threads.emplace_back([this, i] { guarded(i, [&] { sink_worker(i); }); });
            break;
        }
      }
    }
    if (!plan_.kernel_operators.empty() && !on_device)
      for (std::uint32_t b = 0; b < plan_.blocks; ++b)
        threads.emplace_back([this, b] { guarded(plan_.kernel_operators.front(), [&] { kernel_block(b); }); });
    if (options.on_progress || options.timeline_interval.count() > 0) {
      monitor = std::thread([&] {
        const auto step = options.timeline_interval.count() > 0
                              ? std::min<clock_type::duration>(options.timeline_interval, std::chrono::milliseconds(20))
                              : clock_type::duration(std::chrono::milliseconds(20));
        auto next_progress = clock_type::now() + options.progress_interval;
        auto next_sample = clock_type::now() + options.timeline_interval;
        while (!workers_done.load()) {
          std::this_thread::sleep_for(step);
          if (workers_done.load()) break;
          const auto now = clock_type::now();
          const bool sample = options.timeline_interval.count() > 0 && now >= next_sample;
          const bool report = options.on_progress && now >= next_progress;
          if (!sample && !report) continue;
          run_progress progress;
          progress.elapsed_seconds = std::chrono::duration<double>(now - start).count();
          for (std::size_t i = 0; i < plan_.operators.size(); ++i)
            if (plan_.operators[i].entry->info.role == operator_role::sink) {
              progress.sink_frames += counters_[i].frames_in.load(std::memory_order_relaxed);
              progress.sink_bytes += counters_[i].bytes_in.load(std::memory_order_relaxed);
            }
          if (sample) {
            timeline_.push_back(progress);
            next_sample += options.timeline_interval;
          }
          if (report) {
            options.on_progress(progress);
            next_progress = now + options.progress_interval;
          }
        }
      });
    }
    if (on_device) watch_device_kernel();
  } catch (const run_error& e) {
    control_.fail(e);
  } catch (const std::exception& e) {
    control_.fail(run_error(fault_site{}, e.what()));
  }
  for (auto& t : threads) t.join();
  workers_done.store(true);
  if (monitor.joinable()) monitor.join();
  if (file_cache_) file_cache_->stop();
  stop_operators();
  finish_kernel_sinks();

  run_stats stats;
  stats.topology = spec_.name;
  stats.executor = plan_.executor == resolved_executor::device ? "device (" + plan_.executor_reason + ")"
                                                               : "host (" + plan_.executor_reason + ")";
  stats.wall_seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  for (const run_progress& p : timeline_) stats.timeline.push_back({p.elapsed_seconds, p.sink_frames, p.sink_bytes});
  const std::uint64_t first = stream_first_ns_.load(), last = stream_last_ns_.load();
  if (first != ~std::uint64_t{0} && last > first)
    stats.stream_seconds = static_cast<double>(last - first) / 1e9;
  if (auto failure = control_.failure()) {
    stats.status = "failed";
    stats.error = failure->what();
  } else {
    stats.status = control_.draining() ? "interrupted" : "completed";
  }
  for (std::size_t i = 0; i < plan_.operators.size(); ++i) {
    const planned_operator& po = plan_.operators[i];
    operator_stats o;
    o.name = po.spec->name;
    o.class_name = po.spec->class_name;
    o.placement = std::string(name_of(po.spec->on));
    o.workers = po.workers;
    o.warps = po.warps;
    const live_counters& c = counters_[i];
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
    if (i < instances_.size() && instances_[i].cpu) o.counters = instances_[i].cpu->counters();
    if (i < sink_counters_.size()) o.counters.merge(sink_counters_[i]);
    stats.operators.push_back(std::move(o));
  }
  for (std::size_t t = 0; t < topics_.size(); ++t) {
    topic_stats ts;
    ts.name = topics_[t].name();
    ts.frame_bytes = topics_[t].config().frame_bytes;
    ts.capacity = topics_[t].config().capacity;
    ts.frames = topics_[t].counters().frames.load();
    ts.bytes = topics_[t].counters().bytes.load();
    ts.blocked_ns = topics_[t].counters().blocked_ns.load();
    const std::uint64_t end = topics_[t].view().end();
    ts.end_offset = end == no_offset ? 0 : end;
    stats.topics.push_back(std::move(ts));
  }
  collect_device_stats(stats);
  collect_file_cache_stats(stats);
  return stats;
}

void topology_run::collect_file_cache_stats(run_stats& stats) {
  if (!file_cache_) return;
#if defined(XF_HAVE_CUDA)
  if (device_) fetch_totals_ += device_->fetch_totals();  // the kernel's blocks counted on the device
#endif
  file_cache_stats c;
  c.page_bytes = file_cache_->view().page_bytes();
  c.slots = file_cache_->view().slot_count;
  c.replacement = std::string(name_of(file_cache_->spec().replacement));
  c.hits = fetch_totals_.hits;
  c.misses = fetch_totals_.misses;
  c.waits = fetch_totals_.waits;
  c.requests = fetch_totals_.requests;
  c.no_page = fetch_totals_.no_page;
  c.ahead_pages = fetch_totals_.ahead_pages;
  c.ahead_hits = fetch_totals_.ahead_hits;
  for (const io_thread_stats& t : file_cache_->io_stats()) c.io_threads.push_back({t.requests, t.chunks, t.bytes, t.busy_ns});
  stats.file_cache = std::move(c);
}

void topology_run::launch_device_kernel(const kernel_program& program) {
#if defined(XF_HAVE_CUDA)
  std::vector<std::vector<std::byte>> params;
  std::vector<std::span<const std::byte>> accumulators;
  for (std::size_t k : plan_.kernel_operators) {
    params.push_back(plan_.operators[k].entry->make_gpu_params(plan_.operators[k].spec->params));
    accumulators.push_back(instances_[k].kernel->accumulator());
  }
  if (file_cache_) {
    device_readers_.cache = file_cache_.get();
    device_readers_.first_file = first_file_;
    device_readers_.file_count = file_count_;
    device_readers_.source_frames = source_frames_;
    device_readers_.source_run = source_run_;
  }
  device_ = std::make_unique<device_run>(plan_, topics_, params, accumulators, program,
                                         static_cast<managed_topic_memory&>(*memory_),
                                         file_cache_ ? &device_readers_ : nullptr);
  // A file source in the kernel starts the stream with the launch (a CPU source stamps its first publish).
  if (std::any_of(plan_.kernel_operators.begin(), plan_.kernel_operators.end(),
                  [&](std::size_t i) { return plan_.operators[i].inputs.empty(); }))
    fetch_min(stream_first_ns_, now_ns());
  device_->launch();
#else
  (void)program;
  throw run_error(fault_site{}, "the device executor needs a build with CUDA");
#endif
}

void topology_run::watch_device_kernel() {
#if defined(XF_HAVE_CUDA)
  XF_EXPECTS(device_ != nullptr, "the kernel was launched");
  // Watch the kernel until it ends. A failure elsewhere (a CPU operator, an abort) asks it to stop; its
  // own failures (a failed frame, a CUDA error, a stalled block) fail the run, which unwinds the CPU
  // threads waiting on its topics.
  constexpr auto poll_interval = std::chrono::milliseconds(2);
  // While tuning, the tuner's windows end on these looks: a shorter interval keeps tuning short.
  constexpr auto tuning_poll_interval = std::chrono::microseconds(500);
  if (is_tuned(spec_.runtime.partition)) {
    tuner_settings settings;
    settings.policy = spec_.runtime.partition;
    settings.tuning = spec_.runtime.tuning;
    settings.block_warps = plan_.warps_per_block;
    for (std::size_t k : plan_.kernel_operators) {
      settings.min_warps.push_back(plan_.operators[k].items);
      settings.initial.push_back(plan_.operators[k].warps);
    }
    tuner_ = std::make_unique<partition_tuner>(std::move(settings));
  }
  bool stop_sent = false;
  while (true) {
    if (control_.draining()) device_->request_drain();  // GPU file sources claim no more (idempotent)
    const device_run::state state = device_->poll();
    if (state == device_run::state::finished) {
      // GPU sinks deliver in the kernel: the stream window ends when it did (to within a poll interval).
      const bool kernel_sinks = std::any_of(plan_.kernel_operators.begin(), plan_.kernel_operators.end(),
                                            [&](std::size_t i) { return plan_.operators[i].outputs.empty(); });
      if (kernel_sinks) fetch_max(stream_last_ns_, now_ns());
      break;
    }
    if (state == device_run::state::failed) {  // the kernel has ended (or is wedged)
      if (device_->error()) control_.fail(*device_->error());
      break;
    }
    if (control_.aborting() && !stop_sent) {
      device_->request_stop();
      stop_sent = true;
    }
    if (tuner_ && !tuner_->done() && !stop_sent) {
      try {
        const device_run::cost_reading reading = device_->read_costs();
        std::vector<cost_total> totals;
        for (const op_cost& c : reading.ops) totals.push_back({c.cycles, c.items});
        const double now_ms = std::chrono::duration<double, std::milli>(clock_type::now() - run_start_).count();
        if (auto warps = tuner_->step(now_ms, totals, reading.adopted)) {
          device_->request_partition(*warps);
          ++partition_switches_;
        }
      } catch (const std::exception& e) {
        // A CUDA error here is the kernel's too: poll() reports it next; the partition stays as it is.
        spdlog::warn("partition tuning stopped: {}", e.what());
        tuner_ = nullptr;
      }
    }
    if (stop_after_tuning_ && tuner_ && !tuner_->tuning() && !control_.draining() &&
        (tuner_->done() || !tuner_->history().empty()))
      control_.request_drain();
    if (tuner_ && tuner_->tuning())
      std::this_thread::sleep_for(tuning_poll_interval);
    else
      std::this_thread::sleep_for(poll_interval);
  }
#endif
}

void topology_run::collect_device_stats(run_stats& stats) {
#if defined(XF_HAVE_CUDA)
  if (!device_) return;
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
  try {
    const auto counters = device_->counters();
    for (std::size_t k = 0; k < plan_.kernel_operators.size(); ++k) {
      const std::size_t i = plan_.kernel_operators[k];
      operator_stats& o = stats.operators[i];
      if (!plan_.operators[i].inputs.empty()) {  // a file source's frames are all output
        o.frames_in = counters[k].frames;
        o.bytes_in = counters[k].bytes;
      }
      if (plan_.operators[i].outputs.empty()) continue;  // a GPU sink publishes nothing
      // The kernel counts input bytes; a map with a shorter output (operator.hpp) published that share of
      // them (exact: such maps take frames of whole records).
      const std::uint64_t bytes_out = plan_.operators[i].entry->info.output_bytes(counters[k].bytes);
      o.frames_out = counters[k].frames;
      o.bytes_out = bytes_out;
      topic_stats& out = stats.topics[plan_.operators[i].outputs[0]];
      out.frames += counters[k].frames;
      out.bytes += bytes_out;
    }
    for (const auto& b : device_->bridged()) {
      topic_stats& ts = stats.topics[b.topic];
      ts.copied_to = b.to_device ? "device" : "host";
      ts.copies = b.counters.copies;
      ts.copied_bytes = b.counters.bytes;
      ts.copy_cuda_calls = b.counters.cuda_calls;
      ts.copy_busy_ns = b.counters.busy_ns;
    }
    const block_timing t = device_->timing();
    kernel_breakdown k;
    k.subscribe = t.subscribe;
    k.schedule = t.schedule;
    k.compute = t.compute;
    k.publish = t.publish;
    k.idle = t.idle;
    k.rounds = t.rounds;
    k.busy_rounds = t.busy_rounds;
    k.blocks = plan_.blocks;
    k.warps_per_block = plan_.warps_per_block;
    stats.kernel = k;

    partition_stats ps;
    ps.policy = std::string(name_of(spec_.runtime.partition));
    ps.sm_clock_mhz = static_cast<double>(device_->sm_clock_khz()) / 1e3;
    const double cycles_per_us = ps.sm_clock_mhz > 0 ? ps.sm_clock_mhz : 1;
    ps.busy_round_us = t.busy_rounds ? static_cast<double>(t.subscribe + t.schedule + t.compute + t.publish) /
                                           static_cast<double>(t.busy_rounds) / cycles_per_us
                                     : 0;
    const device_run::cost_reading costs = device_->read_costs();
    for (std::size_t k = 0; k < plan_.kernel_operators.size(); ++k) {
      const planned_operator& po = plan_.operators[plan_.kernel_operators[k]];
      ps.operators.push_back(po.spec->name);
      ps.warps.push_back(device_->partition()[k]);
      ps.items_per_round.push_back(po.items);
      ps.items.push_back(costs.ops[k].items);
      ps.item_us.push_back(costs.ops[k].items ? static_cast<double>(costs.ops[k].cycles) /
                                                    static_cast<double>(costs.ops[k].items) / cycles_per_us
                                              : 0);
      stats.operators[plan_.kernel_operators[k]].warps = device_->partition()[k];
    }
    ps.switches = partition_switches_;
    if (tuner_) ps.tunings = tuner_->history();
    stats.partition = std::move(ps);
  } catch (const std::exception& e) {
    if (stats.error.empty()) {
      stats.status = "failed";
      stats.error = std::string("reading the kernel's counters: ") + e.what();
    }
  }
#else
  (void)stats;
#endif
}

}  // namespace

run_stats run_topology(const plan& p, const topology_spec& spec, run_control& control,
                       const run_options& options) {
  topology_run run(p, spec, control);
  return run.execute(options);
}

}  // namespace xf
