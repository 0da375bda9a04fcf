// The YAML front end of TopologySpec: reads a topology file, applies `--set` overrides, converts it to a
// spec that remembers where every field was written, and validates it (spec_validation.hpp).
//
// The schema (every key optional unless marked; unknown keys are errors, with a suggestion):
// clang-format off
//
//   name: pingpong            # a string
//   topics:                   # map: topic name -> settings (a topic without settings takes the defaults)
//     in:
//       frame_size: 64KiB     # bytes with units (units.hpp); a positive multiple of 4 KiB; default 64KiB
//       capacity: 64          # frames in flight, integer >= 1; default 64
//       device_memory: 4MiB   # instead of capacity: a byte budget for the frames in flight, which buys
//                             # device_memory / frame_size of them (the ring a DMA-fed topic keeps in
//                             # device memory on the GPU executor)
//       element: u32          # u8 i8 u16 i16 u32 i32 u64 i64 f32 f64; default u32
//       layout: row           # row | columnar (read by columnar readers such as query; below)
//     table:                  # a columnar topic: its frame size follows from its columns
//       layout: columnar
//       rows_per_frame: 8192  # rows a frame holds, integer >= 1
//       columns:              # in page order (topics/columnar_layout.hpp); at most 32
//         - {name: kseq, type: u32, bloom_bits: 8192, bloom_hashes: 6}  # bloom: 64..32768 bits, 1..16 hashes
//         - {name: s1, type: char(8)}                                   # fixed-width characters, 1..256
//     out: {frame_size: 64KiB}
//   datatypes:                # map: name -> an MPI derived datatype, for operators' datatype parameters
//     face: {subarray: {sizes: [32, 32, 32], subsizes: [32, 32, 1], starts: [0, 0, 7], order: c, of: f64}}
//                             # (the grammar: framework/model/datatype_yaml.hpp)
//   shared_objects:           # map: object name -> settings: versioned state operators share by stream
//     centroids:              # position (framework/shared/DESIGN.md, "Objects in topologies")
//       element: f32          # as a topic's; default u8
//       count: 96             # its size in elements, integer >= 1; or
//       bytes: 384            # its size in bytes with units; not both (neither: its init file's size)
//       init: centroids.bin   # a file holding version 0, the path as written (none: zeros)
//       versions: 2           # buffers the versions rotate through, 1..64 (at least 2 when an operator
//                             # writes it); default 2
//       protocol: rolling     # batch | lazy | rolling (framework/shared/coherence.hpp); default rolling
//       block_size: 4KiB      # rolling update's block, a positive multiple of 4 KiB; default 4KiB
//   operators:                # map: operator name -> settings; at least one operator
//     source:
//       class: sequence_source  # required: a registered class (xeflow-run --list-operators)
//       on: cpu               # cpu | gpu; default gpu when the class has a GPU compute, else cpu
//       outputs: [in]         # topic names: a list, or a single name
//       threads: 2            # CPU operators: host threads, 1..1024 (8192 for all CPU operators
//                             # together); default 1 (a GPU operator may only say 1: it runs in every
//                             # kernel block)
//       params: {total_bytes: 1GiB, seed: 7}  # the class's parameters: single values, typed by the class
//                             # (a datatype parameter: a datatype's name, or a datatype written inline)
//     scale:
//       class: scale
//       inputs: [in]
//       outputs: [out]
//       warps: 4              # GPU operators only, with runtime.partition: explicit; 1..32
//       params: {factor: 2}
//       shared: {centres: centroids}  # the class's object slots -> shared objects (optional slots may be
//                                     # left unbound)
//     verify: {class: verify_sink, inputs: out}
//   runtime:
//     executor: auto          # auto | device | host
//     blocks: 0               # kernel blocks, 0..8192; 0: derived from the machine
//     warps_per_block: 8      # 1..32
//     partition: uniform      # uniform | explicit (each GPU operator then states its `warps`)
//     coherence:              # GPU executor: policy of each topic layer (topology_spec.hpp)
//       catalog: read_mostly  # naive | read_mostly
//       index: placed         # naive | placed
//       frames: placed        # naive | placed
//     watchdog_ms: 10000      # GPU executor: a block stalled this long ends the run; 100 .. 86400000
//
// clang-format on
//
// Names of topics and operators use letters, digits, '_' and '-' (they appear in `--set` paths).
// The text is UTF-8 and bounded (yaml_limits below); sizes are bounded by the machine's memory
// (spec_validation.hpp).
// Integers are decimal, 0x hexadecimal or 0o octal. Quoted and plain scalars read the same.
//
// Problems are reported in two passes, each collecting everything it finds, in source order: first the
// document's shape (YAML syntax, unknown and duplicate keys, values of the wrong type or out of range,
// bad units and enum names), then — only when the shape is right, so that one typo does not cascade into
// follow-on errors — the topology's meaning (validate_topology). Positions are 1-based "file:line:column".
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "framework/core/errors.hpp"
#include "framework/model/registry.hpp"
#include "framework/model/topology_spec.hpp"

