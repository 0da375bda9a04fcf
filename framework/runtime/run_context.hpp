// What one run of a topology holds, shared by the CPU workers, the kernel executor and the stats: the
// topics and their memory, the operators' instances, their live counters, the file cache of the GPU file
// readers, the stream window, and the one conversion of any exception into a run_error naming operator,
// topic and offset.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "framework/core/fault_injection.hpp"
#include "framework/core/latency_histogram.hpp"
#include "framework/core/trace.hpp"
#include "framework/files/file_cache.hpp"
#include "framework/kernel/kernel_table.hpp"
#include "framework/model/topology_spec.hpp"
#include "framework/plan/plan.hpp"
#include "framework/runtime/frame_ledger.hpp"
#include "framework/runtime/reference_chain.hpp"
#include "framework/runtime/run_control.hpp"
#include "framework/runtime/run_objects.hpp"
#include "topics/topic.hpp"
#include "topics/topic_memory.hpp"

namespace xf {

using run_clock = std::chrono::steady_clock;

/// The host clock frames are stamped with at their source (index_slot::born_ns).
inline std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(run_clock::now().time_since_epoch()).count());
}

/// A run_clock time point as now_ns() gives it.
inline std::uint64_t ns_of(run_clock::time_point t) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}

/// Per-operator counters, updated by its CPU workers (relaxed: only read for stats and progress). The
/// kernel's operators count in the round's kernel_op_counters instead.
struct live_counters {
  std::atomic<std::uint64_t> frames_in{0}, bytes_in{0}, frames_out{0}, bytes_out{0};
  std::atomic<std::uint64_t> busy_ns{0}, input_wait_ns{0}, blocked_ns{0};
  latency_histogram latency;  ///< sinks: source publish → delivery
};

