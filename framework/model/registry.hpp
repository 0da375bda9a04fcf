// The operator registry: class names → factories and contracts. Registration is explicit: a CPU operator
// one line each (`registry.add<file_sink>("file_sink");`), GPU operators by their list
// (`registry.add_gpu_operators<builtin_gpu_operators>();`, each under its class_name), the same list that
// builds the kernel. Built-in operators join through `register_builtin_operators` (operators/builtin.hpp);
// a user's launcher adds its own next to them (framework/launch/launcher.hpp).
#pragma once

#include <array>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeindex>
#include <vector>

#include "framework/model/direct_reader.hpp"
#include "framework/model/gpu_operator_list.hpp"
#include "framework/model/host_kernel_op.hpp"
#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"

namespace xf {

using param_map = std::map<std::string, param_value>;

/// The factories take the operator's parameters and its input topics: an operator that reads columnar
/// frames binds its parameters to the input's columns (columnar_reader); others ignore them.
struct operator_entry {
  operator_info info;
  /// Makes the operator to run on CPU threads. GPU classes get an adapter running compute on the thread.
  std::function<std::unique_ptr<cpu_operator>(const param_map&, const std::vector<topic_info>&)> make_cpu;
  /// GPU classes only: the compute, for the host executor's virtual warps.
  std::function<std::unique_ptr<host_kernel_op>(const param_map&, const std::vector<topic_info>&)>
      make_host_kernel;
  /// GPU classes only: the operator's C++ type, by which a fused kernel (framework/gpu/fused_kernel.cuh)
  /// finds its device code, and its params struct as bytes, for the kernel's parameter arena.
  std::optional<std::type_index> gpu_type;
  std::function<std::vector<std::byte>(const param_map&, const std::vector<topic_info>&)> make_gpu_params;
  /// GPU maps with a library implementation (cpu_versioned): that implementation, or null where this
  /// build lacks the library. make_cpu runs it when the map is placed on: cpu; verify sinks replay the
  /// map with whichever of it and the compute did not run (reference_chain).
  std::function<std::unique_ptr<cpu_map>(const param_map&, const std::vector<topic_info>&)> make_cpu_version;
};

namespace detail {

/// Calls fn(T{}) with the C++ type of `e`, compiled only for the types Op accepts (accepted_elements);
/// validation refuses topics of other types, so another one here is the framework's bug.
template <class Op, class Fn>
void visit_accepted(element_type e, Fn&& fn) {
  visit_element(e, [&](auto zero) {
    if constexpr (accepted_elements<Op>().contains(element_of<decltype(zero)>::value))
      fn(zero);
    else
      throw std::logic_error("an operator ran on a topic of element type " + std::string(name_of(e)) +
                             ", which it does not accept (validation refuses such topologies)");
  });
}

/// The params `values` make, bound to the input topic when Op reads columnar frames (columnar_reader):
/// what binding finds wrong throws (validation reported it first, at the parameter's line).
template <class Op, class Schema>
typename Op::params bound_params(const Schema& schema, const param_map& values,
                                 const std::vector<topic_info>& inputs) {
  typename Op::params p = schema.make(values);
  std::optional<param_problem> problem;
  if constexpr (columnar_reader<Op>) {
    if (inputs.size() != 1) throw std::invalid_argument("reads one columnar topic");
    problem = Op::bind(p, inputs.front());
  }
  if constexpr (input_binder<Op>) {
    if (inputs.size() != 1) throw std::invalid_argument("reads one topic");
    problem = Op::bind_input(p, inputs.front());
  }
  if (problem)
    throw std::invalid_argument(
        problem->key.empty() ? problem->message : "parameter '" + problem->key + "': " + problem->message);
  return p;
}

/// Op::compute over virtual threads [begin, end) of the item `c` describes, elements of type e.
template <class Op>
void run_gpu_compute(const typename Op::params& p, const frame_call& c, element_type e, std::uint32_t begin,
                     std::uint32_t end) {
  visit_accepted<Op>(e, [&](auto zero) {
    frame_task<decltype(zero)> task = task_of<decltype(zero)>(c);
    for (std::uint32_t t = begin; t < end; ++t) {
      task.thread_id = t;
      Op::compute(p, task);
    }
  });
}

/// Op::reads over the item `c` describes (its files null: reads never see pages).
template <gpu_file_reader Op>
read_step reader_reads(const typename Op::params& p, const frame_call& c, element_type e, read_list& list) {
  frame_call call = c;
  call.files = nullptr;
  read_step step = read_step::done;
  visit_accepted<Op>(e, [&](auto zero) {
    step = Op::template reads<decltype(zero)>(p, task_of<decltype(zero)>(call), list);
  });
  return step;
}

/// Op::prepare over a fresh accumulator when the sink declares it (see gpu_sink).
template <class Op>
void prepare_accumulator(const typename Op::params& p, std::span<std::byte> state) {
  if constexpr (requires { Op::prepare(p, state); }) Op::prepare(p, state);
}

/// A GPU sink's accumulator in host memory: zeroed, aligned for any atomic the operator uses on it.
/// Large ones are fresh anonymous pages, zero without being written: an accumulator that is mostly room
/// (a projection's rows) costs only the pages its result touches.
class host_accumulator {
 public:
  explicit host_accumulator(std::uint64_t bytes);
  ~host_accumulator();
  host_accumulator(const host_accumulator&) = delete;
  host_accumulator& operator=(const host_accumulator&) = delete;
  std::span<std::byte> bytes() const noexcept { return {data_, bytes_}; }

