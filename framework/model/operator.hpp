// The operator contract. CPU operators are classes with virtual hooks, run on host threads; GPU operators
// are structs with a `__host__ __device__` compute over one frame with virtual thread ids, run inside the
// virtualised kernel (or on the host executor). Both declare their parameters once, in `describe`
// (operator_schema.hpp), and join a registry with one line (registry.hpp).
#pragma once

#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "framework/core/exec_space.hpp"
#include "framework/core/frame.hpp"
#include "framework/core/system_atomic.hpp"
#include "framework/files/file_api.hpp"
#include "framework/files/file_list.hpp"
#include "topics/columnar_layout.hpp"

namespace xf {

class frame_reference;

/// What an operator is told about a topic it reads or writes.
struct topic_info {
  std::string name;
  std::uint64_t frame_bytes = 0;
  std::uint32_t capacity = 0;
  element_type element = element_type::u8;
  /// Columnar topics: the frames' page map (topics/columnar_layout.hpp) and the columns' names in page
  /// order; empty for row topics.
  std::optional<columnar_geometry> columnar;
  std::vector<std::string> column_names;

  /// The index of column `name` in a columnar topic, or nullopt (also for a row topic).
  std::optional<std::uint32_t> column(std::string_view column_name) const {
    for (std::size_t i = 0; i < column_names.size(); ++i)
      if (column_names[i] == column_name) return static_cast<std::uint32_t>(i);
    return std::nullopt;
  }
};

/// One problem with an operator's parameters, on their own or once they meet the operator's topics (a
/// column the input topic does not have): validation reports it at the parameter's line. `key` is the
/// parameter (empty: the params block itself).
struct param_problem {
  std::string key;
  std::string message;
};

/// What a reader of a shared object gets for a frame: the version's bytes and its number (0: the initial
/// version; the writer's publishes count from 1).
struct object_version {
  std::span<const std::byte> bytes;
  std::uint64_t number = 0;
};

/// A shared object as a CPU operator sees it (operator_setup::objects, in the order its class declares the
/// slots). Consistency by stream position: the reader of the frame at offset o sees the latest version the
/// writer published at an offset ≤ o. The writer keeps a horizon h, the offset below which its versions are
/// final; a reader of frame o waits until o < h. The framework moves h on by itself as the writer finishes
/// frames (once every frame below f is done, h ≥ f + 1: so a writer publishes for frames after the one it
/// is handling, and readers downstream of it never wait on themselves); `promise` moves it further, so that
/// readers of the frames it covers do not wait at all. Thread-safe.
class object_port {
 public:
  virtual ~object_port() = default;
  virtual const std::string& name() const = 0;
  virtual std::uint64_t bytes() const = 0;
  /// Readers: the version frame `offset` uses, once the writer's horizon passed `offset` (waits until then;
  /// throws run_aborted if the run ends meanwhile). The bytes stay valid until the reader's hook for
  /// `offset` returns.
  virtual object_version read(std::uint64_t offset) = 0;
  /// The writer: its working copy, host memory; what it holds when publish is called is the next version.
  virtual std::span<std::byte> edit() = 0;
  /// The writer: the working copy becomes the version of every frame from `offset` on (until the next);
  /// `offset` must be at least horizon() (in on_start, before any frame, a writer may publish at 0: a first
  /// version known only at run time). Returns once every reader side has it (having waited, if need
  /// be, for the readers of the oldest version to release their frames: its buffer is reused), with the new
  /// version's number. Publishing at o also promises o + 1.
  virtual std::uint64_t publish(std::uint64_t offset) = 0;
  /// The writer: no version will be published below `offset`, so readers of frames below it go on.
  virtual void promise(std::uint64_t offset) = 0;
  /// The offset below which versions are final.
  virtual std::uint64_t horizon() const = 0;
  /// The highest version number a reader has taken up so far (a GPU reader's lane or a CPU reader's read):
  /// how soon a publish reaches the readers, for a writer that wants to know.
  virtual std::uint64_t highest_version_seen() const = 0;

