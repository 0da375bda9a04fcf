// What a run did, per operator and per topic: the final stats table and its JSON form.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/model/operator.hpp"
#include "framework/plan/partition_tuner.hpp"
#include "framework/runtime/provenance.hpp"
#include "framework/runtime/topic_carrier.hpp"
#include "framework/shared/versioned_object.hpp"

namespace xf {

struct operator_stats {
  std::string name;
  std::string class_name;
  std::string placement;      ///< "cpu", or "gpu" for kernel operators
  std::uint32_t workers = 0;  ///< threads, or blocks for kernel operators
  std::uint32_t warps = 0;    ///< kernel operators: warps per block
  std::uint64_t frames_in = 0, bytes_in = 0;
  std::uint64_t frames_out = 0, bytes_out = 0;
  std::uint64_t busy_ns = 0;        ///< summed over workers: inside the operator's own code
  std::uint64_t input_wait_ns = 0;  ///< summed over workers: waiting for an input frame
  std::uint64_t blocked_ns = 0;     ///< summed over workers: waiting for a free output slot (backpressure)
  /// Sinks: per-frame latency from the source's publish to this sink's delivery.
  std::uint64_t latency_frames = 0;
  std::uint64_t latency_p50_ns = 0, latency_p99_ns = 0;
  operator_counters counters;  ///< the operator's own end-of-run counters
};

/// The virtualised kernel's round-time breakdown (the XeFlow paper's Fig. 11): SM cycles summed over
/// blocks per phase. Only for runs on the device executor.
struct kernel_breakdown {
  std::uint64_t subscribe = 0, schedule = 0, compute = 0, publish = 0, idle = 0;
  std::uint64_t fence = 0;           ///< of publish: the rounds' system-scope release fences
  std::uint64_t fences = 0;          ///< rounds that fenced
  double sm_clock_mhz = 0;           ///< to turn cycles into time (0: unknown)
  std::uint64_t placed_warps = 0;    ///< summed over busy rounds: warps that ran an item
  std::uint64_t computed_items = 0;  ///< summed over busy rounds: items that computed
  std::uint64_t rounds = 0, busy_rounds = 0;
  std::uint32_t blocks = 0, warps_per_block = 0;
};

/// The kernel's warp partition on the device executor: the policy, what each GPU operator (kernel order)
/// ran with at the end, its measured cost per work item over the whole run, and every tuning the auto
/// policies made.
struct partition_stats {
  std::string policy;
  std::vector<std::string> operators;
  std::vector<std::uint32_t> warps;            ///< per block, at the end of the run
  std::vector<std::uint32_t> items_per_round;  ///< work items per block and round (the fewest warps)
  std::vector<std::uint32_t> items_per_frame;  ///< work items a frame makes (parts, or shares of it)
  std::vector<std::uint64_t> items;            ///< work items measured over the run
  std::vector<double> item_us;                 ///< mean time per work item (its warps' own work)
  double busy_round_us = 0;                    ///< mean time of a block's round that had work
  std::uint32_t switches = 0;                  ///< partitions the blocks were asked to switch to
  double sm_clock_mhz = 0;                     ///< to read the tunings' cycles as time
  std::vector<tuning_record> tunings;
};

/// The file cache of a run with file readers in the kernel's blocks: what the readers' fetches
/// found and asked for, and what each host I/O thread read.
struct file_cache_stats {
  std::uint64_t page_bytes = 0, slots = 0;
  std::string replacement;
  std::uint64_t hits = 0;         ///< pages found resident
  std::uint64_t misses = 0;       ///< pages loaded
  std::uint64_t waits = 0;        ///< looks at a page another reader was loading
  std::uint64_t requests = 0;     ///< requests rung to the I/O threads
  std::uint64_t no_page = 0;      ///< fetch steps that found their block's share full and started over
  std::uint64_t ahead_pages = 0;  ///< pages read ahead into the blocks' readahead buffers
  std::uint64_t ahead_hits = 0;   ///< misses served from a readahead buffer, without a request
  struct io_thread {
    std::uint64_t requests = 0, chunks = 0, bytes = 0, busy_ns = 0;
  };
  std::vector<io_thread> io_threads;
};

/// A shared object's run: what its writer's publishes moved and waited, and how long CPU readers waited for
/// versions to become final.
struct object_stats {
  std::string name;
  std::string protocol;
  std::uint64_t bytes = 0;
  shared::versioned_object_counters publishes;
  std::uint64_t reader_wait_ns = 0;
};

struct topic_stats {
  std::string name;
  std::uint64_t frame_bytes = 0;
  std::uint32_t capacity = 0;
  std::uint64_t frames = 0, bytes = 0;
  std::uint64_t blocked_ns = 0;  ///< publishers waiting for a free slot
  std::uint64_t end_offset = 0;  ///< offsets published (frames and void) when the stream ended
  /// GPU runs with CUPTI: unified-memory events in the topic's managed memory (page faults, migrations).
  bool um_known = false;
  std::uint64_t gpu_page_faults = 0, cpu_page_faults = 0, bytes_to_device = 0, bytes_to_host = 0;
  /// GPU runs: the copy engines carried the frames (transfer dma): to "device" or "host"; empty otherwise.
  std::string copied_to;
  std::uint64_t copies = 0, copied_bytes = 0;
  std::uint64_t skipped_bytes = 0;  ///< frame bytes the copy engines left behind (pages no subscriber reads)
  std::uint64_t copy_cuda_calls = 0;  ///< every CUDA call the copy bridge made for the topic
  std::uint64_t copy_busy_ns = 0;     ///< the bridge thread's time on looks at the topic that moved something
  std::uint64_t copy_choice_wait_ns = 0;  ///< of it, waiting for the pages to copy to be chosen (columnar)
  /// A columnar topic's page readers' index walks, per column (their `pages.<column>` and
  /// `pages_skipped.<column>` counters summed): data pages met, and those the index ruled out (never read
  /// by the kernel; with dma, never copied unless a neighbouring part's gap carried them).
  struct column_pages {
    std::string column;
    std::uint64_t pages = 0, pages_skipped = 0, bytes_skipped = 0;
  };
  std::vector<column_pages> columns;
};

/// How a run ended: every stream to its end, drained early by an interrupt, or failed.
enum class run_status : std::uint8_t { completed, interrupted, failed };
constexpr std::string_view name_of(run_status s) {
  return s == run_status::completed ? "completed" : s == run_status::interrupted ? "interrupted" : "failed";
}

struct run_stats {
  run_provenance provenance;  ///< the build, CUDA, GPU and host that made these numbers
  std::string topology;
  std::string executor;
  /// The device executor's GPU ordinal (the CUDA device the kernel ran on); unset on the host executor.
  std::optional<std::uint32_t> gpu;
  /// A ranked run: this rank among `ranks` (one process: rank 0 of 1).
  std::uint32_t rank = 0, ranks = 1;
  run_status status = run_status::completed;
  std::string error;  ///< the failure, when failed
  double wall_seconds = 0;
  /// From the first frame a source published to the last a sink received: the stream itself, without
  /// setting up (topics, kernel launch, references) and tearing down. 0 when no frame reached a sink.
  double stream_seconds = 0;
  /// Where the wall clock went, step by step in run order: setting up (the kernel executor and its GPU
  /// context, the topics' frames, the operators, starting them and the kernel), the run itself (from the
  /// kernel's start to the last worker's end: the stream and its drain), and finishing (the sinks'
  /// accumulators and results). The launcher puts loading the topology, and planning it (with the GPU's
  /// set-up), first, and the teardown (freeing the run's memory) last.
  struct phase {
    std::string name;
    double seconds = 0;
  };
  std::vector<phase> phases;
  std::vector<operator_stats> operators;
  std::vector<topic_stats> topics;
  std::vector<object_stats> objects;  ///< the topology's shared objects
  std::vector<bridge_stats> bridges;  ///< a ranked run: the bridges of this rank's topics
  std::optional<kernel_breakdown> kernel;
  std::optional<partition_stats> partition;
  std::optional<file_cache_stats> file_cache;
  /// The sinks' totals over time (run_options::timeline_interval; xeflow-run --timeline-ms).
  struct timeline_sample {
    double seconds = 0;  ///< since the run started
    std::uint64_t sink_frames = 0, sink_bytes = 0;
  };
  std::vector<timeline_sample> timeline;
  std::string um_note;         ///< GPU runs: why unified-memory counters are missing, when they are
  bool device_wedged = false;  ///< see run_topology
};

/// The stats as aligned text tables (operators, then topics, then operator counters).
std::string format_stats_table(const run_stats& stats);
/// The JSON stats' format version ("schema_version"; docs/stats.md): raised when a field is removed or
/// renamed or changes its type or meaning, not when one is added.
inline constexpr int stats_schema_version = 1;

/// The stats as a JSON document (nlohmann-json), pretty-printed: docs/stats.md gives every field.
std::string format_stats_json(const run_stats& stats);
/// A ranked run's JSON stats from every rank's format_stats_json document, in rank order: one
/// schema_version and rank 0's provenance at the top, then "ranks" and "per_rank" (each rank's document,
/// its provenance cut to its machine, host, gpu and cuda_driver, and any other field that differs from
/// rank 0's).
std::string format_ranked_stats_json(const std::vector<std::string>& rank_documents);

}  // namespace xf