 private:
  static constexpr std::size_t alignment = 256;  // as cudaMalloc's, so layouts match on both sides
  static constexpr std::uint64_t mapped_from = 1u << 20;
  std::uint64_t bytes_;
  std::byte* data_;
};

/// Op::state_bytes, checked: an accumulator of zero bytes is an operator bug, not a user's.
template <class Op>
std::uint64_t accumulator_bytes(const typename Op::params& p) {
  const std::uint64_t bytes = Op::state_bytes(p);
  if (bytes == 0) throw std::logic_error("a GPU sink's state_bytes must be positive");
  return bytes;
}

/// A GPU operator's phases: `static map_phases phases(const params&)` when it declares one, else one.
template <class Op>
map_phases phases_of(const typename Op::params& p) {
  if constexpr (requires {
                  { Op::phases(p) } -> std::convertible_to<map_phases>;
                })
    return Op::phases(p);
  else
    return {};
}

template <class Op>
class gpu_op_on_host final : public host_kernel_op {
 public:
  explicit gpu_op_on_host(typename Op::params p) : params_(p) {}
  void run(const frame_call& c, element_type e, std::uint32_t begin, std::uint32_t end) const override {
    run_gpu_compute<Op>(params_, c, e, begin, end);
  }
  bool reads_files() const override { return gpu_file_reader<Op>; }
  file_list files() const override {
    file_list list;
    if constexpr (gpu_file_reader<Op>) Op::files(params_, list);
    return list;
  }
  read_step reads(const frame_call& c, element_type e, read_list& list) const override {
    if constexpr (gpu_file_reader<Op>) return reader_reads<Op>(params_, c, e, list);
    return read_step::done;
  }
  bool is_source() const override { return gpu_file_source<Op>; }
  std::uint64_t frame_count(const std::uint64_t* sizes, std::uint64_t capacity) const override {
    if constexpr (gpu_file_source<Op>) return Op::frame_count(params_, sizes, capacity);
    return 0;
  }
  std::uint64_t frame_bytes(const std::uint64_t* sizes, std::uint64_t capacity,
                            std::uint64_t offset) const override {
    if constexpr (gpu_file_source<Op>) return Op::frame_bytes(params_, sizes, capacity, offset);
    return 0;
  }
  map_phases phases() const override { return phases_of<Op>(params_); }
  bool reads_pages() const override { return page_reader<Op>; }
  void pages_read(const std::byte* frame, std::vector<frame_range>& out) const override {
    if constexpr (page_reader<Op>) Op::pages_read(params_, frame, out);
  }
  bool pages_bound(const std::byte* frame, std::vector<frame_range>& out) const override {
    if constexpr (page_bounder<Op>) {
      Op::pages_bound(params_, frame, out);
      return true;
    }
    return false;
  }
  std::uint64_t output_bytes(std::uint64_t input_bytes) const override {
    return output_share_of<Op>(params_).of(input_bytes);
  }

