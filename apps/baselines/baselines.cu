// The GPU half of the baselines: the operator kernels, RAII wrappers for the CUDA objects, and the six
// conventional ways of streaming batches CPU→GPU→CPU that xeflow is measured against.
//
// Every mode runs the same loop on one issuing thread over S buffer sets ("slots", one stream each), visited
// round-robin. A batch goes through GPU steps (g: one step of H2D, n kernels, D2H; gc: n steps of H2D,
// kernel, D2H) with a CPU stage between consecutive steps, then verification. Visiting a slot waits for
// whatever it is doing (its stream's event, or its host task) and starts the next thing; a slot takes a
// new batch only once its previous batch is verified, so buffers are never overwritten while in use.
// What differs between modes is how one GPU step is issued and where the buffers live:
//   ckc-pageable  S = 1; dataset and output in pageable memory; cudaMemcpyAsync straight from/to it.
//   ckc-pinned    S = 1; dataset and output pinned (cudaHostAlloc).
//   ckc-hq        S = --streams; as ckc-pinned, S streams in flight (Hyper-Q).
//   koum          S = --streams (default 1); dataset and outputs in managed memory; kernels read and
//                 write it directly, no copies (see "KOUM placement" below for the advice).
//   graph         S = --streams (default 8); the ckc-hq step captured once per slot as a CUDA graph and
//                 replayed, the H2D source pointed at the batch's dataset frame before each launch (gc: one
//                 graph per step, each step running its own stage's operator).
//   concurrent    g only; S = --streams (default 8); the same operators as concurrent CUDA kernels in
//                 separate streams: GPU stage k of every batch runs on stage k's own stream, H2D and D2H on
//                 the slot's stream as in ckc-hq, each batch ordered H2D → kernel 1 → … → kernel n → D2H
//                 by events, so kernel 1 of one batch runs alongside kernel 2 of the batch before it.
// Each GPU stage k runs its own operator parameters (config::fma_iterations, stage_op); in gc the CPU stage
// after GPU stage k runs stage k's, and the expected checksums replay the same chain (host_chain).
// Batch b of the stream is dataset batch b % P, published in place: no per-batch host write of input.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "apps/baselines/baselines.hpp"
#include "apps/baselines/host_side.hpp"
#include "framework/core/cuda_buffer.hpp"
#include "framework/model/operator.hpp"

