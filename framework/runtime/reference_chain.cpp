// Reference replay of topics for verify sinks.
#include "framework/runtime/reference_chain.hpp"

#include <unordered_map>

#include "framework/core/page_buffer.hpp"
#include "framework/model/columnar_checks.hpp"
#include "framework/model/direct_reader.hpp"

namespace xf {
namespace {

/// A per-thread scratch frame for each reference object: replays run concurrently on sink threads.
page_buffer& scratch_for(const void* owner, std::uint64_t bytes) {
  thread_local std::unordered_map<const void*, page_buffer> scratch;
  auto& buffer = scratch[owner];
  buffer.reserve(bytes);
  return buffer;
}

/// Replays a source through its produce() (contract: a function of the offset). Not periodic: a source
/// that knows its period is its own frame_reference and is used directly.
class source_reference final : public frame_reference {
 public:
  explicit source_reference(cpu_source* source) : source_(source) {}
  bool expected(std::uint64_t offset, frame_out& out) const override {
    out.bytes = 0;
    return source_->produce(offset, out);
  }

 private:
  cpu_source* source_;
};

/// Replays a file source the kernel's blocks ran through the cache: its frames read again with direct reads.
class file_source_reference final : public frame_reference {
 public:
  file_source_reference(const host_kernel_op& source, std::uint64_t capacity, element_type element,
                        const fault_site& site)
      : source_(source),
        reader_(source, site),
        capacity_(capacity),
        element_(element),
        site_(site),
        frames_(source.frame_count(reader_.file_sizes(), capacity)) {}
  bool expected(std::uint64_t offset, frame_out& out) const override {
    if (offset >= frames_) return false;
    out.bytes = source_.frame_bytes(reader_.file_sizes(), capacity_, offset);
    reader_.run(frame_in{nullptr, 0, element_}, out, offset, site_);
    return true;
  }
  std::optional<std::uint64_t> frame_count() const override { return frames_; }

 private:
  const host_kernel_op& source_;
  direct_reader reader_;
  std::uint64_t capacity_;
  element_type element_;
  fault_site site_;
  std::uint64_t frames_;
};

class map_reference final : public frame_reference {
 public:
  /// `site`: the map's operator and input topic, for the errors of a file reader's replay.
  map_reference(const frame_reference* upstream, std::uint64_t input_frame_bytes, element_type input_element,
                cpu_map* map, const host_kernel_op* kernel, const fault_site& site, const operator_info& info)
      : upstream_(upstream),
        input_frame_bytes_(input_frame_bytes),
        input_element_(input_element),
        map_(map),
        kernel_(kernel),
        phases_(kernel ? kernel->phases() : map->phases()),
        site_(site),
        info_(info) {
    // A file reader the kernel's blocks ran through the cache is replayed with direct reads.
    if (kernel_ != nullptr && kernel_->reads_files())
      reader_ = std::make_unique<direct_reader>(*kernel_, site_);
  }

  bool expected(std::uint64_t offset, frame_out& out) const override {
    auto& buffer = scratch_for(this, input_frame_bytes_);
    frame_out upstream_frame{buffer.data(), input_frame_bytes_, 0, input_element_};
    if (!upstream_->expected(offset, upstream_frame)) return false;
    frame_in in{buffer.data(), upstream_frame.bytes, input_element_};
    out.bytes = kernel_ ? kernel_->output_bytes(in.bytes) : in.bytes;  // a CPU map sets its own
    try {
      if (reader_)
        reader_->run(in, out, offset, site_);
      else if (kernel_)
        kernel_->run_frame(in, &out, offset);
      else
        map_->replay(offset, in, out);
    } catch (const frame_failed& f) {
      // The replay fails the frame as the operator itself would have: the same error, naming it (a
      // frame_failed is no std::exception, and would end the process from a verify sink's on_start).
      throw run_error(fault_site{site_.operator_name, site_.topic, offset},
                      frame_failed_reason(f.code, info_.failure_meaning(f.code)));
    }
    return true;
  }

  /// The upstream's period. This assumes the map is a function of its input frame's content only, so a
  /// periodic input gives an output of the same period: true of the built-in maps (scale, fma,
  /// pass_through). A map that depends on the offset (apps/custom_operator's xor_mask) breaks it, and
  /// must not be verified by a consumer that trusts period() (verify_sink's checksum mode).
  std::uint64_t period() const override { return upstream_->period(); }
  /// The upstream's phases times the map's own (a map that declares phases changes its function there).
  std::uint32_t phase_count() const override { return upstream_->phase_count() * phases_.count; }
  std::uint32_t phase_of(std::uint64_t offset) const override {
    const std::uint32_t own = phases_.count > 1 && phases_.of ? phases_.of(offset) : 0;
    return upstream_->phase_of(offset) * phases_.count + own;
  }
  /// A map has a frame wherever its input has one.
  std::optional<std::uint64_t> frame_count() const override { return upstream_->frame_count(); }