 private:
  typename Op::params params_;
};

template <gpu_sink Op>
class gpu_sink_on_host final : public host_kernel_op {
 public:
  explicit gpu_sink_on_host(typename Op::params p) : params_(p), state_(accumulator_bytes<Op>(p)) {
    prepare_accumulator<Op>(params_, state_.bytes());
  }
  void run(const frame_call& c, element_type e, std::uint32_t begin, std::uint32_t end) const override {
    frame_call call = c;
    call.out = nullptr;
    call.state = state_.bytes().data();
    run_gpu_compute<Op>(params_, call, e, begin, end);
  }
  std::span<std::byte> accumulator() override { return state_.bytes(); }
  std::uint64_t accumulator_size() const override { return state_.bytes().size(); }
  bool accumulator_prepared() const override {
    return requires(const typename Op::params& p, std::span<std::byte> state) {
      Op::prepare(p, state);
    };
  }
  std::uint64_t accumulator_head_bytes() const override {
    if constexpr (trimmed_sink<Op>) return Op::state_head_bytes;
    return 0;
  }
  std::uint64_t accumulator_bytes_used(std::span<const std::byte> head) const override {
    if constexpr (trimmed_sink<Op>)
      return std::min<std::uint64_t>(Op::state_bytes_used(params_, head), accumulator_size());
    return accumulator_size();
  }
  operator_counters finish() const override { return Op::finish(params_, state_.bytes()); }
  bool reads_pages() const override { return page_reader<Op>; }
  void pages_read(const std::byte* frame, std::vector<frame_range>& out) const override {
    if constexpr (page_reader<Op>) Op::pages_read(params_, frame, out);
  }
  bool pages_bound(const std::byte* frame, std::vector<frame_range>& out) const override {
    if constexpr (page_bounder<Op>) {
      Op::pages_bound(params_, frame, out);
      return true;
    }
    return false;
  }

 private:
  typename Op::params params_;
  host_accumulator state_;
};

/// The shared objects of a GPU operator placed `on: cpu`: for each frame, the versions its offset asks for,
/// through the ports its CPU adapter was given (item_context::objects as the kernel's round would set it).
class cpu_object_versions {
 public:
  static constexpr std::size_t max_slots = 8;
  void bind(const operator_setup& setup) {
    XF_EXPECTS(setup.objects.size() <= max_slots, "at most 8 shared objects an operator");
    ports_ = setup.objects;
  }
  /// Where frame `offset`'s versions are (null when the operator takes none); `room` holds them.
  const std::byte* const* of(std::uint64_t offset, std::array<const std::byte*, max_slots>& room) const {
    if (ports_.empty()) return nullptr;
    for (std::size_t i = 0; i < ports_.size(); ++i)
      room[i] = ports_[i] != nullptr ? ports_[i]->read(offset).bytes.data() : nullptr;
    return room.data();
  }

 private:
  std::vector<object_port*> ports_;
};

/// Runs a whole frame of a GPU operator on one virtual thread; throws frame_failed when compute failed it.
template <class Op>
void run_frame_on_cpu(const typename Op::params& p, const frame_in& in, frame_out* out, std::byte* state,
                      std::uint64_t offset, const cpu_object_versions* objects = nullptr) {
  frame_call c = whole_frame_call(in, out, offset);
  c.state = state;
  std::array<const std::byte*, cpu_object_versions::max_slots> room{};
  if (objects != nullptr) c.objects = objects->of(offset, room);
  std::uint64_t failure = 0;
  c.failure = &failure;
  run_gpu_compute<Op>(p, c, in.element, 0, 1);
  if (failure != 0) throw frame_failed{failure_code(failure)};
}

/// A GPU map placed `on: cpu`: its compute runs on CPU threads, one virtual thread per frame.
template <class Op>
class gpu_op_on_cpu final : public cpu_map {
 public:
  explicit gpu_op_on_cpu(typename Op::params p) : params_(p) {}
  void on_start(const operator_setup& setup) override { objects_.bind(setup); }
  void on_frame(std::uint64_t offset, const frame_in& in, frame_out& out) override {
    out.bytes = output_share_of<Op>(params_).of(in.bytes);
    run_frame_on_cpu<Op>(params_, in, &out, nullptr, offset, &objects_);
  }
  map_phases phases() const override { return phases_of<Op>(params_); }