namespace xf::baselines {
namespace {

// ---- checked CUDA calls ------------------------------------------------------------------------------

void cuda_check(cudaError_t err, const char* call, const char* file, int line) {
  if (err == cudaSuccess) return;
  throw std::runtime_error(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                           cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

#define XFB_CUDA(call) ::xf::baselines::cuda_check((call), #call, __FILE__, __LINE__)
// Launch errors (bad configuration, no kernel image for this GPU) surface through cudaGetLastError.
#define XFB_CHECK_LAUNCH(kernel) ::xf::baselines::cuda_check(cudaGetLastError(), kernel, __FILE__, __LINE__)

// ---- RAII wrappers -------------------------------------------------------------------------------------
// Destructors ignore errors: they run during unwinding too, and a failed release has no recovery.

enum class memory : std::uint8_t { device, pinned, managed, pageable };

/// Pageable buffers start on a page boundary, as a large malloc does (it maps whole pages), so the
/// driver's staging of pageable copies sees what an ordinary application gives it.
constexpr std::size_t page_bytes = 4096;

class buffer {
 public:
  buffer() = default;
  buffer(memory kind, std::size_t bytes) : kind_(kind), bytes_(bytes) {
    switch (kind) {
      case memory::device:
        XFB_CUDA(cudaMalloc(&data_, bytes));
        break;
      case memory::pinned:
        XFB_CUDA(cudaHostAlloc(&data_, bytes, cudaHostAllocDefault));
        break;
      case memory::managed:
        XFB_CUDA(cudaMallocManaged(&data_, bytes, cudaMemAttachGlobal));
        break;
      case memory::pageable:
        data_ = ::operator new (bytes, std::align_val_t{page_bytes});
        break;
    }
  }
  ~buffer() noexcept { release(); }
  buffer(buffer&& other) noexcept
      : kind_(other.kind_),
        bytes_(std::exchange(other.bytes_, 0)),
        data_(std::exchange(other.data_, nullptr)) {}
  buffer& operator=(buffer&& other) noexcept {
    if (this != &other) {
      release();
      kind_ = other.kind_;
      bytes_ = std::exchange(other.bytes_, 0);
      data_ = std::exchange(other.data_, nullptr);
    }
    return *this;
  }
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;

  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void release() noexcept {
    if (data_ == nullptr) return;
    switch (kind_) {
      case memory::device:
      case memory::managed:
        (void)cudaFree(data_);
        break;
      case memory::pinned:
        (void)cudaFreeHost(data_);
        break;
      case memory::pageable:
        ::operator delete (data_, std::align_val_t{page_bytes});
        break;
    }
    data_ = nullptr;
  }

  memory kind_ = memory::device;
  std::size_t bytes_ = 0;
  void* data_ = nullptr;
};

class cuda_graph {
 public:
  cuda_graph() = default;
  explicit cuda_graph(cudaGraph_t graph) : graph_(graph) {}
  ~cuda_graph() noexcept {
    if (graph_ != nullptr) (void)cudaGraphDestroy(graph_);
  }
  cuda_graph(cuda_graph&& other) noexcept : graph_(std::exchange(other.graph_, nullptr)) {}
  cuda_graph& operator=(cuda_graph&& other) noexcept {
    std::swap(graph_, other.graph_);
    return *this;
  }
  cuda_graph(const cuda_graph&) = delete;
  cuda_graph& operator=(const cuda_graph&) = delete;
  cudaGraph_t get() const { return graph_; }

 private:
  cudaGraph_t graph_ = nullptr;
};

class cuda_graph_exec {
 public:
  cuda_graph_exec() = default;
  explicit cuda_graph_exec(const cuda_graph& graph) {
    XFB_CUDA(cudaGraphInstantiate(&exec_, graph.get(), 0));
  }
  ~cuda_graph_exec() noexcept {
    if (exec_ != nullptr) (void)cudaGraphExecDestroy(exec_);
  }
  cuda_graph_exec(cuda_graph_exec&& other) noexcept : exec_(std::exchange(other.exec_, nullptr)) {}
  cuda_graph_exec& operator=(cuda_graph_exec&& other) noexcept {
    std::swap(exec_, other.exec_);
    return *this;
  }
  cuda_graph_exec(const cuda_graph_exec&) = delete;
  cuda_graph_exec& operator=(const cuda_graph_exec&) = delete;
  cudaGraphExec_t get() const { return exec_; }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

/// Ends a stream capture left open by an exception, so the stream is usable (and destroyable) again.
class capture_guard {
 public:
  explicit capture_guard(cudaStream_t stream) : stream_(stream) {
    XFB_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  }
  ~capture_guard() noexcept {
    if (stream_ == nullptr) return;
    cudaGraph_t partial = nullptr;
    (void)cudaStreamEndCapture(stream_, &partial);
    if (partial != nullptr) (void)cudaGraphDestroy(partial);
  }
  capture_guard(const capture_guard&) = delete;
  capture_guard& operator=(const capture_guard&) = delete;
  cuda_graph end() {
    cudaGraph_t graph = nullptr;
    const cudaStream_t stream = std::exchange(stream_, nullptr);
    XFB_CUDA(cudaStreamEndCapture(stream, &graph));
    return cuda_graph(graph);
  }

 private:
  cudaStream_t stream_ = nullptr;
};

/// Waits for all device work when it goes out of scope: declared after the buffers and slots of a
/// pipeline, it runs before they are freed, so nothing in flight (after an error) outlives its memory.
struct device_drain {
  ~device_drain() noexcept { (void)cudaDeviceSynchronize(); }
};

// ---- the operator kernel --------------------------------------------------------------------------------

/// One GPU stage: the project's operator compute over the batch, every CUDA thread one virtual thread of
/// the grid-stride loop (thread_id = global index, thread_count = threads in the grid). The maps are pure
/// functions of the element, and the encoding operators are given frame offset 0 on every batch (the CTR
/// counter's value does not change the work), on the GPU and on the host alike.
template <class Op, class T>
__device__ __forceinline__ void run_map(const typename Op::params& p, const T* in, T* out,
                                        std::uint64_t count) {
  frame_task<T> task;
  task.in = in;
  task.out = out;
  task.count = count;
  task.offset = 0;
  task.thread_id = blockIdx.x * blockDim.x + threadIdx.x;
  task.thread_count = gridDim.x * blockDim.x;
  Op::template compute<T>(p, task);
}

/// Small parameters (scale, fma) travel by value, in the kernel's constant bank.
template <class Op, class T>
__global__ void map_kernel(const typename Op::params p, const T* in, T* out, std::uint64_t count) {
  run_map<Op, T>(p, in, out, count);
}

/// The encoding operators' parameters (AES's 8.5 KiB of tables) are read from device memory, as xeflow's
/// kernel reads them from its parameter arena.
template <class Op, class T>
__global__ void map_kernel_params_in_memory(const typename Op::params* p, const T* in, T* out,
                                            std::uint64_t count) {
  run_map<Op, T>(*p, in, out, count);
}

struct launch_shape {
  unsigned grid = 1;
  unsigned block = 1;
};

/// Block size from the occupancy calculator for this kernel on this device; grid = enough blocks to fill
/// every SM once at that occupancy (the grid-stride loop covers the rest), fewer for small batches.
template <class Kernel>
launch_shape plan_launch(Kernel kernel, std::uint64_t count) {
  int full_grid = 0, block = 0;
  XFB_CUDA(cudaOccupancyMaxPotentialBlockSize(&full_grid, &block, kernel, 0, 0));
  const std::uint64_t ublock = static_cast<std::uint64_t>(block);
  const std::uint64_t needed = (count + ublock - 1) / ublock;
  launch_shape s;
  s.block = static_cast<unsigned>(block);
  s.grid = static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(needed, full_grid)));
  return s;
}

/// One stage's operator as a launchable GPU stage over one batch: the maps on u32 elements, the encoding
/// operators on bytes (validate pairs them so; each pipeline compiles only its own kernels).
template <class T>
class gpu_stage {
  static constexpr bool bytes = std::is_same_v<T, std::uint8_t>;

 public:
  gpu_stage(const op_config& op, std::uint64_t count) : op_(op), count_(count) {
    if (is_encoding(op.kind) != bytes)
      throw std::logic_error("an operator on elements it does not take (validate refuses that)");
    if constexpr (bytes) {
      if (op.kind == op_kind::raid6) {
        shape_ = plan_launch(map_kernel_params_in_memory<raid6_encode_op, T>, count);
        params_in_memory(op.raid6);
      } else {
        shape_ = plan_launch(map_kernel_params_in_memory<aes128_encrypt_op, T>, count);
        params_in_memory(op.aes);
      }
    } else {
      shape_ = op.kind == op_kind::scale ? plan_launch(map_kernel<scale_op, T>, count)
                                         : plan_launch(map_kernel<fma_op, T>, count);
    }
  }

  /// The operator and parameters this stage runs (gc's CPU stage after it runs the same).
  const op_config& op() const { return op_; }

  void launch(const T* in, T* out, cudaStream_t stream) const {
    if constexpr (bytes) {
      if (op_.kind == op_kind::raid6) {
        map_kernel_params_in_memory<raid6_encode_op, T><<<shape_.grid, shape_.block, 0, stream>>>(
            params_->as<raid6_encode_op::params>(), in, out, count_);
        XFB_CHECK_LAUNCH("map_kernel_params_in_memory<raid6_encode_op>");
      } else {
        map_kernel_params_in_memory<aes128_encrypt_op, T><<<shape_.grid, shape_.block, 0, stream>>>(
            params_->as<aes128_encrypt_op::params>(), in, out, count_);
        XFB_CHECK_LAUNCH("map_kernel_params_in_memory<aes128_encrypt_op>");
      }
    } else if (op_.kind == op_kind::scale) {
      map_kernel<scale_op, T><<<shape_.grid, shape_.block, 0, stream>>>(op_.scale, in, out, count_);
      XFB_CHECK_LAUNCH("map_kernel<scale_op>");
    } else {
      map_kernel<fma_op, T><<<shape_.grid, shape_.block, 0, stream>>>(op_.fma, in, out, count_);
      XFB_CHECK_LAUNCH("map_kernel<fma_op>");
    }
  }

 private:
  template <class P>
  void params_in_memory(const P& p) {
    params_ = std::make_shared<buffer>(memory::device, sizeof(P));
    XFB_CUDA(cudaMemcpy(params_->data(), &p, sizeof(P), cudaMemcpyHostToDevice));
  }

  op_config op_;
  std::uint64_t count_;
  launch_shape shape_;
  std::shared_ptr<buffer> params_;  ///< the encoding operators' parameters in device memory
};

// ---- host workers -----------------------------------------------------------------------------------

/// A fixed set of threads running submitted tasks in order of submission: the verify and CPU-stage
/// workers. Tasks must not throw (the pipeline wraps them).
class host_pool {
 public:
  explicit host_pool(std::uint32_t threads) {
    for (std::uint32_t t = 0; t < threads; ++t) threads_.emplace_back([this] { work(); });
  }
  ~host_pool() noexcept {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  host_pool(const host_pool&) = delete;
  host_pool& operator=(const host_pool&) = delete;

  bool empty() const { return threads_.empty(); }
  void submit(std::function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    wake_.notify_one();
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty()) return;  // stopping, and everything submitted has run
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

using clock_type = std::chrono::steady_clock;

// ---- the pipeline ----------------------------------------------------------------------------------------

/// KOUM placement. The dataset and the output buffers are managed memory whose preferred location is the
/// host (that is where the producer writes and the sink reads them), and the GPU is marked as accessing
/// them (SetAccessedBy), so it maps the pages and its kernels read and write them in place over the
/// interconnect: no page faults and no migrations in the timed loop, each batch crossing the link exactly
/// once each way, as in the copy modes. The buffers are prefetched to the host before the host's first
/// touch, so every page is populated where it is preferred, and the GPU's mapping is requested once they
/// are populated (a mapping needs a page to point to), so the first timed pass does not fault either.
/// What a competent user avoids here: per-batch cudaMemPrefetchAsync to the GPU and back (each costs
/// unmapping and remapping the pages, and the sink's read of GPU-resident pages would fault them back one
/// by one), and SetReadMostly on the dataset (the GPU would keep a read-only replica, so a reused dataset
/// frame would stop crossing the link at all, which measures a cache, not streaming). Intermediate results
/// of g with n >= 2 never leave the GPU and live in cudaMalloc memory.
cudaMemLocation host_location() {
  cudaMemLocation host{};
  host.type = cudaMemLocationTypeHost;
  host.id = 0;  // ignored for the host type
  return host;
}

void koum_place_on_host(const buffer& b, cudaStream_t stream) {
  XFB_CUDA(cudaMemAdvise(b.data(), b.bytes(), cudaMemAdviseSetPreferredLocation, host_location()));
  XFB_CUDA(cudaMemPrefetchAsync(b.data(), b.bytes(), host_location(), 0, stream));
}

void koum_map_on_device(const buffer& b, int device) {
  cudaMemLocation gpu{};
  gpu.type = cudaMemLocationTypeDevice;
  gpu.id = device;
  XFB_CUDA(cudaMemAdvise(b.data(), b.bytes(), cudaMemAdviseSetAccessedBy, gpu));
}

template <class T>
class pipeline {
 public:
  pipeline(const config& cfg, const cudaDeviceProp& prop, std::uint32_t frames)
      : cfg_(cfg),
        count_(batch_elements(cfg)),
        bytes_(cfg.batch_bytes),
        out_bytes_(output_bytes(cfg.op, cfg.batch_bytes)),
        frames_(frames),
        steps_(gpu_steps(cfg)),
        kernels_per_step_(cfg.shape == shape::g ? cfg.stages : 1) {
    for (std::uint32_t k = 0; k < cfg.stages; ++k) stages_.emplace_back(stage_op(cfg, k), count_);
    check_memory(prop);
    dataset_ = buffer(host_memory(), std::size_t{frames} * bytes_);
    for (std::uint32_t s = 0; s < cfg.streams; ++s) {
      auto sl = std::make_unique<slot>();
      sl->host_out = buffer(host_memory(), bytes_);
      for (std::uint32_t d = 0; d < device_buffers_per_slot(); ++d)
        sl->dev[d] = buffer(memory::device, bytes_);
      slots_.push_back(std::move(sl));
    }
    if (cfg.mode == mode::concurrent) {
      for (std::uint32_t k = 0; k < cfg.stages; ++k)
        kernel_streams_.push_back(std::make_unique<cuda_stream>());
      // One event per hand-over between streams: H2D → kernel 1, kernel k → kernel k + 1, kernel n → D2H.
      for (auto& sl : slots_) sl->links = std::make_unique<cuda_event[]>(kernels_per_step_ + 1);
    }
    if (cfg.mode == mode::koum) {
      koum_place_on_host(dataset_, slots_[0]->stream.get());
      for (auto& sl : slots_) koum_place_on_host(sl->host_out, sl->stream.get());
      for (auto& sl : slots_) XFB_CUDA(cudaStreamSynchronize(sl->stream.get()));
    }
    // Touched once here so that no mode pays first-touch page faults on its output buffers in the run.
    for (auto& sl : slots_) std::memset(sl->host_out.data(), 0, bytes_);
    fill_dataset(cfg, dataset_.data(), frames);
    if (cfg.mode == mode::koum) {
      koum_map_on_device(dataset_, cfg.device);
      for (auto& sl : slots_) koum_map_on_device(sl->host_out, cfg.device);
    }
    checker_ = std::make_unique<batch_checker>(cfg.mode, expected_checksums(cfg, dataset_.data(), frames),
                                               out_bytes_);
    if (cfg.mode == mode::graph) capture_graphs();
    verify_pool_ = std::make_unique<host_pool>(cfg.verify_threads);
    cpu_pool_ = std::make_unique<host_pool>(cfg.cpu_stage_threads);
  }

  pipeline(const pipeline&) = delete;
  pipeline& operator=(const pipeline&) = delete;

  const batch_checker& checker() const { return *checker_; }

  /// Streams batches 0 … count−1 through the slots and returns when all are verified. With `latencies`,
  /// stores each batch's submission-to-verified time in µs at its index.
  void stream_batches(std::uint64_t count, const char* phase, std::vector<double>* latencies) {
    run_ = run_state{count, 0, 0, phase, latencies};
    while (run_.completed < run_.count) {
      for (auto& sl : slots_) visit(*sl);
    }
  }

 private:
  enum class slot_phase : std::uint8_t { idle, gpu, cpu_stage, verify };

  struct slot {
    cuda_stream stream;  ///< the slot's copies, and (except in concurrent mode) its kernels
    cuda_event done;     ///< recorded after each GPU step
    buffer dev[2];       ///< ping-pong device buffers
    buffer host_out;     ///< where D2H lands (koum: where the last kernel writes), and the CPU stage runs
    /// concurrent mode: the events ordering one batch across streams (see order_after); reused by the
    /// slot's next batch only once `done` has completed.
    std::unique_ptr<cuda_event[]> links;
    // graph mode: the step with the dataset as H2D source (re-pointed per batch) and, for gc, steps 1 … n−1
    // reading host_out (next_*[step − 1]: each step runs its own stage's operator). A graph must outlive its
    // exec for the node update to be legal.
    cuda_graph first_graph;
    cuda_graph_exec first_exec;
    std::vector<cuda_graph> next_graphs;
    std::vector<cuda_graph_exec> next_execs;
    cudaGraphNode_t first_h2d = nullptr;
    const void* first_src = nullptr;  ///< the H2D source first_exec currently has
    // The batch in flight; touched by the issuing thread, and by a worker only between submit and the
    // release of host_busy.
    slot_phase phase = slot_phase::idle;
    std::uint64_t batch = 0;
    std::uint32_t step = 0;
    clock_type::time_point submitted;
    clock_type::time_point finished;
    std::atomic<bool> host_busy{false};
    std::exception_ptr host_error;
  };

  struct run_state {
    std::uint64_t count = 0;
    std::uint64_t next = 0;
    std::uint64_t completed = 0;
    const char* phase = "";
    std::vector<double>* latencies = nullptr;
  };

  memory host_memory() const {
    switch (cfg_.mode) {
      case mode::ckc_pageable:
        return memory::pageable;
      case mode::koum:
        return memory::managed;
      default:
        return memory::pinned;
    }
  }

  std::uint32_t device_buffers_per_slot() const {
    if (cfg_.mode != mode::koum) return 2;  // H2D target and kernel output (ping-pong for n kernels)
    // koum: the first kernel reads the dataset and the last writes host_out; between them, g with n
    // kernels keeps its intermediates on the GPU (one buffer for n = 2, ping-pong from n = 3).
    return cfg_.shape == shape::g ? std::min<std::uint32_t>(cfg_.stages - 1, 2) : 0;
  }

  /// Refuses to start when the buffers would not fit in the GPU's free memory. Managed buffers count too:
  /// they are host-preferred, but the driver would move them to the GPU under some access patterns, and
  /// oversubscribing it would measure eviction instead of streaming.
  void check_memory(const cudaDeviceProp& prop) const {
    std::size_t free = 0, total = 0;
    XFB_CUDA(cudaMemGetInfo(&free, &total));
    const std::uint64_t device_bytes = std::uint64_t{cfg_.streams} * device_buffers_per_slot() * bytes_;
    const std::uint64_t managed_bytes =
        cfg_.mode == mode::koum ? (std::uint64_t{frames_} + cfg_.streams) * bytes_ : 0;
    if (device_bytes + managed_bytes > free) {
      throw std::runtime_error(std::string(name_of(cfg_.mode)) + " needs " + std::to_string(device_bytes) +
                               " bytes of device memory" +
                               (managed_bytes
                                    ? " and " + std::to_string(managed_bytes) + " bytes of managed memory"
                                    : std::string()) +
                               " but " + prop.name + " has " + std::to_string(free) +
                               " bytes free: lower --batch-bytes, --streams or --dataset-frames");
    }
  }

  const T* dataset_frame(std::uint64_t batch) const { return dataset_.as<T>() + (batch % frames_) * count_; }

  /// The GPU stage that kernel `k` of GPU step `step` runs (g: stage k of the one step; gc: stage `step`).
  std::uint32_t stage_index(std::uint32_t step, std::uint32_t k) const {
    return step * kernels_per_step_ + k;
  }

  /// The stream GPU stage `stage` of the slot's batch runs on: the stage's own in concurrent mode, else
  /// the slot's.
  cudaStream_t kernel_stream(const slot& sl, std::uint32_t stage) const {
    return kernel_streams_.empty() ? sl.stream.get() : kernel_streams_[stage]->get();
  }

  /// Orders the work issued next on `to` after everything issued so far on `from`, through the slot's
  /// event `link`; nothing when they are one stream. The wait takes the record made here (later records of
  /// the same event do not affect it).
  void order_after(slot& sl, std::uint32_t link, cudaStream_t from, cudaStream_t to) {
    if (from == to) return;
    XFB_CUDA(cudaEventRecord(sl.links[link].get(), from));
    XFB_CUDA(cudaStreamWaitEvent(to, sl.links[link].get(), 0));
  }

  /// GPU step `step` of the slot's batch: H2D from `src` (the dataset frame, or host_out for later gc
  /// steps), kernel(s), D2H, the copies on the slot's stream and each kernel on kernel_stream. Issued
  /// directly by the ckc modes and concurrent, and captured once per slot and step by graph mode.
  void enqueue_copy_kernels_copy(slot& sl, const T* src, std::uint32_t step) {
    const cudaStream_t copy = sl.stream.get();
    T* ping = sl.dev[0].template as<T>();
    T* pong = sl.dev[1].template as<T>();
    XFB_CUDA(cudaMemcpyAsync(ping, src, bytes_, cudaMemcpyHostToDevice, copy));
    cudaStream_t previous = copy;
    for (std::uint32_t k = 0; k < kernels_per_step_; ++k) {
      const std::uint32_t stage = stage_index(step, k);
      const cudaStream_t stream = kernel_stream(sl, stage);
      order_after(sl, k, previous, stream);
      stages_[stage].launch(ping, pong, stream);
      std::swap(ping, pong);  // the output becomes the next kernel's input
      previous = stream;
    }
    order_after(sl, kernels_per_step_, previous, copy);
    XFB_CUDA(cudaMemcpyAsync(sl.host_out.data(), ping, out_bytes_, cudaMemcpyDeviceToHost, copy));
  }

  /// Kernel(s) of GPU step `step` straight on managed memory: `src` (dataset frame or host_out) → … →
  /// host_out.
  void enqueue_managed_kernels(slot& sl, const T* src, std::uint32_t step) {
    const cudaStream_t stream = sl.stream.get();
    T* out = sl.host_out.template as<T>();
    const T* in = src;
    for (std::uint32_t k = 0; k < kernels_per_step_; ++k) {
      T* target = k + 1 == kernels_per_step_ ? out : sl.dev[k % 2].template as<T>();
      stages_[stage_index(step, k)].launch(in, target, stream);
      in = target;
    }
  }

  void capture_graphs() {
    for (auto& sl : slots_) {
      {
        capture_guard capture(sl->stream.get());
        enqueue_copy_kernels_copy(*sl, dataset_frame(0), 0);
        sl->first_graph = capture.end();
      }
      sl->first_exec = cuda_graph_exec(sl->first_graph);
      sl->first_src = dataset_frame(0);
      // The H2D copy is the graph's only root (everything else depends on it): the node to re-point.
      std::size_t roots = 0;
      XFB_CUDA(cudaGraphGetRootNodes(sl->first_graph.get(), nullptr, &roots));
      if (roots != 1)
        throw std::runtime_error("graph capture: expected one root node, found " + std::to_string(roots));
      XFB_CUDA(cudaGraphGetRootNodes(sl->first_graph.get(), &sl->first_h2d, &roots));
      cudaGraphNodeType type{};
      XFB_CUDA(cudaGraphNodeGetType(sl->first_h2d, &type));
      if (type != cudaGraphNodeTypeMemcpy)
        throw std::runtime_error("graph capture: the root node is not the H2D copy");
      for (std::uint32_t step = 1; step < steps_; ++step) {
        capture_guard capture(sl->stream.get());
        enqueue_copy_kernels_copy(*sl, sl->host_out.template as<T>(), step);
        sl->next_graphs.push_back(capture.end());
        sl->next_execs.emplace_back(sl->next_graphs.back());
      }
    }
  }

  /// Issues GPU step `step` of the slot's batch and records its completion event.
  void issue_step(slot& sl) {
    const T* src = sl.step == 0 ? dataset_frame(sl.batch) : sl.host_out.template as<T>();
    switch (cfg_.mode) {
      case mode::ckc_pageable:
      case mode::ckc_pinned:
      case mode::ckc_hq:
      case mode::concurrent:
        enqueue_copy_kernels_copy(sl, src, sl.step);
        break;
      case mode::koum:
        enqueue_managed_kernels(sl, src, sl.step);
        break;
      case mode::graph:
        if (sl.step == 0) {
          // The previous launch of this exec (the slot's previous batch) has completed; updates affect
          // later launches only in any case.
          if (src != sl.first_src) {
            XFB_CUDA(cudaGraphExecMemcpyNodeSetParams1D(sl.first_exec.get(), sl.first_h2d, sl.dev[0].data(),
                                                        src, bytes_, cudaMemcpyHostToDevice));
            sl.first_src = src;
          }
          XFB_CUDA(cudaGraphLaunch(sl.first_exec.get(), sl.stream.get()));
        } else {
          XFB_CUDA(cudaGraphLaunch(sl.next_execs[sl.step - 1].get(), sl.stream.get()));
        }
        break;
    }
    XFB_CUDA(cudaEventRecord(sl.done.get(), sl.stream.get()));
    sl.phase = slot_phase::gpu;
  }

  void start_batch(slot& sl) {
    sl.batch = run_.next++;
    sl.step = 0;
    sl.submitted = clock_type::now();
    issue_step(sl);
  }

  /// The CPU stage after GPU stage sl.step, with that stage's operator.
  void run_cpu_stage(slot& sl) {
    apply_host_stage(stages_[sl.step].op(), cfg_.element, sl.host_out.data(), count_);
  }

  void verify(slot& sl) { checker_->check(sl.batch, sl.host_out.data(), run_.phase); }

  void finish_batch(slot& sl) {
    if (run_.latencies != nullptr) {
      (*run_.latencies)[sl.batch] =
          std::chrono::duration<double, std::micro>(sl.finished - sl.submitted).count();
    }
    ++run_.completed;
    sl.phase = slot_phase::idle;
    if (run_.next < run_.count) start_batch(sl);
  }

  /// Runs `work` on `pool`; the slot is busy until it returns (see wait_host).
  void hand_off(host_pool& pool, slot& sl, slot_phase phase, void (pipeline::*work)(slot&)) {
    sl.phase = phase;
    sl.host_busy.store(true, std::memory_order_relaxed);
    pool.submit([this, &sl, work] {
      try {
        (this->*work)(sl);
      } catch (...) {
        sl.host_error = std::current_exception();
      }
      sl.finished = clock_type::now();
      sl.host_busy.store(false, std::memory_order_release);
      sl.host_busy.notify_one();
    });
  }

  void wait_host(slot& sl) {
    sl.host_busy.wait(true, std::memory_order_acquire);
    if (sl.host_error) std::rethrow_exception(std::exchange(sl.host_error, nullptr));
  }

  /// One round-robin visit: waits for what the slot is doing, then starts its next piece of work.
  void visit(slot& sl) {
    switch (sl.phase) {
      case slot_phase::idle:
        if (run_.next < run_.count) start_batch(sl);
        return;
      case slot_phase::gpu:
        XFB_CUDA(cudaEventSynchronize(sl.done.get()));
        if (sl.step + 1 < steps_) {
          if (cpu_pool_->empty()) {
            run_cpu_stage(sl);
            ++sl.step;
            issue_step(sl);
          } else {
            hand_off(*cpu_pool_, sl, slot_phase::cpu_stage, &pipeline::run_cpu_stage);
          }
        } else if (cfg_.verify == verify_kind::none) {
          sl.finished = clock_type::now();
          finish_batch(sl);
        } else if (verify_pool_->empty()) {
          verify(sl);
          sl.finished = clock_type::now();
          finish_batch(sl);
        } else {
          hand_off(*verify_pool_, sl, slot_phase::verify, &pipeline::verify);
        }
        return;
      case slot_phase::cpu_stage:
        wait_host(sl);
        ++sl.step;
        issue_step(sl);
        return;
      case slot_phase::verify:
        wait_host(sl);
        finish_batch(sl);
        return;
    }
  }

  config cfg_;
  std::uint64_t count_;
  std::uint64_t bytes_;
  std::uint64_t out_bytes_;  ///< of a batch's output (the encoding operators' may be smaller)
  std::uint32_t frames_;
  std::uint32_t steps_;
  std::uint32_t kernels_per_step_;
  std::vector<gpu_stage<T>> stages_;  ///< GPU stage k's operator, launch shape and parameters
  std::unique_ptr<batch_checker> checker_;
  run_state run_;
  // Destruction runs bottom-up: the workers are joined, then the device drained, before any slot, stream
  // or buffer is freed.
  buffer dataset_;
  std::vector<std::unique_ptr<slot>> slots_;
  std::vector<std::unique_ptr<cuda_stream>> kernel_streams_;  ///< concurrent mode: GPU stage k's stream
  device_drain drain_;
  std::unique_ptr<host_pool> verify_pool_;
  std::unique_ptr<host_pool> cpu_pool_;
};

/// Selects the device and says why not when there is none.
cudaDeviceProp open_device(const config& cfg) {
  int count = 0;
  if (const cudaError_t err = cudaGetDeviceCount(&count); err != cudaSuccess) {
    throw std::runtime_error(std::string("no usable CUDA device: cudaGetDeviceCount: ") +
                             cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
  }
  if (count == 0) throw std::runtime_error("no usable CUDA device: none found");
  if (cfg.device < 0 || cfg.device >= count) {
    throw std::invalid_argument("--device " + std::to_string(cfg.device) + ": there are " +
                                std::to_string(count) + " CUDA device(s)");
  }
  XFB_CUDA(cudaSetDevice(cfg.device));
  cudaDeviceProp prop{};
  XFB_CUDA(cudaGetDeviceProperties(&prop, cfg.device));
  if (cfg.mode == mode::koum) {
    int concurrent = 0;
    XFB_CUDA(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, cfg.device));
    // Without it the host may not touch managed memory while any kernel runs, and the advice above is
    // ignored: KOUM would degenerate into whole-allocation migrations per launch.
    if (concurrent == 0) {
      throw std::runtime_error(std::string("koum needs concurrent managed access, which ") + prop.name +
                               " does not offer on this system");
    }
  }
  return prop;
}

template <class T>
result run_typed(const config& cfg) {
  const cudaDeviceProp prop = open_device(cfg);
  pipeline<T> pipe(cfg, prop, dataset_frames(cfg));

  pipe.stream_batches(static_cast<std::uint64_t>(cfg.warmup_batches), "warm-up", nullptr);
  const std::uint64_t batches = timed_batches(cfg);
  std::vector<double> latencies(batches);
  const auto start = clock_type::now();
  pipe.stream_batches(batches, "timed", &latencies);
  const double seconds = std::chrono::duration<double>(clock_type::now() - start).count();

  result r;
  r.cfg = cfg;
  r.device = prop.name;
  r.dataset_frames = dataset_frames(cfg);
  r.batches = batches;
  r.streamed_bytes = batches * cfg.batch_bytes;
  r.seconds = seconds;
  r.gbps = seconds > 0 ? static_cast<double>(r.streamed_bytes) / seconds / 1e9 : 0;
  const latency_summary lat = summarize(latencies);
  r.latency_p50_us = lat.p50;
  r.latency_p99_us = lat.p99;
  r.latency_mean_us = lat.mean;
  r.latency_max_us = lat.max;
  r.mismatches = pipe.checker().mismatches();
  r.mismatch_reports = pipe.checker().reports();
  return r;
}

}  // namespace

result run_baseline(const config& requested) {
  validate(requested);
  const config cfg = resolve(requested);
  // The element type stays a template parameter below; validate admits the types instantiated here.
  switch (cfg.element) {
    case element_type::u32:
      return run_typed<std::uint32_t>(cfg);
    case element_type::u8:
      return run_typed<std::uint8_t>(cfg);
    default:
      throw std::invalid_argument("element type " + std::string(name_of(cfg.element)) + " is not supported");
  }
}

}  // namespace xf::baselines