  /// Typed access: the working copy as elements of T (T must be the object's element type's C++ type).
  template <class T>
  std::span<T> edit_as() {
    const std::span<std::byte> b = edit();
    return {reinterpret_cast<T*>(b.data()), b.size() / sizeof(T)};
  }
};

/// Handed to CPU operators' on_start: their place in the topology.
struct operator_setup {
  std::string name;
  std::vector<topic_info> inputs;
  std::vector<topic_info> outputs;
  std::uint32_t threads = 1;
  /// For each input: what that topic must hold at each offset, replayed from the upstream chain, or null
  /// when some upstream operator is not replayable. Valid until on_stop returns.
  std::vector<const frame_reference*> input_references;
  /// Set once the run is interrupted (SIGINT: sources stop early, in-flight frames drain). Null when the
  /// caller runs the operator outside a run. Read at on_stop to tell a short stream from a lossy one.
  const std::atomic<bool>* interrupted = nullptr;
  /// Set once the run is aborted (a failure anywhere, or a second interrupt): every wait unwinds, so frames
  /// taken but not yet delivered are dropped. Null outside a run. An operator that waits inside a frame
  /// hook checks it (and throws run_aborted); a sink that counts losses does not count them then.
  const std::atomic<bool>* aborted = nullptr;
  /// The shared objects bound to its slots, in the order its class declares them (null: an optional slot
  /// left unbound). Valid until on_stop returns.
  std::vector<object_port*> objects;
  /// A resumed run (xeflow-run --resume): the first offset of the operator's stream — a source's output,
  /// a sink's input. Offsets below it were committed by an earlier run and are not delivered again; a sink
  /// finds what it wrote of them where it left it. 0 in a fresh run.
  std::uint64_t resume_offset = 0;
  /// True in a resumed run, even one resumed from offset 0.
  bool resumed = false;
};

/// Counters an operator reports at the end of a run (e.g. a verify sink's lost/corrupt counts), printed
/// in the stats table and JSON under the operator.
using operator_counters = std::map<std::string, std::uint64_t>;

/// Base of all CPU operators. One instance per operator; with `threads: N` its frame hooks are called
/// concurrently from N threads, so an operator guards its own mutable state.
class cpu_operator {
 public:
  virtual ~cpu_operator() = default;
  /// Called once on the starting thread before any frame hook.
  virtual void on_start(const operator_setup&) {}
  /// Called once after the last frame hook returned on every thread (also after an interrupted run).
  /// May throw to fail the run (a verify sink does when it saw anomalies).
  virtual void on_stop() {}
  /// Called once after every operator's on_stop, only when the run completed (no failure, no interrupt):
  /// the moment to make an output visible under its name (file_sink renames its `.partial` file). May
  /// throw to fail the run. A failed or interrupted run never calls it, so its outputs stay partial.
  virtual void on_commit() {}
  /// Where the operator's output is while on_commit has not made it visible (`<path>.partial`), "" when
  /// it has none: after a failed or interrupted run the launcher says where the partial output was left.
  virtual std::string uncommitted_output() const { return {}; }
  /// End-of-run counters for the stats.
  virtual operator_counters counters() const { return {}; }
};

/// A source: fills the frame for `offset` and returns true, or returns false when the stream has ended.
/// Contract: produce is a function of the offset (frame o is the same whichever thread asks, and
/// whenever), and the end is monotone (false at o implies false at every later offset). That lets many
/// threads produce one stream in order, and a verify sink replay it.
class cpu_source : public cpu_operator {
 public:
  virtual bool produce(std::uint64_t offset, frame_out& out) = 0;
};

/// A 1:1 map: the output frame at `offset` is computed from the input frame at `offset`.
/// `out.bytes` starts equal to `in.bytes`; set it if the output is shorter or longer.
/// Phases of a map whose function changes at some offsets (e.g. fma's switch_offset): frames at offsets
/// of the same phase go through the same function of their content. Verify sinks key their per-period
/// checksum cache by phase, so a periodic input through such a map still verifies from the cache.
struct map_phases {
  std::uint32_t count = 1;                         ///< 1: one function for every offset
  std::function<std::uint32_t(std::uint64_t)> of;  ///< offset → phase in [0, count); empty when count is 1
};

class cpu_map : public cpu_operator {
 public:
  virtual void on_frame(std::uint64_t offset, const frame_in& in, frame_out& out) = 0;
  /// What on_frame writes, without its side effects: verify sinks' replays (reference_chain) call this,
  /// so a map that counts what it processes (prefetch_assembler) is not counted again for every replay.
  /// Called concurrently with on_frame and with itself. Defaults to on_frame.
  virtual void replay(std::uint64_t offset, const frame_in& in, frame_out& out) { on_frame(offset, in, out); }
  /// The map's phases (see map_phases); one unless the map says otherwise.
  virtual map_phases phases() const { return {}; }
};

/// A sink: consumes the frame at `offset`.
class cpu_sink : public cpu_operator {
 public:
  virtual void on_frame(std::uint64_t offset, const frame_in& in) = 0;
  /// A checkpointed run (xeflow-run --checkpoint) calls this from its checkpoint thread, concurrently
  /// with on_frame, between on_start and on_stop: once it returns, what every on_frame that returned
  /// before the call wrote must survive a crash of the process or the machine (a file sink's fdatasync).
  /// Throws to fail the run. Only sinks that declare themselves resumable are asked (operator_schema::
  /// resumable); the default has nothing to make durable.
  virtual void make_durable() {}
};

/// What a GPU operator's call over one work item carries besides its bytes: the item's offset, the
/// calling virtual thread, the failure word, a sink's accumulator and a file reader's stage. Shared by the
/// typed task an operator sees (frame_task) and the untyped call the executors build (frame_call), so the
/// one converts into the other without a field-by-field copy.
struct item_context {
  std::uint64_t offset = 0;
  std::uint32_t thread_id = 0;
  std::uint32_t thread_count = 1;
  /// This item is part `part` of the `parts` its frame makes: a byte part (first, below), or for an
  /// operator that shares frames (operator_schema::shares_frames) its share of the whole frame, which
  /// compute covers alone — another item, maybe on another block, does each other share.
  std::uint32_t part = 0;
  std::uint32_t parts = 1;
  /// Where fail() records a failure; set by the executor.
  std::uint64_t* failure = nullptr;
  /// A GPU sink's accumulator (see gpu_sink below): Op::state_bytes(params) bytes, zero before the first
  /// frame, shared by every virtual thread of every block for the whole run. Null for maps.
  std::byte* state = nullptr;
  /// File readers (gpu_file_reader below): the stage's ranges, resident; null for other operators.
  const file_pages* files = nullptr;
  /// File readers: the stage being read (0, 1, …).
  std::uint32_t stage = 0;
  /// File readers: carry_bytes the item's stages pass along (zero at stage 0; compute writes, the next
  /// stage's reads and compute read). Every virtual thread sees the same bytes.
  std::byte* carry = nullptr;
  static constexpr std::uint32_t carry_bytes = 64;
  /// File readers: each of its files' size at open, in the order `files` lists them (for reads and compute).
  const std::uint64_t* file_sizes = nullptr;
  /// Bytes the output frame holds (its topic's frame size); 0 without an output.
  std::uint64_t out_capacity = 0;
  /// The shared objects bound to the operator's slots: for each, the version this item's offset uses
  /// (see object_port; null for an optional slot left unbound); null for an operator that takes none.
  const std::byte* const* objects = nullptr;