 private:
  typename Op::params params_;
  cpu_object_versions objects_;
};

/// A GPU file reader placed `on: cpu`: each frame's stages read their ranges synchronously (direct_reader,
/// over files of the operator's own) and compute runs one virtual thread per stage.
template <gpu_file_reader Op>
class gpu_reader_on_cpu final : public cpu_map {
 public:
  explicit gpu_reader_on_cpu(typename Op::params p) : compute_(p), phases_(phases_of<Op>(p)) {}
  void on_start(const operator_setup& setup) override {
    site_ = {setup.name, setup.inputs.empty() ? "" : setup.inputs.front().name, std::nullopt};
    reader_.emplace(compute_, site_);
  }
  void on_frame(std::uint64_t offset, const frame_in& in, frame_out& out) override {
    XF_EXPECTS(reader_.has_value(), "a file reader's frames after on_start");
    out.bytes = compute_.output_bytes(in.bytes);
    reader_->run(in, out, offset, site_);
  }
  void on_stop() override { reader_.reset(); }
  map_phases phases() const override { return phases_; }

 private:
  gpu_op_on_host<Op> compute_;
  map_phases phases_;
  fault_site site_;
  std::optional<direct_reader> reader_;
};

/// A GPU file source placed `on: cpu`: its frames are read with direct reads on the source's threads (any
/// thread any frame), compute running one virtual thread per stage.
template <gpu_file_source Op>
class gpu_source_on_cpu final : public cpu_source {
 public:
  explicit gpu_source_on_cpu(typename Op::params p) : compute_(p) {}
  void on_start(const operator_setup& setup) override {
    XF_EXPECTS(setup.outputs.size() == 1, "a source has one output topic");
    const topic_info& out = setup.outputs.front();
    site_ = {setup.name, out.name, std::nullopt};
    capacity_ = out.frame_bytes;
    reader_.emplace(compute_, site_);
    frames_ = compute_.frame_count(reader_->file_sizes(), capacity_);
  }
  bool produce(std::uint64_t offset, frame_out& out) override {
    XF_EXPECTS(reader_.has_value(), "a file source's frames after on_start");
    if (offset >= frames_) return false;
    out.bytes = compute_.frame_bytes(reader_->file_sizes(), capacity_, offset);
    reader_->run(frame_in{nullptr, 0, out.element}, out, offset, site_);
    return true;
  }
  void on_stop() override { reader_.reset(); }

 private:
  gpu_op_on_host<Op> compute_;
  fault_site site_;
  std::uint64_t capacity_ = 0, frames_ = 0;
  std::optional<direct_reader> reader_;
};

/// A GPU sink placed `on: cpu`: its compute folds each frame on the sink's threads (one virtual thread
/// per frame); on_stop finishes the accumulator unless the run was interrupted before the stream ended.
template <gpu_sink Op>
class gpu_sink_on_cpu final : public cpu_sink {
 public:
  explicit gpu_sink_on_cpu(typename Op::params p) : params_(p), state_(accumulator_bytes<Op>(p)) {
    prepare_accumulator<Op>(params_, state_.bytes());
  }
  void on_start(const operator_setup& setup) override {
    interrupted_ = setup.interrupted;
    objects_.bind(setup);
  }
  void on_frame(std::uint64_t offset, const frame_in& in) override {
    run_frame_on_cpu<Op>(params_, in, nullptr, state_.bytes().data(), offset, &objects_);
  }
  void on_stop() override {
    if (interrupted_ != nullptr && interrupted_->load()) return;  // a partial fold is not the result
    counters_ = Op::finish(params_, state_.bytes());
  }
  operator_counters counters() const override { return counters_; }