namespace xf {

/// Reads, overrides, converts and validates a topology file. `overrides` are `--set` arguments
/// ("topics.in.capacity=8", see overrides.hpp). Throws config_error holding every problem found, in source
/// order; a missing or unreadable file is a problem at "<path>" with the system's reason.
topology_spec load_topology_file(const std::string& path, const operator_registry& registry,
                                 const std::vector<std::string>& overrides = {});

/// As load_topology_file, for YAML text already in memory; `source_name` names it in positions.
topology_spec load_topology_text(std::string_view yaml_text, const std::string& source_name,
                                 const operator_registry& registry,
                                 const std::vector<std::string>& overrides = {});

/// The keys each map of a topology accepts, by section: "" (the top level), "topic", "column",
/// "operator", "shared_object", "runtime", "runtime.tuning", "runtime.coherence", "runtime.file_cache".
/// What the loader reads, and what the topology's JSON Schema (xeflow-run --schema) is generated from.
const std::map<std::string, std::vector<std::string>>& topology_keys();

// ---- the parsed document --------------------------------------------------------------------------------
// yaml-cpp's tree copied into plain data whose positions carry their source's name: a value given with
// `--set` must be reported at the override, not at a line of the file. Keeps yaml-cpp out of headers.

struct yaml_entry;

struct yaml_node {
  enum class kind : std::uint8_t { null, scalar, list, map };
  kind type = kind::null;
  std::string scalar;               ///< kind::scalar: the text (quoted or plain alike)
  std::vector<yaml_node> items;     ///< kind::list
  std::vector<yaml_entry> entries;  ///< kind::map: in document order, duplicate keys kept
  source_pos pos;                   ///< where the value starts

  /// The first entry with `key`, or null.
  yaml_entry* find(std::string_view key);
  const yaml_entry* find(std::string_view key) const;
};

struct yaml_entry {
  std::string key;
  source_pos key_pos;
  yaml_node value;
};

/// "a map", "a list", "empty", or "'text'" for a scalar: how a message names what it found.
std::string describe_node(const yaml_node& node);

/// What the loader reads at most, so that no input makes it use unbounded time, memory or stack: a text
/// past these is refused with a problem at the place that crosses the limit. Far above any real topology
/// (the largest in topologies/ is a few KiB, a few hundred nodes, 6 levels deep), and above the largest
/// one validation lets through (max_cpu_threads operators of a dozen nodes each, and their topics).
struct yaml_limits {
  /// Bytes of a topology file or text.
  static constexpr std::size_t max_bytes = std::size_t{16} << 20;
  /// Nodes of the document (scalars, lists, maps, keys included), counting every alias as a copy of the
  /// node it names: an alias of an alias of … (a "billion laughs") is refused at the alias that crosses it.
  static constexpr std::size_t max_nodes = 250'000;
  /// Lists and maps nested in one another.
  static constexpr std::size_t max_depth = 64;
};

/// Parses one YAML document. Positions name `source_name`; `first_column` is the 1-based column at which
/// the text starts on its first line (an override's value starts inside its argument). Throws config_error
/// for YAML syntax errors, text that is not UTF-8 or holds control characters (other than tab and line
/// breaks), non-scalar map keys, an alias inside the node it names, text past yaml_limits, and more than
/// one document. Empty text gives a null node.
yaml_node parse_yaml(std::string_view text, const std::string& source_name, int first_column = 1);

/// Converts a parsed document to a spec, recording positions (topology_spec::positions) and defaulting
/// `on` from the registry. Returns the shape problems found (empty when the spec is complete); does not
/// run validate_topology.
std::vector<diagnostic> read_topology(const yaml_node& root, const std::string& source_name,
                                      const operator_registry& registry, topology_spec& spec);

}  // namespace xf