// The counters' updates are inline: a CPU worker makes several per frame, millions of frames a second at
// small frames, where an out-of-line call each is a measurable share of the worker's time.
inline void add_relaxed(std::atomic<std::uint64_t>& counter, std::uint64_t value) {
  if (value) counter.fetch_add(value, std::memory_order_relaxed);
}
inline void fetch_min_relaxed(std::atomic<std::uint64_t>& word, std::uint64_t value) {
  std::uint64_t seen = word.load(std::memory_order_relaxed);
  while (value < seen && !word.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}
inline void fetch_max_relaxed(std::atomic<std::uint64_t>& word, std::uint64_t value) {
  std::uint64_t seen = word.load(std::memory_order_relaxed);
  while (value > seen && !word.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

class run_context {
 public:
  run_context(const plan& p, const topology_spec& spec, run_control& control);
  run_context(const run_context&) = delete;
  run_context& operator=(const run_context&) = delete;

  const plan& plan_of() const noexcept { return plan_; }
  const topology_spec& spec() const noexcept { return spec_; }
  run_control& control() const noexcept { return control_; }

  /// Allocates the topics in `memory` (which the context keeps); `configure` adds what the executor
  /// places where (the device's sides and copy engines).
  template <class Configure>
  void make_topics(std::unique_ptr<topic_memory> memory, Configure&& configure);
  /// Creates every operator: kernel operators get their host compute (the reference chain replays
  /// through it, and the host executor runs it), the others their CPU instance.
  void make_operators();
  /// What every subscriber of topic t reads of a frame, when each is a GPU operator that says (a columnar
  /// topic's page readers: operator.hpp); null when one reads whole frames. Its sources may fill only
  /// that (frame_out::parts). Valid after make_operators.
  const frame_selector* parts_read(std::size_t t) const {
    return t < parts_read_.size() && parts_read_[t] ? &parts_read_[t] : nullptr;
  }
  /// What operator `op` is told of its input topics (its factories bind columnar readers to them).
  std::vector<topic_info> input_infos(std::size_t op) const;
  /// Opens every kernel file reader's files into one file cache over `memory` (device or host memory)
  /// with a share for each of `blocks`, and starts its I/O threads. Nothing without readers.
  void make_file_cache(std::unique_ptr<cache_memory> memory, std::uint32_t blocks);
  /// Makes the topology's shared objects with their version 0 (after make_topics: their writers wait on
  /// their readers' topics).
  void make_objects() { objects_ = std::make_unique<run_objects>(*this); }
  run_objects& objects() noexcept { return *objects_; }
  /// False when the run failed before its objects were made.
  bool has_objects() const noexcept { return objects_ != nullptr; }
  /// Starts the CPU operators (on_start) in the plan's start order, sources before their verify sinks.
  void start_operators();
  /// on_stop of every started CPU operator; a failure there fails the run (if nothing failed before).
  /// Nothing when the run failed before its operators were made.
  void stop_operators();
  /// on_commit of every started CPU operator, once the run completed (nothing failed, nothing drained):
  /// their outputs become visible under their names. A failure fails the run; later ones are not called.
  void commit_operators();
  /// The started CPU operators' outputs left uncommitted (cpu_operator::uncommitted_output): operator
  /// name and path, for the message of a run that failed or was interrupted.
  std::vector<std::pair<std::string, std::string>> uncommitted_outputs() const;

  /// Where a fault happened.
  fault_site site(std::size_t op, std::size_t topic, std::optional<std::uint64_t> offset) const;
  /// The topic an operator's errors name: its input, or a source's output.
  std::size_t error_topic(std::size_t op) const;
  /// The run_error of the exception being handled (call inside a catch): a run_error as it is, an
  /// operator's frame_failed with its code's meaning, anything else with its what(), at `site`.
  run_error current_error(std::size_t op, std::size_t topic, std::optional<std::uint64_t> offset) const;
  /// Runs an operator hook, timing it into the operator's busy time; anything it throws becomes a
  /// run_error naming operator, topic and offset (run_aborted passes through).
  template <class Hook>
  auto call_hook(std::size_t op, std::size_t topic, std::uint64_t offset, Hook&& hook) -> decltype(hook());
  /// An armed cpu_frame fault at operator `op`'s `offset` (fault_injection.hpp) throws as its hook would.
  void throw_injected(std::size_t op, std::uint64_t offset) const;
  /// Runs a worker's body: a failure fails the run; run_aborted (another worker failed) unwinds quietly.
  void guarded(std::size_t op, const std::function<void()>& body);

  const topic_view& view(std::size_t t) const { return topics_[t].view(); }
  void count_blocked(std::size_t op, std::size_t topic, std::uint64_t ns) {
    add_relaxed(counters_[op].blocked_ns, ns);
    add_relaxed(topics_[topic].counters().blocked_ns, ns);
  }
  void count_publish(std::size_t op, std::size_t topic, std::uint64_t bytes) {
    add_relaxed(counters_[op].frames_out, 1);
    add_relaxed(counters_[op].bytes_out, bytes);
    add_relaxed(topics_[topic].counters().frames, 1);
    add_relaxed(topics_[topic].counters().bytes, bytes);
  }

  std::vector<topic>& topics() noexcept { return topics_; }
  topic_memory& memory() noexcept { return *memory_; }
  std::vector<operator_instance>& instances() noexcept { return instances_; }
  std::vector<live_counters>& counters() noexcept { return counters_; }
  file_cache* files() noexcept { return kernel_files_.cache; }
  const kernel_files& kernel_files_of() const noexcept { return kernel_files_; }

  /// The stream window: the first frame any source published (or, on a rank fed by bridges, any bridge
  /// brought in), the last any sink received (host ns).
  std::atomic<std::uint64_t> stream_first_ns{~std::uint64_t{0}};
  std::atomic<std::uint64_t> stream_last_ns{0};
  /// Non-null: what every CPU subscriber receives is recorded here (run_options::ledger).
  frame_ledger* ledger = nullptr;
  /// Non-null: a ranked run's whole topology, whose chains the verify sinks replay (run_options::replay).
  const plan* replay = nullptr;
  /// A resumed run: each topic's first offset (run_options::first_offsets); empty: every stream from 0.
  std::vector<std::uint64_t> first_offsets;
  bool resumed = false;
  /// The first offset of topic t's stream.
  std::uint64_t first_offset(std::size_t t) const { return t < first_offsets.size() ? first_offsets[t] : 0; }
  /// Detaches the topics, their memory and the file cache without freeing them: a wedged GPU kernel still
  /// owns them (freeing would wait for it). The caller ends the process.
  void leak() noexcept;

 private:
  const plan& plan_;
  const topology_spec& spec_;
  run_control& control_;
  std::unique_ptr<topic_memory> memory_;
  std::vector<topic> topics_;
  std::vector<operator_instance> instances_;
  std::vector<frame_selector> parts_read_;  ///< by topic
  std::vector<live_counters> counters_;
  /// Each operator's name on the trace's timeline; empty when the run is not traced.
  std::vector<std::uint32_t> trace_names_;
  std::unique_ptr<reference_chain> references_;
  std::unique_ptr<whole_topology_replay> whole_replay_;
  std::vector<bool> started_;
  std::unique_ptr<file_cache> file_cache_;
  std::unique_ptr<run_objects> objects_;
  kernel_files kernel_files_;
};

template <class Configure>
void run_context::make_topics(std::unique_ptr<topic_memory> memory, Configure&& configure) {
  memory_ = std::move(memory);
  topics_.reserve(plan_.topics.size());
  for (std::size_t t = 0; t < plan_.topics.size(); ++t) {
    const planned_topic& pt = plan_.topics[t];
    topic_config config;
    config.name = pt.spec->name;
    config.frame_bytes = pt.spec->frame_bytes;
    config.capacity = pt.spec->capacity;
    config.groups = pt.groups();
    config.publishers = pt.publisher_workers;
    config.first_offset = first_offset(t);
    // A kernel operator that splits frames takes offset · parts + part from its group's cursor.
    for (std::size_t s : pt.subscribers)
      config.group_items_per_offset.push_back(plan_.operators[s].in_kernel ? plan_.operators[s].parts : 1);
    configure(t, config);
    try {
      if (inject::armed(inject::site::topic_alloc) && inject::fires(inject::site::topic_alloc, t, t + 1))
        throw std::bad_alloc();
      topics_.emplace_back(config, *memory_);
    } catch (const std::exception& e) {
      throw run_error(fault_site{{}, pt.spec->name, {}},
                      std::string("cannot allocate the topic: ") + e.what());
    }
  }
}

template <class Hook>
auto run_context::call_hook(std::size_t op, std::size_t topic, std::uint64_t offset, Hook&& hook)
    -> decltype(hook()) {
  const auto start = run_clock::now();
  // One frame in trace::sample_every() on the trace's timeline; every frame an NVTX range (a no-op call
  // unless Nsight Systems listens).
  const bool traced = !trace_names_.empty() && offset % trace::sample_every() == 0;
  trace::nvtx_push(plan_.operators[op].spec->name.c_str());
  const auto busy = [&] {
    const auto end = run_clock::now();
    trace::nvtx_pop();
    add_relaxed(counters_[op].busy_ns,
                static_cast<std::uint64_t>(
                    std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count()));
    if (traced) trace::span(trace_names_[op], ns_of(start), ns_of(end), offset, true);
  };
  try {
    if (inject::armed(inject::site::cpu_frame)) throw_injected(op, offset);
    if constexpr (std::is_void_v<decltype(hook())>) {
      hook();
      busy();
    } else {
      auto result = hook();
      busy();
      return result;
    }
  } catch (const run_aborted&) {
    trace::nvtx_pop();
    throw;
  } catch (...) {
    trace::nvtx_pop();
    throw current_error(op, topic, offset);
  }
}

}  // namespace xf