 private:
  typename Op::params params_;
  host_accumulator state_;
  const std::atomic<bool>* interrupted_ = nullptr;
  operator_counters counters_;
  cpu_object_versions objects_;
};

}  // namespace detail

class operator_registry {
 public:
  /// Registers the CPU operator `Op` (derives from cpu_source, cpu_map or cpu_sink, constructible from
  /// `const Op::params&`, with `static void describe(operator_schema<params>&)`) under `class_name`.
  template <class Op>
  void add(const std::string& class_name) {
    static_assert(
        std::is_base_of_v<cpu_operator, Op>,
        "GPU operators join through add_gpu_operators<List>: the gpu_operator_list that also builds "
        "the launcher's kernel (XF_KERNEL), so none is registered without being compiled in");
    add_entry<Op>(class_name);
  }

  /// Registers every GPU operator of `List` (a gpu_operator_list, nested lists flattened) under its
  /// `class_name`. A GPU operator is a struct with trivially copyable `params`, `static void
  /// describe(operator_schema<params>&)` and a `template <class T> static XF_HOST_DEVICE void
  /// compute(const params&, const frame_task<T>&)`: a map, a sink when it also declares an accumulator
  /// (gpu_sink), a file reader or a file source (operator.hpp).
  template <class List>
  void add_gpu_operators() {
    add_all(flatten<List>{});
  }

  const operator_entry* find(std::string_view class_name) const;
  std::vector<std::string> class_names() const;        ///< sorted
  std::vector<const operator_entry*> entries() const;  ///< sorted by class name

 private:
  template <class... Ops>
  void add_all(gpu_operator_list<Ops...>) {
    static_assert(
        (named_gpu_operator<Ops> && ...),
        "every GPU operator declares its class name: static constexpr char class_name[] = \"...\";");
    static_assert(((!std::is_base_of_v<cpu_operator, Ops>)&&...), "a gpu_operator_list holds GPU operators");
    (add_entry<Ops>(std::string(Ops::class_name)), ...);
  }

