// Validation of a TopologySpec against the operator registry: the one check both front ends (YAML and the
// C++ builder) go through before anything is planned or started. Positions come from the spec's source
// map, so a YAML topology's problems point at the offending value and a builder's start with "<builder>".
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "framework/core/errors.hpp"
#include "framework/model/registry.hpp"
#include "framework/model/topology_spec.hpp"

namespace xf {

/// Checks `spec` and normalizes each operator's params in place (normalize_params: "1GiB" becomes
/// 1073741824 for a bytes parameter, a datatype parameter's name the spec's datatype of that name), and
/// sets the rank of each operator whose `rank:` names one of runtime.ranks to that rank's number. Throws
/// config_error with every problem found, sorted by position. What it checks: names (of topics, operators
/// and datatypes), frame sizes and capacities, runtime settings, operator classes, placement, arity by
/// role, threads/warps and the warp partition, params, topic references, publishers and subscribers of
/// each topic, cycles, 1:1 map frame sizes and element types, that verify sinks have a linear replayable
/// chain upstream, shared objects and their bindings (shared_object_checks.hpp: an object that gives no
/// size takes its init file's, filled in here), and ranks and GPUs: rank names, `device:` on GPU operators
/// only and one per rank, a topic's publishers on one rank, a shared object's writer and readers on one;
/// the CPU operators' threads in all (max_cpu_threads); and what no machine that runs it can hold: a
/// topic's frames, a shared object's versions or the file cache past this machine's physical memory.
/// Not checked here: what only the machine or the run can refuse (plan.hpp), such as a rank past the
/// number of ranks that run. Linear in the topology's size (graph walks use their own stack).
void validate_topology(topology_spec& spec, const operator_registry& registry);

/// validate_topology without the throw: the problems, in the order found (unsorted).
std::vector<diagnostic> topology_problems(topology_spec& spec, const operator_registry& registry);

/// Sorts problems by file (in `file_order`, unknown files after, in order of first appearance), then line
/// and column; problems at the same place keep their order. Positionless problems come first in their file.
void sort_problems(std::vector<diagnostic>& problems, const std::vector<std::string>& file_order);

/// The allowed range of an integer field of the spec. Shared by the loader (which must refuse what does
/// not fit the spec's unsigned fields before storing it) and validation, so both say the same thing.
struct count_limits {
  std::int64_t min = 0;
  std::int64_t max = std::numeric_limits<std::uint32_t>::max();
};
inline constexpr count_limits capacity_limits{1, std::numeric_limits<std::uint32_t>::max()};
inline constexpr count_limits rows_per_frame_limits{1, std::numeric_limits<std::uint32_t>::max()};
inline constexpr count_limits bloom_bits_limits{1, std::numeric_limits<std::uint32_t>::max()};
inline constexpr count_limits bloom_hashes_limits{1, 64};
/// Threads are bounded by fixed numbers rather than by this machine's cores, so that a topology validates
/// the same wherever it is checked: far past the cores of any host (more threads than cores is allowed:
/// a thread may wait on I/O), and below where creating threads starts to fail on common limits (a
/// container's pids.max, the memory of the threads' stacks). A CPU operator's threads:
inline constexpr count_limits threads_limits{1, 1024};
/// The threads of all CPU operators of a topology together.
inline constexpr std::uint64_t max_cpu_threads = 8192;
inline constexpr count_limits warps_limits{1, 32};  ///< a CUDA block holds at most 32 warps
/// runtime.blocks: past the resident blocks of any GPU (132 SMs x 32 on an H100; the planner checks the
/// GPU's own number), and the host executor runs each block on a thread of its own.
inline constexpr count_limits blocks_limits{0, 8192};
inline constexpr count_limits warps_per_block_limits{1, 32};
/// Tuning: fewer samples than this leave each sampled partition a handful of rounds; the spread and the
/// hold are checked every few milliseconds.
inline constexpr count_limits tuning_samples_limits{100, 100'000'000};
inline constexpr count_limits retune_spread_percent_limits{1, 1000};
inline constexpr count_limits retune_hold_ms_limits{1, 3'600'000};
/// A watchdog shorter than a few scheduling quanta would fire on a merely busy machine.
inline constexpr count_limits watchdog_ms_limits{100, 24 * 3600 * 1000};
/// A slack past a millisecond would make the waits' longest sleep (50 µs) meaningless.
inline constexpr count_limits timer_slack_us_limits{0, 1000};
/// runtime.max_sleep_us caps the waits' sleeps, whose longest is 50 µs: a larger cap would change nothing.
inline constexpr count_limits max_sleep_us_limits{0, 50};
/// runtime.index_rest: a rest past a million frames would never end within a table's pass.
inline constexpr count_limits index_rest_limits{0, 1'000'000};
/// runtime.part_size is a multiple of this.
inline constexpr std::uint64_t part_size_multiple = 4096;
inline constexpr count_limits io_threads_limits{0, 64};          ///< 0: derived from the machine
inline constexpr count_limits io_slots_per_block_limits{1, 32};  ///< a block's free-slot bitmap is one word
/// An operator's `rank:` and the numbers runtime.ranks names. Far above any run's number of ranks, which
/// only the planner knows (it checks each rank against it); the bound keeps a stray value out of the spec.
inline constexpr count_limits rank_limits{0, 65535};
/// A GPU operator's `device:`, the ordinal of its rank's GPU (CUDA numbers a node's devices from 0).
inline constexpr count_limits device_limits{0, 1023};
/// A shared object's version ring: a reader holds at most one version at a time, and each buffer is a
/// copy of the object on both sides, so more than a few dozen only cost memory.
inline constexpr count_limits object_versions_limits{1, 64};
/// A shared object written with `count`: its size in elements.
inline constexpr count_limits object_count_limits{1, std::numeric_limits<std::uint32_t>::max()};
/// A shared object's rolling-update block is a multiple of this (the host's page: the protection unit).
inline constexpr std::uint64_t object_block_multiple = 4096;

/// The machine's physical memory in bytes (0 when it does not say): validation refuses a topic, shared
/// object or file cache larger than it.
std::uint64_t machine_memory_bytes();

/// "capacity must be at least 1, not 0" or "warps must be between 1 and 32, not 40"; empty when `value` is
/// within `limits`.
std::string count_problem(std::string_view field, std::int64_t value, count_limits limits);

/// The same message for a value written as text that does not fit 64 bits.
std::string count_problem_text(std::string_view field, std::string_view value_text, count_limits limits);

/// The reason `bytes` cannot be a topic's frame size (zero, or not a multiple of 4 KiB), or empty.
std::string frame_size_problem(std::uint64_t bytes);

/// Topic and operator names: letters, digits, '_' and '-', starting with a letter or '_' (they appear in
/// `--set` paths and in position keys, so '.' and '[' are out).
bool is_valid_name(std::string_view name);

}  // namespace xf
