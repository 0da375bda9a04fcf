// The GPU sinks' baselines: the topology's source and sink, a conventional transport in between.
#include "apps/sink_baseline/sink_baseline.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

#include "apps/dataset_support/parallel.hpp"
#include "apps/dataset_support/tool_cli.hpp"
#include "framework/core/cuda_buffer.hpp"
#include "framework/core/cuda_check.hpp"
#include "framework/core/errors.hpp"
#include "framework/kernel/kernel_program.hpp"
#include "framework/model/yaml_loader.hpp"
#include "operators/builtin.hpp"
#include "operators/builtin_gpu.hpp"

namespace xf::apps {
namespace {

const char* name_of(sink_transfer m) {
  switch (m) {
    case sink_transfer::single:
      return "single";
    case sink_transfer::double_buffer:
      return "double";
    case sink_transfer::managed:
      return "managed";
  }
  return "?";
}

/// Memory one chunk of frames is staged in on the host and read from on the device: pinned host memory and
/// a device buffer, or one managed buffer for both.
class chunk_buffer {
 public:
  chunk_buffer(std::uint64_t bytes, bool managed) : managed_(managed) {
    if (managed) {
      XF_CUDA_TRY(cudaMallocManaged(&managed_ptr_, bytes));
    } else {
      host_ = pinned_buffer<std::byte>(bytes);
      device_ = device_buffer<std::byte>(bytes);
    }
  }
  ~chunk_buffer() {
    if (managed_ptr_ != nullptr) cuda_ok(cudaFree(managed_ptr_));
  }
  chunk_buffer(const chunk_buffer&) = delete;
  chunk_buffer& operator=(const chunk_buffer&) = delete;

  std::byte* host() const { return managed_ ? static_cast<std::byte*>(managed_ptr_) : host_.get(); }
  std::byte* device() const { return managed_ ? static_cast<std::byte*>(managed_ptr_) : device_.get(); }

  /// Moves the first `bytes` to the device on `stream` (a copy, or a managed prefetch).
  void to_device(std::uint64_t bytes, cudaStream_t stream, int device) const {
    if (managed_) {
      cudaMemLocation where{};
      where.type = cudaMemLocationTypeDevice;
      where.id = device;
      XF_CUDA_TRY(cudaMemPrefetchAsync(managed_ptr_, bytes, where, 0, stream));
    } else {
      XF_CUDA_TRY(cudaMemcpyAsync(device_.get(), host_.get(), bytes, cudaMemcpyHostToDevice, stream));
    }
  }