  template <class Op>
  void add_entry(const std::string& class_name) {
    using params = typename Op::params;
    static_assert(std::is_trivially_copyable_v<params> || std::is_base_of_v<cpu_operator, Op>,
                  "a GPU operator's params must be trivially copyable");
    auto entry = std::make_unique<operator_entry>();
    entry->info.class_name = class_name;
    entry->info.elements = accepted_elements<Op>();
    operator_schema<params> schema(entry->info);
    Op::describe(schema);
    if (schema.checks_params())
      entry->info.check_values = [schema](const param_map& values) { return schema.params_problem(values); };
    for (const std::size_t slot : schema.checked_objects())
      entry->info.objects[slot].check = [schema, slot](const param_map& values, std::uint64_t bytes) {
        return schema.object_problem(slot, values, bytes);
      };
    if constexpr (columnar_reader<Op>) {
      entry->info.reads_columnar = true;
      entry->info.bind_check = [schema](const param_map& values,
                                        const topic_info& input) -> std::optional<param_problem> {
        typename Op::params p = schema.make(values);
        return Op::bind(p, input);
      };
    }
    if constexpr (input_binder<Op>)
      entry->info.input_check = [schema](const param_map& values, const topic_info& input) {
        typename Op::params p = schema.make(values);
        return Op::bind_input(p, input);
      };
    if constexpr (std::is_base_of_v<cpu_operator, Op>) {
      entry->info.role = std::is_base_of_v<cpu_source, Op> ? operator_role::source
                         : std::is_base_of_v<cpu_sink, Op> ? operator_role::sink
                                                           : operator_role::map;
      entry->make_cpu = [schema](const param_map& values,
                                 const std::vector<topic_info>& inputs) -> std::unique_ptr<cpu_operator> {
        return std::make_unique<Op>(detail::bound_params<Op>(schema, values, inputs));
      };
    } else if constexpr (gpu_sink<Op>) {
      entry->info.role = operator_role::sink;
      entry->info.gpu = true;
      entry->make_cpu = [schema](const param_map& values,
                                 const std::vector<topic_info>& inputs) -> std::unique_ptr<cpu_operator> {
        return std::make_unique<detail::gpu_sink_on_cpu<Op>>(
            detail::bound_params<Op>(schema, values, inputs));
      };
      entry->make_host_kernel =
          [schema](const param_map& values,
                   const std::vector<topic_info>& inputs) -> std::unique_ptr<host_kernel_op> {
        return std::make_unique<detail::gpu_sink_on_host<Op>>(
            detail::bound_params<Op>(schema, values, inputs));
      };
    } else if constexpr (gpu_file_source<Op>) {
      entry->info.role = operator_role::source;
      entry->info.gpu = true;
      entry->info.reads_files = true;
      entry->make_cpu = [schema](const param_map& values,
                                 const std::vector<topic_info>& inputs) -> std::unique_ptr<cpu_operator> {
        return std::make_unique<detail::gpu_source_on_cpu<Op>>(
            detail::bound_params<Op>(schema, values, inputs));
      };
      entry->make_host_kernel =
          [schema](const param_map& values,
                   const std::vector<topic_info>& inputs) -> std::unique_ptr<host_kernel_op> {
        return std::make_unique<detail::gpu_op_on_host<Op>>(detail::bound_params<Op>(schema, values, inputs));
      };
    } else {
      entry->info.role = operator_role::map;
      entry->info.gpu = true;
      static_assert(output_numerator<Op>() >= 1 && output_denominator<Op>() >= 1,
                    "a GPU map's output share is a positive fraction of its input frame");
      if constexpr (sized_output<Op>())
        entry->info.output_share = [schema](const param_map& values) {
          const output_fraction share = output_share_of<Op>(schema.make(values));
          XF_EXPECTS(
              share.numerator >= 1 && share.denominator >= 1,
              "a GPU map's output share is a positive fraction of its input frame (check its parameters)");
          return share;
        };
      if (sized_output<Op>() && !entry->info.whole_frames)
        throw std::logic_error(
            "operator class '" + class_name +
            "': a map whose output is not as long as its input must compute whole frames (describe: "
            "whole_frames())");
      // Readers placed on: cpu read directly; on the host executor's blocks through the file cache.
      if constexpr (gpu_file_reader<Op>) {
        entry->info.reads_files = true;
        entry->make_cpu = [schema](const param_map& values,
                                   const std::vector<topic_info>& inputs) -> std::unique_ptr<cpu_operator> {
          return std::make_unique<detail::gpu_reader_on_cpu<Op>>(
              detail::bound_params<Op>(schema, values, inputs));
        };
      } else {
        entry->make_cpu = [schema](const param_map& values,
                                   const std::vector<topic_info>& inputs) -> std::unique_ptr<cpu_operator> {
          const typename Op::params p = detail::bound_params<Op>(schema, values, inputs);
          if constexpr (cpu_versioned<Op>)
            if (std::unique_ptr<cpu_map> library = Op::cpu_version(p)) return library;
          return std::make_unique<detail::gpu_op_on_cpu<Op>>(p);
        };
        if constexpr (cpu_versioned<Op>)
          entry->make_cpu_version = [schema](const param_map& values, const std::vector<topic_info>& inputs) {
            return Op::cpu_version(detail::bound_params<Op>(schema, values, inputs));
          };
      }
      entry->make_host_kernel =
          [schema](const param_map& values,
                   const std::vector<topic_info>& inputs) -> std::unique_ptr<host_kernel_op> {
        return std::make_unique<detail::gpu_op_on_host<Op>>(detail::bound_params<Op>(schema, values, inputs));
      };
    }
    if constexpr (!std::is_base_of_v<cpu_operator, Op>) {
      if constexpr (requires {
                      { Op::failure_reason(std::uint32_t{}) } -> std::convertible_to<const char*>;
                    })
        entry->info.failure_reason = [](std::uint32_t code) {
          const char* text = Op::failure_reason(code);
          return std::string(text != nullptr ? text : "");
        };
      entry->gpu_type = std::type_index(typeid(Op));
      entry->make_gpu_params = [schema](const param_map& values, const std::vector<topic_info>& inputs) {
        const params p = detail::bound_params<Op>(schema, values, inputs);
        std::vector<std::byte> bytes(sizeof(params));
        std::memcpy(bytes.data(), &p, sizeof(params));
        return bytes;
      };
    }
    insert(std::move(entry));
  }

  void insert(std::unique_ptr<operator_entry> entry);
  std::map<std::string, std::unique_ptr<operator_entry>, std::less<>> entries_;
};

}  // namespace xf
