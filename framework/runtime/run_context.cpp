// The run's shared state: topics, operators, file cache, and the one conversion of exceptions to errors.
#include "framework/runtime/run_context.hpp"

#include <algorithm>

#include "framework/model/columnar_checks.hpp"
#include "framework/model/pages_read.hpp"

namespace xf {

run_context::run_context(const plan& p, const topology_spec& spec, run_control& control)
    : plan_(p), spec_(spec), control_(control), counters_(p.operators.size()) {
  if (trace::enabled())
    for (const planned_operator& po : p.operators)
      trace_names_.push_back(trace::intern(po.spec->name, "operator", "offset"));
}

std::vector<topic_info> run_context::input_infos(std::size_t op) const {
  std::vector<topic_info> inputs;
  for (std::size_t t : plan_.operators[op].inputs) inputs.push_back(topic_info_of(*plan_.topics[t].spec));
  return inputs;
}

void run_context::make_operators() {
  instances_.resize(plan_.operators.size());
  for (std::size_t i = 0; i < plan_.operators.size(); ++i) {
    const planned_operator& po = plan_.operators[i];
    try {
      const std::vector<topic_info> inputs = input_infos(i);
      if (po.in_kernel)
        instances_[i].kernel = po.entry->make_host_kernel(po.spec->params, inputs);
      else
        instances_[i].cpu = po.entry->make_cpu(po.spec->params, inputs);
    } catch (const std::exception& e) {
      throw run_error(fault_site{po.spec->name, {}, {}}, std::string("cannot create: ") + e.what());
    }
  }
  parts_read_.assign(plan_.topics.size(), frame_selector{});
  for (std::size_t t = 0; t < plan_.topics.size(); ++t) {
    std::vector<const host_kernel_op*> readers;
    const auto& subscribers = plan_.topics[t].subscribers;
    const bool all_read_pages =
        !subscribers.empty() && std::all_of(subscribers.begin(), subscribers.end(), [&](std::size_t op) {
          return plan_.operators[op].in_kernel && instances_[op].kernel->reads_pages();
        });
    if (!all_read_pages) continue;
    for (std::size_t op : subscribers) readers.push_back(instances_[op].kernel.get());
    parts_read_[t] = pages_read_by(std::move(readers), plan_.index_rest);
  }
}

void run_context::make_file_cache(std::unique_ptr<cache_memory> memory, std::uint32_t blocks) {
  std::vector<cache_file> files;
  kernel_files_.first_file.assign(plan_.operators.size(), 0);
  kernel_files_.file_count.assign(plan_.operators.size(), 0);
  kernel_files_.source_frames.assign(plan_.operators.size(), 0);
  kernel_files_.source_run.assign(plan_.operators.size(), 1);
  for (std::size_t op : plan_.kernel_operators) {
    const host_kernel_op& kernel = *instances_[op].kernel;
    if (!kernel.reads_files()) continue;
    kernel_files_.first_file[op] = static_cast<std::uint32_t>(files.size());
    const file_list list = kernel.files();
    for (const file_list::entry& f : list.entries())
      files.push_back({f.path, site(op, error_topic(op), std::nullopt), f.advice});
    kernel_files_.file_count[op] = static_cast<std::uint32_t>(files.size()) - kernel_files_.first_file[op];
  }
  const bool any_reader = std::any_of(plan_.kernel_operators.begin(), plan_.kernel_operators.end(),
                                      [&](std::size_t op) { return instances_[op].kernel->reads_files(); });
  if (!any_reader) return;
  file_cache_ = std::make_unique<file_cache>(
      spec_.runtime.file_cache.value_or(file_cache_spec{}), blocks, files,
      // A request names its reader by kernel operator index (the round's).
      [this](std::uint32_t k, std::uint64_t frame_offset) {
        const std::size_t i = plan_.kernel_operators.at(k);
        return site(i, error_topic(i), frame_offset);
      },
      std::chrono::milliseconds(plan_.watchdog_ms), std::move(memory));
  kernel_files_.cache = file_cache_.get();
  for (std::size_t op : plan_.kernel_operators) {
    const host_kernel_op& kernel = *instances_[op].kernel;
    if (!kernel.is_source()) continue;
    const topic_spec& out = *plan_.topics[plan_.operators[op].outputs[0]].spec;
    // The host's copy of the sizes: on the device executor view() points into device memory.
    const std::uint64_t* sizes = file_cache_->sizes().data() + kernel_files_.first_file[op];
    kernel_files_.source_frames[op] = kernel.frame_count(sizes, out.frame_bytes);
    // A run as long as the readahead reaches (a block's misses in a run are sequential, so its requests
    // grow to page + readahead), and no more than the ring's capacity split among 2 x min(blocks, 16) runs:
    // a block whose run lies past the ring's free slots waits for them, so longer runs mean fewer blocks
    // reading at once. Measured on the H100 (file_scan, 4 GiB, 64 KiB frames and pages, page cache): a
    // ring of 64 with runs of 1 / 2 / 4 / 8 / 16 frames gave 10.2-10.9 / 12.7-13.3 / 10.6-11.1 / 8.7-9.0 /
    // 6.0-6.2 GB/s, a ring of 256 with 4 / 8 / 16 13.8-15.7 / 12.9-14.5 / 13.6-16.4: about 32 blocks
    // reading at once is the knee. (Divided among all the device's 64-264 blocks, runs were one frame and
    // never read ahead.)
    const std::uint64_t readahead = file_cache_->spec().readahead;
    const std::uint64_t runs = 2 * std::min<std::uint64_t>(blocks, 16);
    kernel_files_.source_run[op] = std::clamp<std::uint64_t>(readahead / out.frame_bytes, 1,
                                                             std::max<std::uint64_t>(1, out.capacity / runs));
  }
  file_cache_->start();
}

void run_context::start_operators() {
  started_.assign(plan_.operators.size(), false);
  // The chain holds pointers to the instances; it replays sources only once the run is under way, and
  // start_order starts every source before the verify sinks downstream of it.
  references_ = std::make_unique<reference_chain>(plan_, instances_);
  if (replay != nullptr)
    whole_replay_ = std::make_unique<whole_topology_replay>(*replay, &control_.drain_flag());
  for (std::size_t i : plan_.start_order) {
    const planned_operator& po = plan_.operators[i];
    if (!instances_[i].cpu) continue;
    operator_setup setup;
    setup.name = po.spec->name;
    setup.threads = po.workers;
    setup.interrupted = &control_.drain_flag();
    setup.aborted = &control_.abort_flag();
    auto info = [&](std::size_t t) { return topic_info_of(*plan_.topics[t].spec); };
    for (std::size_t t : po.inputs) {
      setup.inputs.push_back(info(t));
      setup.input_references.push_back(whole_replay_ ? whole_replay_->for_topic(plan_.topics[t].spec)
                                                     : references_->for_topic(t));
    }
    for (std::size_t t : po.outputs) setup.outputs.push_back(info(t));
    setup.objects = objects_->ports_of(i);
    setup.resumed = resumed;
    setup.resume_offset = first_offset(po.inputs.empty() ? po.outputs.at(0) : po.inputs[0]);
    try {
      instances_[i].cpu->on_start(setup);
    } catch (const run_error&) {
      throw;
    } catch (const std::exception& e) {
      throw run_error(site(i, error_topic(i), std::nullopt), std::string("on_start failed: ") + e.what());
    }
    started_[i] = true;
  }
}

void run_context::stop_operators() {
  // started_ is empty when the run failed before start_operators (a topic it could not allocate): no
  // operator was started, and instances_ may not even exist.
  if (started_.empty()) return;
  for (std::size_t i : plan_.start_order) {
    if (!started_[i] || !instances_[i].cpu) continue;
    try {
      instances_[i].cpu->on_stop();
    } catch (...) {
      if (!control_.failure()) control_.fail(current_error(i, error_topic(i), std::nullopt));
    }
  }
}

void run_context::commit_operators() {
  if (started_.empty() || control_.failure() || control_.draining() || control_.aborting()) return;
  for (std::size_t i : plan_.start_order) {
    if (!started_[i] || !instances_[i].cpu) continue;
    try {
      instances_[i].cpu->on_commit();
    } catch (...) {
      control_.fail(current_error(i, error_topic(i), std::nullopt));
      return;
    }
  }
}

std::vector<std::pair<std::string, std::string>> run_context::uncommitted_outputs() const {
  std::vector<std::pair<std::string, std::string>> outputs;
  for (std::size_t i = 0; i < started_.size(); ++i)
    if (started_[i] && instances_[i].cpu)
      if (std::string path = instances_[i].cpu->uncommitted_output(); !path.empty())
        outputs.emplace_back(plan_.operators[i].spec->name, std::move(path));
  return outputs;
}

void run_context::throw_injected(std::size_t op, std::uint64_t offset) const {
  if (const auto fault =
          inject::fires(inject::site::cpu_frame, offset, offset + 1, plan_.operators[op].spec->name))
    throw std::runtime_error("injected fault " +
                             inject::describe(inject::site::cpu_frame, fault->what, offset));
}

fault_site run_context::site(std::size_t op, std::size_t topic, std::optional<std::uint64_t> offset) const {
  return fault_site{plan_.operators[op].spec->name, plan_.topics[topic].spec->name, offset};
}

std::size_t run_context::error_topic(std::size_t op) const {
  const planned_operator& po = plan_.operators[op];
  return po.inputs.empty() ? po.outputs.at(0) : po.inputs[0];
}

run_error run_context::current_error(std::size_t op, std::size_t topic,
                                     std::optional<std::uint64_t> offset) const {
  try {
    throw;
  } catch (const run_error& e) {
    return e;
  } catch (const frame_failed& f) {
    return run_error(site(op, topic, offset),
                     frame_failed_reason(f.code, plan_.operators[op].entry->info.failure_meaning(f.code)));
  } catch (const std::exception& e) {
    return run_error(site(op, topic, offset), e.what());
  } catch (...) {
    return run_error(site(op, topic, offset), "unknown exception");
  }
}

void run_context::guarded(std::size_t op, const std::function<void()>& body) {
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

void run_context::leak() noexcept {
  (void)new std::vector<topic>(std::move(topics_));
  (void)memory_.release();
  (void)file_cache_.release();
  (void)objects_.release();
}

}  // namespace xf