  /// The version of the object in slot `slot` (declaration order) this item's frame uses, as elements of T;
  /// null when the operator takes no object there.
  template <class T>
  XF_HOST_DEVICE const T* object(std::uint32_t slot) const {
    return objects != nullptr ? reinterpret_cast<const T*>(objects[slot]) : nullptr;
  }
};

/// One GPU operator's work on one frame — or on one part of it: the GPU executor splits large frames
/// into contiguous parts that different blocks run at once — as seen by one virtual thread. `in` and
/// `out` point at element `first` of the frame and hold `count` elements; `thread_id` runs over
/// 0..thread_count-1 across the warps the round gave this work; compute must cover the elements for any
/// thread_count (grid-stride over elements) and must not use CUDA's own thread ids.
template <class T>
struct frame_task : item_context {
  const T* in = nullptr;
  T* out = nullptr;
  std::uint64_t count = 0;  ///< valid elements in `in` (and to write in `out`)
  std::uint64_t first = 0;  ///< index within the frame of in[0] and out[0] (0 unless the frame is in parts)

  /// Fails this frame with an operator-defined `code`: the run ends cleanly once the frame's round is
  /// over, and the error names the operator, its input topic, the offset and the code. Any virtual
  /// thread may call it, any number of times (one of the codes is reported). Device code never throws;
  /// this is how a GPU operator reports bad data.
  XF_HOST_DEVICE void fail(std::uint32_t code) const {
    if (failure != nullptr) store_relaxed(*failure, (std::uint64_t{1} << 32) | code);
  }
};

/// One GPU operator's call over one work item, untyped: what either executor hands the operator's
/// compute and reads (typed per element by task_of). Trivially copyable: the kernel keeps it in registers,
/// the host executor on a block's stack.
struct frame_call : item_context {
  const std::byte* in = nullptr;
  std::byte* out = nullptr;
  std::uint64_t bytes = 0;       ///< of the item (a part of a frame, or the whole frame)
  std::uint64_t first_byte = 0;  ///< of the item within the frame
};

/// The frame_task of element type T that `c` describes.
template <class T>
XF_HOST_DEVICE XF_FORCE_INLINE frame_task<T> task_of(const frame_call& c) {
  frame_task<T> task;
  static_cast<item_context&>(task) = c;
  task.in = reinterpret_cast<const T*>(c.in);
  task.out = reinterpret_cast<T*>(c.out);
  task.count = c.bytes / sizeof(T);
  task.first = c.first_byte / sizeof(T);
  return task;
}

/// The failure code a frame_task::fail word holds (0: none).
XF_HOST_DEVICE inline std::uint32_t failure_code(std::uint64_t word) {
  return static_cast<std::uint32_t>(word & 0xffffffffu);
}

/// A GPU sink: a GPU operator with an input and no output that folds every frame into an accumulator of
/// its own — the BigKernel paper's word count and affinity keep their tables in device memory and copy
/// them back once. Besides `params`, `describe` and `compute` (which reads `in`, finds `out` null and
/// updates `task.state` with atomics: every block and thread of the run shares it, and frames arrive in
/// any order), the type declares
///   static std::uint64_t state_bytes(const params&);      // the accumulator's size, > 0
///   static operator_counters finish(const params&, std::span<const std::byte> state);
/// finish runs on the host once the stream has ended and every frame was folded in (not after a failed
/// run), on a host copy of the accumulator: it turns it into the operator's counters (printed in the
/// stats), may write files, and throws to fail the run. The run's GPU sinks finish at once, each on a
/// thread: a finish touches only its own parameters, accumulator and files. Optionally the type also declares
///   static void prepare(const params&, std::span<std::byte> state);
/// which fills the zeroed accumulator on the host before the run (a table loaded from a file: the second
/// pass of a two-pass query); what it throws fails the run's start, naming the operator.
/// What a file reader's `reads` says of a stage: `more` — it added the ranges the stage needs (resident and
/// pinned before compute runs with that stage); `done` — the item is finished, its output published.
enum class read_step : std::uint32_t { more, done };

/// A GPU map that reads files (the GPUfs readahead paper's readers). Besides params, describe and
/// compute, the type declares
///   static void files(const params&, file_list&);       // the files it opens at start; file_id{k} is the
///   k-th template <class T> static XF_HOST_DEVICE read_step reads(const params&, const frame_task<T>&,
///   read_list&);
/// An item runs in stages k = 0, 1, …: `reads` (with task.stage = k and the carry) adds the ranges stage k
/// needs and returns `more`, or returns `done`; the framework makes them resident and calls compute with
/// task.files over them. `reads` must be a pure function of (params, input frame, offset, stage, carry):
/// every virtual thread may call it, and nothing inside compute ever waits for I/O. A plain reader adds its
/// ranges at stage 0 and returns `done` at stage 1. A range past its file's size fails the run, naming the
/// operator, the path and the bytes.
template <class Op>
concept gpu_file_reader = requires(const typename Op::params& p, file_list& files,
                                   const frame_task<std::uint32_t>& task, read_list& reads) {
  Op::files(p, files);
  { Op::template reads<std::uint32_t>(p, task, reads) } -> std::same_as<read_step>;
};

/// A GPU source that reads files: a file reader with no input topic. The framework streams offsets
/// 0 … frame_count − 1 through it; for each, `frame_bytes` is the frame's length and `reads` and `compute`
/// fill it (task.in null, task.count the frame's elements, task.out the frame, task.file_sizes set). Besides
/// params, describe, files, reads and compute, the type declares
///   static std::uint64_t frame_count(const params&, const std::uint64_t* file_sizes, std::uint64_t
///   capacity); static XF_HOST_DEVICE std::uint64_t frame_bytes(const params&, const std::uint64_t*
///   file_sizes,
///                                                   std::uint64_t capacity, std::uint64_t offset);
/// where `capacity` is the output topic's frame size. operators/sources/readahead_file_source.hpp is one.
template <class Op>
concept gpu_file_source = gpu_file_reader<Op> &&
    requires(const typename Op::params& p, const std::uint64_t* sizes, std::uint64_t n) {
  { Op::frame_count(p, sizes, n) } -> std::convertible_to<std::uint64_t>;
  { Op::frame_bytes(p, sizes, n, n) } -> std::convertible_to<std::uint64_t>;
};

template <class Op>
concept gpu_sink = requires(const typename Op::params& p, std::span<const std::byte> state) {
  { Op::state_bytes(p) } -> std::convertible_to<std::uint64_t>;
  { Op::finish(p, state) } -> std::convertible_to<operator_counters>;
};

/// A GPU sink whose accumulator is mostly room it may not fill (a projection's rows) declares
///   static constexpr std::uint64_t state_head_bytes = H;
///   static std::uint64_t state_bytes_used(const params&, std::span<const std::byte> head);
/// the bytes of its accumulator that hold the result, from its first H bytes: the device executor then
/// copies back the head and those bytes only (the rest stays as prepared), not the whole room.
template <class Op>
concept trimmed_sink = gpu_sink<Op> &&
    requires(const typename Op::params& p, std::span<const std::byte> head) {
  { Op::state_head_bytes } -> std::convertible_to<std::uint64_t>;
  { Op::state_bytes_used(p, head) } -> std::convertible_to<std::uint64_t>;
};

/// An operator that reads columnar frames (a columnar topic's; topics/columnar_view.hpp addresses them)
/// declares
///   static std::optional<param_problem> bind(params&, const topic_info& input);
/// which compiles its parameters against the input's columns (names → column indices, the page map
/// copied into params for the kernel) or says what is wrong with them. Validation calls it to report
/// the problem at the parameter's line, and every factory binds before the operator runs. Such an
/// operator reads one topic, and only a columnar one; every other operator reads row topics. A GPU one
/// may also declare
///   static void pages_read(const params&, const std::byte* frame, std::vector<frame_range>& out);
/// the byte ranges of an indexed frame (host memory) its compute may touch, in frame order: the index
/// pages, then the data pages that may hold a match. On a `dma` topic the copy engines then carry only
/// the ranges some GPU subscriber reads; compute must touch nothing else (the rest of the device copy is
/// stale). One that also declares
///   static void pages_bound(const params&, const std::byte* frame, std::vector<frame_range>& out);
/// (every range pages_read could give for the frame, found without reading its index) lets the host
/// stop reading the index of a reader whose index has been keeping everything (runtime.index_rest). A
/// columnar reader's counters `pages.<column>` and `pages_skipped.<column>` (data pages its index walk met,
/// and those the index ruled out) are summed per topic and column in the run's stats. An operator whose
/// parameters must agree with its (row) input topic (RAID-6: a frame is k blocks of block_size), or that
/// derives values from both once rather than per frame (raid6_recover's coefficients), declares
///   static std::optional<param_problem> bind_input(params&, const topic_info& input);
/// validation reports what it finds at the parameter it names (file:line:column); every factory binds
/// before the operator runs.
template <class Op>
concept input_binder = requires(typename Op::params& p, const topic_info& input) {
  { Op::bind_input(p, input) } -> std::same_as<std::optional<param_problem>>;
};

/// A GPU map with a CPU implementation of its own, a library's (ISA-L's RAID-6, OpenSSL's AES), declares
///   static std::unique_ptr<cpu_map> cpu_version(const params&);
/// placed `on: cpu` it runs that instead of its compute on the CPU threads; a null result (the library is
/// not in this build) falls back on the compute. It must write what compute writes, byte for byte.
template <class Op>
concept cpu_versioned = requires(const typename Op::params& p) {
  { Op::cpu_version(p) } -> std::same_as<std::unique_ptr<cpu_map>>;
};

template <class Op>
concept columnar_reader = requires(typename Op::params& p, const topic_info& input) {
  { Op::bind(p, input) } -> std::same_as<std::optional<param_problem>>;
};
template <class Op>
concept page_reader = columnar_reader<Op> &&
    requires(const typename Op::params& p, const std::byte* frame, std::vector<frame_range>& out) {
  Op::pages_read(p, frame, out);
};
template <class Op>
concept page_bounder = page_reader<Op> &&
    requires(const typename Op::params& p, const std::byte* frame, std::vector<frame_range>& out) {
  Op::pages_bound(p, frame, out);
};

/// The share of an input frame's bytes a GPU map's output frame holds: numerator / denominator (below 1:
/// it keeps part of it; above: it adds to it).
struct output_fraction {
  std::uint32_t numerator = 1;
  std::uint32_t denominator = 1;
  XF_HOST_DEVICE constexpr std::uint64_t of(std::uint64_t input_bytes) const {
    return input_bytes * numerator / denominator;
  }
  constexpr bool whole() const { return numerator == denominator; }
  constexpr bool operator==(const output_fraction&) const = default;
};

/// A GPU map's output frame is as long as its input unless the type declares its length as a share of the
/// input's, fixed:
///   static constexpr std::uint32_t output_numerator = N, output_denominator = D;
/// (kmeans_assign: a 4-byte id per 12-byte particle, 1/3), or set by its parameters:
///   static output_fraction output_share(const params&);
/// (raid6_encode: P and Q, 2 of a stripe's k blocks; or the stripe with them, (k + 2) / k). Only what the
/// consumer reads is published — and crosses PCIe. Such an operator computes whole frames (the executors
/// never split them into byte parts) and writes exactly that many bytes of its output.
template <class Op>
constexpr std::uint32_t output_numerator() {
  if constexpr (requires { Op::output_numerator; }) return Op::output_numerator;
  return 1;
}
template <class Op>
constexpr std::uint32_t output_denominator() {
  if constexpr (requires { Op::output_denominator; }) return Op::output_denominator;
  return 1;
}
template <class Op>
concept output_set_by_params = requires(const typename Op::params& p) {
  { Op::output_share(p) } -> std::same_as<output_fraction>;
};
/// Whether Op's output frames may differ in length from its input's.
template <class Op>
constexpr bool sized_output() {
  return output_set_by_params<Op> || output_numerator<Op>() != output_denominator<Op>();
}
/// The share of its input an Op with parameters p outputs.
template <class Op>
output_fraction output_share_of(const typename Op::params& p) {
  if constexpr (output_set_by_params<Op>)
    return Op::output_share(p);
  else
    return {output_numerator<Op>(), output_denominator<Op>()};
}

/// The element types an operator accepts on its topics: all of them unless the type declares
///   static constexpr element_set elements{element_type::f32};
/// Validation then refuses a topic of another type at the operator's `inputs` (or a source's `outputs`)
/// line, and the kernel's dispatch compiles the operator's code for those types only.
template <class Op>
constexpr element_set accepted_elements() {
  if constexpr (requires { Op::elements; }) return Op::elements;
  return element_set::all();
}

/// What the host executor throws when a GPU operator's compute called frame_task::fail.
struct frame_failed {
  std::uint32_t code;
};

/// A frame that the reference chain can compute for any offset: what a topic must hold there.
/// Thread-safe; used by verify sinks.
class frame_reference {
 public:
  virtual ~frame_reference() = default;
  /// Writes the expected frame at `offset` into `out` (capacity ≥ the topic's frame size) and returns
  /// true, or returns false when the stream has no frame there (past its end).
  virtual bool expected(std::uint64_t offset, frame_out& out) const = 0;
  /// P when the stream repeats with period P: the frame at any offset o but the stream's last (which may
  /// be short) equals the frame at o % P, so a consumer may compute what it needs of each of P frames once
  /// and reuse it. 0 (the default): not periodic, or not known to be.
  virtual std::uint64_t period() const { return 0; }
  /// Phases of the stream (see map_phases): with a period P, frames at o and o' are equal when o % P ==
  /// o' % P and phase_of(o) == phase_of(o') (the stream's last frame excepted).
  virtual std::uint32_t phase_count() const { return 1; }
  virtual std::uint32_t phase_of(std::uint64_t /*offset*/) const { return 0; }
  /// The stream's frame count when known without replaying (expected() then holds for exactly the offsets
  /// below it), or nullopt. Finding the end by replaying costs a chain's whole compute per probe: ~20
  /// replays of a 4 MiB frame through four FMA-64 maps took seconds before a verify sink could start.
  virtual std::optional<std::uint64_t> frame_count() const { return std::nullopt; }
};

}  // namespace xf