 private:
  bool managed_;
  void* managed_ptr_ = nullptr;
  pinned_buffer<std::byte> host_;
  device_buffer<std::byte> device_;
};

/// One chunk in flight: its frames' offsets and sizes, its buffer, stream and the event of its last launch.
/// `failure_seen` is the failure word as it stood after the chunk's last kernel (copied on its stream), so
/// a failed frame stops the run at the next chunk instead of at the end.
struct chunk_slot {
  std::unique_ptr<chunk_buffer> buffer;
  std::unique_ptr<cuda_stream> stream;
  std::unique_ptr<cuda_event> done;
  pinned_buffer<std::uint64_t> failure_seen{1};
  bool busy = false;
};

}  // namespace

sink_baseline_result run_sink_baseline(const sink_baseline_config& cfg) {
  operator_registry registry;
  register_builtin_operators(registry);
  const topology_spec spec = load_topology_file(cfg.topology, registry, cfg.overrides);
  // The shape: one CPU source, its topic, one GPU sink.
  const operator_spec* source_spec = nullptr;
  const operator_spec* sink_spec = nullptr;
  for (const operator_spec& op : spec.operators) {
    const operator_entry* e = registry.find(op.class_name);
    if (e->info.role == operator_role::source && op.on == placement::cpu && source_spec == nullptr)
      source_spec = &op;
    else if (e->info.role == operator_role::sink && e->info.gpu && sink_spec == nullptr)
      sink_spec = &op;
    else
      throw usage_error("topology '" + spec.name + "': operator '" + op.name +
                        "' — the baseline runs topologies of one CPU source and one GPU sink only");
  }
  if (source_spec == nullptr || sink_spec == nullptr || sink_spec->inputs.at(0) != source_spec->outputs.at(0))
    throw usage_error("topology '" + spec.name + "': needs a CPU source whose topic a GPU sink reads");
  const topic_spec& topic = *std::find_if(spec.topics.begin(), spec.topics.end(), [&](const topic_spec& t) {
    return t.name == source_spec->outputs[0];
  });
  const operator_entry& source_entry = *registry.find(source_spec->class_name);
  const operator_entry& sink_entry = *registry.find(sink_spec->class_name);

  // The source, as xeflow starts it.
  std::unique_ptr<cpu_operator> source_op = source_entry.make_cpu(source_spec->params, {});
  auto* source = dynamic_cast<cpu_source*>(source_op.get());
  operator_setup setup;
  setup.name = source_spec->name;
  setup.threads = source_spec->threads;
  setup.outputs.push_back(topic_info{topic.name, topic.frame_bytes, topic.capacity, topic.element, {}, {}});
  source->on_start(setup);

  // The sink: its host side (prepared accumulator, finish) and its device side.
  std::unique_ptr<host_kernel_op> sink;
  try {
    sink = sink_entry.make_host_kernel(sink_spec->params, {});
  } catch (const std::exception& e) {
    throw run_error(fault_site{sink_spec->name, {}, {}}, std::string("cannot create: ") + e.what());
  }
  const kernel_program* program = compiled_kernel<builtin_gpu_operators>();
  if (program == nullptr) throw std::runtime_error("this build has no GPU kernel (built without CUDA)");
  const std::optional<std::uint32_t> type = program->index_of(*sink_entry.gpu_type);
  if (!type)
    throw usage_error("class '" + sink_spec->class_name + "' is not compiled into the built-in kernel");
  int device = 0, sms = 0;
  XF_CUDA_TRY(cudaGetDevice(&device));
  XF_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  // A full GPU per launch: every SM as many blocks as it holds (sinks are latency-bound: their probes).
  const std::uint32_t blocks =
      cfg.blocks != 0 ? cfg.blocks
                      : static_cast<std::uint32_t>(
                            sms * std::max(1, program->frame_blocks_per_sm(static_cast<int>(cfg.threads))));
  const std::vector<std::byte> params = sink_entry.make_gpu_params(sink_spec->params, {});
  device_buffer<std::byte> device_params(std::max<std::size_t>(params.size(), 16));
  XF_CUDA_TRY(cudaMemcpy(device_params.get(), params.data(), params.size(), cudaMemcpyHostToDevice));
  const std::span<std::byte> accumulator = sink->accumulator();
  device_buffer<std::byte> device_state(accumulator.size());
  XF_CUDA_TRY(cudaMemcpy(device_state.get(), accumulator.data(), accumulator.size(), cudaMemcpyHostToDevice));
  device_buffer<std::uint64_t> failure(1);

  const bool managed = cfg.mode == sink_transfer::managed;
  const std::uint32_t slots = cfg.mode == sink_transfer::single ? 1 : 2;
  const std::uint64_t frame_bytes = topic.frame_bytes;
  const std::uint64_t chunk_bytes = frame_bytes * cfg.frames_per_chunk;
  std::vector<chunk_slot> chunk(slots);
  for (chunk_slot& c : chunk) {
    c.buffer = std::make_unique<chunk_buffer>(chunk_bytes, managed);
    c.stream = std::make_unique<cuda_stream>();
    c.done = std::make_unique<cuda_event>();
  }

  sink_baseline_result r;
  r.mode = name_of(cfg.mode);
  worker_team team(std::max<std::uint32_t>(1, source_spec->threads));  // the source's threads
  const auto start = std::chrono::steady_clock::now();
  bool ended = false;
  std::vector<std::uint64_t> sizes(cfg.frames_per_chunk);
  for (std::uint64_t first = 0, n = 0; !ended; first += cfg.frames_per_chunk, ++n) {
    chunk_slot& c = chunk[n % slots];
    if (c.busy) {
      XF_CUDA_TRY(cudaEventSynchronize(c.done->get()));  // its previous frames were consumed
      if (*c.failure_seen.get() != 0) break;             // a frame failed: reported below
    }
    // The source's threads fill the chunk's frames (frame k of the chunk at k · frame_bytes).
    std::vector<char> produced(cfg.frames_per_chunk, 0);
    team.run([&](unsigned t) {
      for (std::uint32_t k = t; k < cfg.frames_per_chunk; k += team.size()) {
        frame_out out{c.buffer->host() + k * frame_bytes, frame_bytes, 0, topic.element};
        produced[k] = source->produce(first + k, out) ? 1 : 0;
        sizes[k] = out.bytes;
      }
    });
    std::uint32_t frames = 0;
    while (frames < cfg.frames_per_chunk && produced[frames]) ++frames;
    ended = frames < cfg.frames_per_chunk;
    if (frames == 0) break;
    std::uint64_t bytes = (frames - 1) * frame_bytes + sizes[frames - 1];
    c.buffer->to_device(bytes, c.stream->get(), device);
    for (std::uint32_t k = 0; k < frames; ++k) {
      kernel_program::frame_launch f{
          *type,        topic.element, device_params.get(), c.buffer->device() + k * frame_bytes,
          nullptr,      sizes[k],      first + k,           device_state.get(),
          failure.get()};
      program->launch_frame(f, blocks, cfg.threads, c.stream->get());
      r.bytes_to_device += sizes[k];
    }
    XF_CUDA_TRY(cudaMemcpyAsync(c.failure_seen.get(), failure.get(), sizeof(std::uint64_t),
                                cudaMemcpyDeviceToHost, c.stream->get()));
    XF_CUDA_TRY(cudaEventRecord(c.done->get(), c.stream->get()));
    c.busy = true;
    r.frames += frames;
    if (cfg.mode == sink_transfer::single) XF_CUDA_TRY(cudaEventSynchronize(c.done->get()));
  }
  XF_CUDA_TRY(cudaDeviceSynchronize());
  std::uint64_t failure_word = 0;
  XF_CUDA_TRY(cudaMemcpy(&failure_word, failure.get(), sizeof failure_word, cudaMemcpyDeviceToHost));
  if (failure_word != 0) {
    const auto code = static_cast<std::uint32_t>(failure_word);
    throw run_error(fault_site{sink_spec->name, topic.name, std::nullopt},
                    frame_failed_reason(code, sink_entry.info.failure_meaning(code)));
  }
  XF_CUDA_TRY(cudaMemcpy(accumulator.data(), device_state.get(), accumulator.size(), cudaMemcpyDeviceToHost));
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  try {
    r.sink_counters = sink->finish();
  } catch (const std::exception& e) {
    throw run_error(fault_site{sink_spec->name, topic.name, std::nullopt},
                    std::string("finish failed: ") + e.what());
  }
  r.source_counters = source->counters();
  source->on_stop();
  return r;
}

nlohmann::json to_json(const sink_baseline_result& r) {
  return {{"mode", r.mode},
          {"frames", r.frames},
          {"bytes_to_device", r.bytes_to_device},
          {"seconds", r.seconds},
          {"source_counters", r.source_counters},
          {"sink_counters", r.sink_counters}};
}

}  // namespace xf::apps
