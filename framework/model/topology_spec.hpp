// TopologySpec: what a topology declares, independent of where it came from (YAML or the C++ builder).
// Plain data; `validate_topology` (spec_validation.hpp) checks it against the operator registry, and the
// planner turns a valid spec into topics, threads and a kernel partition.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "framework/core/element_type.hpp"
#include "framework/core/errors.hpp"
#include "framework/datatype/datatype.hpp"
#include "framework/files/file_cache_spec.hpp"
#include "framework/shared/coherence.hpp"
#include "topics/coherence_spec.hpp"
#include "topics/columnar_layout.hpp"

namespace xf {

/// Where an operator runs. A `gpu` operator runs inside the virtualised kernel, or on the host executor
/// (CPU threads that play the kernel's role) when there is no GPU or `--host` is given.
enum class placement : std::uint8_t { cpu, gpu };
constexpr std::string_view name_of(placement p) {
  return p == placement::cpu ? "cpu" : "gpu";
}

enum class frame_layout : std::uint8_t { row, columnar };
constexpr std::string_view name_of(frame_layout l) {
  return l == frame_layout::row ? "row" : "columnar";
}

/// How a topic's frames cross PCIe between CPU and GPU operators on the GPU executor:
/// - mapped: the kernel reads and writes the frames in host memory directly (zero-copy); no copy, the
///   lowest latency, but one pass over host memory reading and writing tops out near 40 GB/s;
/// - dma: the frames get a replica in device memory and the copy engines move them (copy_bridge.hpp),
///   both directions at once, with no kernel launch and no per-frame synchronisation;
/// - auto: dma for frames of 1 MiB and more, and of 64 KiB and more in a ring of 16 or more when no CPU
///   operator sits between GPU operators; mapped otherwise (transfer_auto_uses_dma in plan.hpp).
/// Topics that stay on one side ignore it.
enum class transfer_mode : std::uint8_t { automatic, mapped, dma };
constexpr std::string_view name_of(transfer_mode t) {
  return t == transfer_mode::automatic ? "auto" : t == transfer_mode::mapped ? "mapped" : "dma";
}

/// Which executor runs the GPU operators: the device when one is usable, else the host (auto).
enum class executor_kind : std::uint8_t { automatic, device, host };
constexpr std::string_view name_of(executor_kind e) {
  return e == executor_kind::automatic ? "auto" : e == executor_kind::device ? "device" : "host";
}

/// How a block's warps are split among the GPU operators each round:
/// - uniform: equal shares (the remainder to the first operators);
/// - explicit: each GPU operator's `warps`;
/// - auto: the device executor samples each operator's round time at several warp counts at the start
///   of the run, fits its cost model and switches to the partition the models favour (warp_partition.hpp);
/// - auto-online: auto, and again whenever the spread of the operators' round times moves away from the
///   tuned one by more than `tuning.retune_spread_percent` for `tuning.retune_hold_ms`.
/// The host executor has no warps to split: it runs every policy alike.
enum class partition_policy : std::uint8_t { uniform, explicit_warps, auto_once, auto_online };
constexpr std::string_view name_of(partition_policy p) {
  switch (p) {
    case partition_policy::uniform:
      return "uniform";
    case partition_policy::explicit_warps:
      return "explicit";
    case partition_policy::auto_once:
      return "auto";
    case partition_policy::auto_online:
      return "auto-online";
  }
  return "?";
}
constexpr bool is_tuned(partition_policy p) {
  return p == partition_policy::auto_once || p == partition_policy::auto_online;
}

/// Settings of the auto partitions (runtime.tuning).
struct tuning_spec {
  /// Work items whose round time is measured over the sampling schedule (the paper's Table 2 counts).
  std::uint32_t samples = 3200;
  /// auto-online: re-tune when max R_i / min R_i differs from its value right after tuning by more than
  /// this percentage …
  std::uint32_t retune_spread_percent = 25;
  /// … for this long (a passing burst does not re-tune).
  std::uint32_t retune_hold_ms = 100;
  friend bool operator==(const tuning_spec&, const tuning_spec&) = default;
};

/// A parameter value as written. Integers (and byte counts, after unit parsing) are int64, reals double; a
/// datatype parameter holds the type once validation resolved it (YAML names it, or defines it inline).
using param_value = std::variant<bool, std::int64_t, double, std::string, dt::datatype>;

/// A named datatype of a topology (YAML `datatypes:`; framework/model/datatype_yaml.hpp has the grammar):
/// operators' datatype parameters name it. Types that name others share their nodes, so a reference stays
/// recognisable (dt::datatype::same_node) when the spec is written back.
struct datatype_spec {
  std::string name;
  dt::datatype type = dt::primitive::byte;
  friend bool operator==(const datatype_spec&, const datatype_spec&) = default;
};

/// A column of a columnar topic: its name and its type and bloom filter (topics/columnar_layout.hpp).
struct column_spec {
  std::string name;
  column_layout layout;
  friend bool operator==(const column_spec&, const column_spec&) = default;
};

struct topic_spec {
  std::string name;
  std::uint64_t frame_bytes = 64 * 1024;  ///< a multiple of 4 KiB; a columnar topic's follows its columns
  std::uint32_t capacity = 64;            ///< frames in flight (offset-index slots)
  element_type element = element_type::u32;
  frame_layout layout = frame_layout::row;
  transfer_mode transfer = transfer_mode::automatic;
  /// Columnar topics: rows a frame holds, and the columns in page order.
  std::uint32_t rows_per_frame = 0;
  std::vector<column_spec> columns;
  friend bool operator==(const topic_spec&, const topic_spec&) = default;
};

/// How an operator uses a shared object: readers see, for their frame at offset o, the latest version the
/// writer published at an offset ≤ o; the one writer (a CPU operator) publishes versions.
enum class object_access : std::uint8_t { read, write };
constexpr std::string_view name_of(object_access a) {
  return a == object_access::read ? "read" : "write";
}

/// A shared object of a topology (YAML `shared_objects:`): named, versioned state that CPU and GPU operators
/// share, kept consistent by stream position (framework/shared/DESIGN.md, "Objects in topologies").
struct shared_object_spec {
  std::string name;
  element_type element = element_type::u8;
  /// Its size: > 0, a multiple of the element's size. 0 with `init`: the file's size, which validation
  /// writes here (so the runtime, which sees only validated specs, always finds it > 0).
  std::uint64_t bytes = 0;
  /// A file whose bytes are version 0 (empty: version 0 is zeros).
  std::string init;
  /// Buffers the versions rotate through: a reader of an older version keeps its buffer while the writer
  /// fills the next one. 1 only for an object no operator writes.
  std::uint32_t versions = 2;
  /// How the writer's changes are found and moved at each publish (framework/shared/coherence.hpp): batch
  /// moves the whole object, lazy the whole object only if it was written, rolling the blocks written.
  shared::protocol protocol = shared::protocol::rolling;
  /// Rolling update's block: a positive multiple of 4 KiB.
  std::uint64_t block_bytes = 4096;
  friend bool operator==(const shared_object_spec&, const shared_object_spec&) = default;
};

struct operator_spec {
  std::string name;
  std::string class_name;
  placement on = placement::cpu;
  std::vector<std::string> inputs;   ///< topic names
  std::vector<std::string> outputs;  ///< topic names
  std::map<std::string, param_value> params;
  std::uint32_t threads = 1;  ///< CPU operators: host threads
  std::uint32_t warps = 0;    ///< GPU operators: warps per block under the explicit partition (0: unset)
  /// The shared objects it takes: its class's object slot (operator_info::objects) → a shared object's name.
  std::map<std::string, std::string> shared;
  /// The MPI rank it runs on (`rank:`, a number, or a name of runtime.ranks, which validation resolves
  /// into `rank`). A topology run by one process runs every operator whatever its rank.
  std::uint32_t rank = 0;
  std::string rank_name;  ///< as written, when `rank:` named one of runtime.ranks; empty otherwise
  /// GPU operators: the ordinal of the GPU its rank's kernel runs on (`device:`); unset: the rank's
  /// position among the ranks of its node, modulo the node's GPUs. Every GPU operator of a rank that sets
  /// it sets the same: a rank runs one kernel on one GPU.
  std::optional<std::uint32_t> device;
  friend bool operator==(const operator_spec&, const operator_spec&) = default;
};

struct runtime_spec {
  executor_kind executor = executor_kind::automatic;
  std::uint32_t blocks = 0;           ///< 0: derived from the device (or host cores)
  std::uint32_t warps_per_block = 8;  ///< 1..32
  partition_policy partition = partition_policy::uniform;
  tuning_spec tuning;  ///< used by partition auto and auto-online only
  coherence_spec coherence;
  /// GPU executor: a kernel block whose heartbeat stalls this long ends the run with a state dump.
  std::uint32_t watchdog_ms = 10000;
  /// The run's threads' timer slack in microseconds (framework/core/timer_slack.hpp): how late a sleeping
  /// wait may wake. 0 leaves the process's own (Linux: 50 µs).
  std::uint32_t timer_slack_us = 1;
  /// The longest sleep of the run's waiting threads in microseconds (framework/core/backoff.hpp): what a
  /// frame that arrives meanwhile may wait, once per hand-off. 0: they spin, then yield, and never sleep.
  std::uint32_t max_sleep_us = 50;
  /// GPU executor: bytes of each part a frame is split into for operators that compute over any part of
  /// a frame; 0 lets the plan choose (plan.hpp: kernel_part_bytes, smaller where few frames are in flight).
  std::uint64_t part_bytes = 0;
  /// Columnar page readers: after this many frames in a row whose index pages left (almost) nothing of a
  /// reader's columns behind, the host stops reading its index and takes its columns whole, looking again
  /// now and then (framework/model/pages_read.hpp); 0 (the default) reads the index of every frame.
  std::uint32_t index_rest = 0;
  /// GPU operators: a round whose computing items leave warps of the block idle gives every warp to those
  /// items (framework/kernel/round_steps.hpp: place_round_warps); off: an item runs on its own warps only.
  bool spread_warps = false;
  /// runtime.file_cache: given only for topologies whose operators read files through the cache.
  std::optional<file_cache_spec> file_cache;
  /// runtime.ranks: names for MPI ranks, which operators' `rank:` may use instead of the number.
  std::map<std::string, std::uint32_t> ranks;
  friend bool operator==(const runtime_spec&, const runtime_spec&) = default;
};

/// Positions of the spec's fields in their source, keyed by path: "topics.in.capacity",
/// "operators.scale.inputs[0]", "operators.scale.params.factor", "runtime.blocks". A key's position is
/// stored under its path and the key itself under path + "#key". Empty for specs built in C++.
using source_map = std::map<std::string, source_pos>;

struct topology_spec {
  std::string name;
  std::vector<topic_spec> topics;           ///< in declaration order
  std::vector<operator_spec> operators;     ///< in declaration order
  std::vector<shared_object_spec> objects;  ///< shared_objects, in declaration order
  std::vector<datatype_spec> datatypes;     ///< in declaration order
  runtime_spec runtime;
  source_map positions;     ///< not part of equality
  std::string source_name;  ///< the file (or "<builder>") the spec came from; not part of equality

  const topic_spec* find_topic(std::string_view name) const;
  const operator_spec* find_operator(std::string_view name) const;
  const shared_object_spec* find_object(std::string_view name) const;
  const datatype_spec* find_datatype(std::string_view name) const;
  /// Position of `path`, falling back to its closest recorded parent path, then to the file alone.
  source_pos position_of(const std::string& path) const;
  /// Position of the key of `path` ("scale:" rather than the map under it: where a topic, operator or object
  /// is named), else position_of(path).
  source_pos position_of_key(const std::string& path) const;
  /// Position of the value at `owner.field` when it was written, else of the owner's key (the field is left
  /// out).
  source_pos position_of_field(const std::string& owner, const std::string& field) const;

  friend bool operator==(const topology_spec& a, const topology_spec& b) {
    return a.name == b.name && a.topics == b.topics && a.operators == b.operators && a.objects == b.objects &&
           a.datatypes == b.datatypes && a.runtime == b.runtime;
  }
};

}  // namespace xf