 private:
  const frame_reference* upstream_;
  std::uint64_t input_frame_bytes_;
  element_type input_element_;
  cpu_map* map_;
  const host_kernel_op* kernel_;
  map_phases phases_;
  fault_site site_;
  const operator_info& info_;
  std::unique_ptr<direct_reader> reader_;
};

}  // namespace

reference_chain::reference_chain(const plan& p, const std::vector<operator_instance>& instances)
    : by_topic_(p.topics.size(), nullptr) {
  // Topics in start order: a topic's publisher is placed before its subscribers, so upstream references
  // exist when a map's reference is built.
  for (std::size_t i : p.start_order) {
    const planned_operator& po = p.operators[i];
    if (po.outputs.size() != 1) continue;
    const std::size_t out = po.outputs[0];
    // An operator that reads shared objects computes with the version of each frame's offset, which a replay
    // later may no longer find (the writer reuses its buffers): not replayable.
    if (p.topics[out].publishers.size() != 1 || !po.entry->info.replayable || !po.objects.empty()) continue;
    const operator_instance& inst = instances[i];
    if (po.entry->info.role == operator_role::source) {
      if (inst.kernel != nullptr && inst.kernel->is_source()) {
        const topic_spec& t = *p.topics[out].spec;
        owned_.push_back(std::make_unique<file_source_reference>(
            *inst.kernel, t.frame_bytes, t.element, fault_site{po.spec->name, t.name, std::nullopt}));
        by_topic_[out] = owned_.back().get();
        continue;
      }
      auto* source = dynamic_cast<cpu_source*>(inst.cpu.get());
      if (!source) continue;
      // A source may replay itself (dataset_source does, to report its period and to keep replays out
      // of its in-place bookkeeping); otherwise its produce() is the replay.
      if (const auto* own = dynamic_cast<const frame_reference*>(source)) {
        by_topic_[out] = own;
        continue;
      }
      owned_.push_back(std::make_unique<source_reference>(source));
    } else if (po.entry->info.role == operator_role::map && po.inputs.size() == 1) {
      const frame_reference* upstream = by_topic_[po.inputs[0]];
      if (!upstream) continue;
      const topic_spec& in = *p.topics[po.inputs[0]].spec;
      auto* map = dynamic_cast<cpu_map*>(inst.cpu.get());
      const host_kernel_op* kernel = inst.kernel.get();
      if (!map && !kernel) continue;
      // Two implementations: the library checks the compute that ran on the GPU (or the host executor's
      // blocks), and the compute checks the library that ran on CPU threads (make_cpu chose it there).
      if (po.entry->make_cpu_version) {
        const std::vector<topic_info> inputs{topic_info_of(in)};
        if (std::unique_ptr<cpu_map> library = po.entry->make_cpu_version(po.spec->params, inputs)) {
          if (kernel != nullptr) {
            replay_maps_.push_back(std::move(library));
            map = replay_maps_.back().get();
            kernel = nullptr;
          } else {
            replay_kernels_.push_back(po.entry->make_host_kernel(po.spec->params, inputs));
            kernel = replay_kernels_.back().get();
            map = nullptr;
          }
        }
      }
      owned_.push_back(std::make_unique<map_reference>(upstream, in.frame_bytes, in.element, map, kernel,
                                                       fault_site{po.spec->name, in.name, std::nullopt},
                                                       po.entry->info));
    } else {
      continue;
    }
    by_topic_[out] = owned_.back().get();
  }
}

reference_chain::~reference_chain() = default;

whole_topology_replay::whole_topology_replay(const plan& whole, const std::atomic<bool>* interrupted)
    : whole_(whole), instances_(whole.operators.size()), started_(whole.operators.size(), false) {
  for (std::size_t i : whole.start_order) {
    const planned_operator& po = whole.operators[i];
    const operator_role role = po.entry->info.role;
    // Only what a chain replays: sources and maps that take no shared object (reference_chain skips the
    // others). One that cannot be made or started here leaves its topic's chain unreplayable: a verify
    // sink downstream then says so.
    if ((role != operator_role::source && role != operator_role::map) || !po.objects.empty() ||
        !po.entry->info.replayable)
      continue;
    std::vector<topic_info> inputs;
    for (std::size_t t : po.inputs) inputs.push_back(topic_info_of(*whole.topics[t].spec));
    try {
      if (po.in_kernel) {
        instances_[i].kernel = po.entry->make_host_kernel(po.spec->params, inputs);
        continue;
      }
      instances_[i].cpu = po.entry->make_cpu(po.spec->params, inputs);
      if (role != operator_role::source) continue;
      operator_setup setup;
      setup.name = po.spec->name;
      setup.threads = po.workers;
      setup.interrupted = interrupted;
      for (std::size_t t : po.outputs) setup.outputs.push_back(topic_info_of(*whole.topics[t].spec));
      instances_[i].cpu->on_start(setup);
      started_[i] = true;
    } catch (const std::exception&) {
      instances_[i] = {};
    }
  }
  chain_ = std::make_unique<reference_chain>(whole, instances_);
}

whole_topology_replay::~whole_topology_replay() {
  chain_.reset();
  for (std::size_t i = 0; i < instances_.size(); ++i)
    if (started_[i]) {
      try {
        instances_[i].cpu->on_stop();
      } catch (...) {  // a replay copy's stop says nothing about the run
      }
    }
}

const frame_reference* whole_topology_replay::for_topic(const topic_spec* t) const {
  for (std::size_t k = 0; k < whole_.topics.size(); ++k)
    if (whole_.topics[k].spec == t) return chain_->for_topic(k);
  return nullptr;
}

}  // namespace xf
