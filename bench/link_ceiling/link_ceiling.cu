// xeflow-ceiling: measures, on the machine it runs on, the physical ceilings that bound a CPU->GPU->CPU
// stream, so that the benchmark (bench/stream_bench.py) can show which one a contender saturates.
//
// xeflow's persistent kernel reads input frames from pinned host memory and writes outputs to pinned host
// memory directly (zero-copy): its stream cannot beat SMs pulling and pushing bytes over PCIe in one pass,
// `zero-copy` (read + write), with `zero-copy-read` and `zero-copy-write` for each direction alone. The
// copy-kernel-copy baselines move the same bytes with the copy engines: `copy-engines` (H2D and D2H at once,
// the stream rate they allow), `copy-h2d` and `copy-d2h` alone. Every contender ends in CPU threads reading
// every output byte (verification) from the host memory that the PCIe traffic also uses: `host-read` is what
// they read alone, `host-read-under-zero-copy` what they read while the zero-copy kernel streams (and
// `zero-copy-under-host-read` the kernel's rate meanwhile): whether the link and the CPU share a bottleneck;
// `host-read-under-copy-engines` / `copy-engines-under-host-read` the same for the copy engines.
//
// GB/s = bytes / seconds, 1 GB = 1e9 bytes; for zero-copy and the copies the bytes of one direction (the
// payload of a CPU->GPU->CPU stream). Buffers default to 1 GiB, far above the GPU's L2 and the CPU's LLC,
// and are streamed in passes, so no byte is served from a cache.
// Exit codes: 0 ok; 1 a run failed (CUDA error, wrong output, I/O); 2 no usable GPU; 3 bad command line.
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/common/json_output.hpp"
#include "framework/core/cuda_buffer.hpp"
#include "framework/core/units.hpp"

namespace {

using xf::bench::utc_now;

constexpr int exit_failed = 1, exit_no_gpu = 2, exit_usage = 3;

struct no_gpu_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void cuda_check(cudaError_t err, const char* call, const char* file, int line) {
  if (err == cudaSuccess) return;
  (void)cudaGetLastError();  // clears a non-sticky error, so the next check does not report it again
  throw std::runtime_error(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                           cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}
#define XFC_CUDA(call) cuda_check((call), #call, __FILE__, __LINE__)
// Launch errors (bad configuration, no kernel image for this GPU) surface only through cudaGetLastError.
#define XFC_CHECK_LAUNCH(kernel) cuda_check(cudaGetLastError(), kernel, __FILE__, __LINE__)

// ---- RAII handles (destructors ignore errors: they also run while unwinding) ---------------------------

/// Pinned host memory, mapped into the device's address space (the kernel's zero-copy source and sink).
class pinned_buffer {
 public:
  explicit pinned_buffer(std::uint64_t bytes) : bytes_(bytes) {
    XFC_CUDA(cudaHostAlloc(&host_, bytes, cudaHostAllocMapped));
    XFC_CUDA(cudaHostGetDevicePointer(&device_, host_, 0));
  }
  ~pinned_buffer() noexcept { (void)cudaFreeHost(host_); }
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;
  template <class T>
  T* host() const {
    return static_cast<T*>(host_);
  }
  template <class T>
  T* device() const {
    return static_cast<T*>(device_);
  }
  std::uint64_t bytes() const { return bytes_; }

 private:
  std::uint64_t bytes_;
  void* host_ = nullptr;
  void* device_ = nullptr;
};

class device_buffer {
 public:
  explicit device_buffer(std::uint64_t bytes) { XFC_CUDA(cudaMalloc(&data_, bytes)); }
  ~device_buffer() noexcept { (void)cudaFree(data_); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  template <class T>
  T* get() const {
    return static_cast<T*>(data_);
  }

 private:
  void* data_ = nullptr;
};

using xf::cuda_event;  // every one here brackets a measured interval: created with timing
using xf::cuda_stream;

/// Declared after the buffers a kernel uses: waits for the device before they are freed (after an error).
struct device_drain {
  ~device_drain() noexcept { (void)cudaDeviceSynchronize(); }
};

float elapsed_seconds(const cuda_event& from, const cuda_event& to) {
  float ms = 0;
  XFC_CUDA(cudaEventElapsedTime(&ms, from.get(), to.get()));
  return ms / 1e3f;
}

// ---- the zero-copy kernel -------------------------------------------------------------------------------

enum class zc_mode { copy, read, write };
constexpr int block_threads = 256;  // 8 warps; the occupancy calculator then decides the blocks per SM
constexpr int unroll = 8;           // 16-byte loads in flight per thread: PCIe latency (~1 us) needs many
constexpr std::uint32_t write_value = 0x5A5A5A5Au;
constexpr std::uint64_t sample_stride = 4096;  // elements between verified outputs

__device__ inline uint4 times3(uint4 v) {
  return make_uint4(v.x * 3u, v.y * 3u, v.z * 3u, v.w * 3u);
}

/// Streams total_vecs 16-byte vectors over a buffer of buffer_vecs in passes, in one launch. Each pass is
/// a grid-stride loop whose iteration issues all `unroll` loads before any store, so a thread keeps that
/// many PCIe reads outstanding; consecutive threads touch consecutive vectors (coalesced 512 B per warp).
/// Blocks never wait for each other: a block done with a pass starts the next, as a persistent kernel would.
template <zc_mode M>
__global__ void zero_copy_kernel(const uint4* __restrict__ in, uint4* __restrict__ out,
                                 std::uint64_t buffer_vecs, std::uint64_t total_vecs,
                                 unsigned long long* sink) {
  const std::uint64_t threads = std::uint64_t{gridDim.x} * blockDim.x;
  const std::uint64_t tid = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::uint64_t tile = threads * unroll;
  const uint4 constant = make_uint4(write_value, write_value, write_value, write_value);
  unsigned long long sum = 0;
  for (std::uint64_t pass = 0; pass < total_vecs; pass += buffer_vecs) {
    const std::uint64_t count = total_vecs - pass < buffer_vecs ? total_vecs - pass : buffer_vecs;
    const std::uint64_t full = count - count % tile;
    for (std::uint64_t base = tid; base < full; base += tile) {
      uint4 v[unroll];
      if constexpr (M != zc_mode::write) {
#pragma unroll
        for (int k = 0; k < unroll; ++k) v[k] = in[base + k * threads];
      }
#pragma unroll
      for (int k = 0; k < unroll; ++k) {
        if constexpr (M == zc_mode::read) {
          sum += std::uint64_t{v[k].x} + v[k].y + v[k].z + v[k].w;
        } else if constexpr (M == zc_mode::copy) {
          out[base + k * threads] = times3(v[k]);
        } else {
          out[base + k * threads] = constant;
        }
      }
    }
    for (std::uint64_t i = full + tid; i < count; i += threads) {  // the tail shorter than a tile
      if constexpr (M == zc_mode::read) {
        const uint4 v = in[i];
        sum += std::uint64_t{v.x} + v.y + v.z + v.w;
      } else if constexpr (M == zc_mode::copy) {
        out[i] = times3(in[i]);
      } else {
        out[i] = constant;
      }
    }
  }
  // One atomic per thread makes the loads observable, so the compiler cannot drop them.
  if constexpr (M == zc_mode::read) atomicAdd(sink, sum);
}

struct device_info {
  int ordinal = 0;
  cudaDeviceProp prop{};
};

/// The pinned input and output buffers, and one-launch passes of the kernel over them.
class zero_copy_rig {
 public:
  zero_copy_rig(const device_info& dev, std::uint64_t buffer_bytes)
      : dev_(dev), in_(buffer_bytes), out_(buffer_bytes), sink_(sizeof(unsigned long long)) {
    std::uint32_t* in = in_.host<std::uint32_t>();
    for (std::uint64_t i = 0; i < elements(); ++i) in[i] = static_cast<std::uint32_t>(i * 2654435761u + 1);
    // A full SM's worth of resident blocks on every SM: enough loads in flight to cover PCIe latency.
    grid_blocks_[0] = blocks_for(zero_copy_kernel<zc_mode::copy>);
    grid_blocks_[1] = blocks_for(zero_copy_kernel<zc_mode::read>);
    grid_blocks_[2] = blocks_for(zero_copy_kernel<zc_mode::write>);
  }

  /// Streams `bytes` (a multiple of 16) through the kernel; returns the kernel's seconds (event timing).
  /// With `wait` false it returns 0 at once and finish() must be called.
  template <zc_mode M>
  double run(std::uint64_t bytes, bool wait = true) {
    if constexpr (M == zc_mode::copy) poison_samples();
    XFC_CUDA(cudaEventRecord(start_.get(), stream_.get()));
    zero_copy_kernel<M><<<grid_blocks(M), block_threads, 0, stream_.get()>>>(
        in_.device<uint4>(), out_.device<uint4>(), in_.bytes() / 16, bytes / 16,
        sink_.get<unsigned long long>());
    XFC_CHECK_LAUNCH("zero_copy_kernel");
    XFC_CUDA(cudaEventRecord(end_.get(), stream_.get()));
    if (!wait) return 0;
    const double seconds = finish();
    if constexpr (M == zc_mode::copy) verify(bytes);
    return seconds;
  }

  double finish() {
    XFC_CUDA(cudaEventSynchronize(end_.get()));
    return elapsed_seconds(start_, end_);
  }

  /// Every sample the timed passes wrote must be in * 3: poison_samples() made each wrong beforehand, so
  /// a pass that did not write (or wrote wrongly) cannot go unnoticed.
  void verify(std::uint64_t bytes) const {
    const std::uint32_t* in = in_.host<std::uint32_t>();
    const std::uint32_t* out = out_.host<std::uint32_t>();
    const std::uint64_t written = std::min(elements(), bytes / 4);
    for (std::uint64_t i = 0; i < written; i += sample_stride) {
      if (out[i] != in[i] * 3u) {
        throw std::runtime_error("zero-copy output mismatch at element " + std::to_string(i) + ": got " +
                                 std::to_string(out[i]) + ", expected " + std::to_string(in[i] * 3u));
      }
    }
  }

  pinned_buffer& in() { return in_; }
  pinned_buffer& out() { return out_; }
  int grid_blocks(zc_mode m) const { return grid_blocks_[static_cast<int>(m)]; }

 private:
  template <class Kernel>
  int blocks_for(Kernel kernel) const {
    int per_sm = 0;
    XFC_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block_threads, 0));
    return per_sm * dev_.prop.multiProcessorCount;
  }
  std::uint64_t elements() const { return in_.bytes() / 4; }
  void poison_samples() {
    const std::uint32_t* in = in_.host<std::uint32_t>();
    std::uint32_t* out = out_.host<std::uint32_t>();
    for (std::uint64_t i = 0; i < elements(); i += sample_stride) out[i] = ~(in[i] * 3u);
  }

  const device_info& dev_;
  pinned_buffer in_, out_;
  device_buffer sink_;
  cuda_stream stream_;
  cuda_event start_{true}, end_{true};  // timed
  int grid_blocks_[3] = {};
  device_drain drain_;  // last member: destroyed first, so no kernel outlives the buffers
};

// ---- the copy engines ----------------------------------------------------------------------------------

/// cudaMemcpyAsync of `chunk` bytes at a time, H2D on one stream and D2H on another, round robin over the
/// chunk-sized slots of the host buffers and two device buffers of the same size. Issuing takes a few us per
/// copy, far less than a 4 MiB chunk's transfer (~75 us), so the engines, not the issuing thread, bound it.
class copy_rig {
 public:
  copy_rig(pinned_buffer& host_in, pinned_buffer& host_out, std::uint64_t chunk)
      : host_in_(host_in),
        host_out_(host_out),
        dev_in_(host_in.bytes()),
        dev_out_(host_in.bytes()),
        chunk_(chunk) {}

  double run(std::uint64_t bytes, bool h2d, bool d2h) {
    const std::uint64_t slots = host_in_.bytes() / chunk_;
    XFC_CUDA(cudaEventRecord(start_.get(), h2d_.get()));
    XFC_CUDA(cudaStreamWaitEvent(d2h_.get(), start_.get(), 0));  // both directions timed from one instant
    std::uint64_t k = 0;
    for (std::uint64_t done = 0; done < bytes; done += chunk_, ++k) {
      const std::uint64_t offset = (k % slots) * chunk_, n = std::min(chunk_, bytes - done);
      if (h2d) {
        XFC_CUDA(cudaMemcpyAsync(dev_in_.get<char>() + offset, host_in_.host<char>() + offset, n,
                                 cudaMemcpyHostToDevice, h2d_.get()));
      }
      if (d2h) {
        XFC_CUDA(cudaMemcpyAsync(host_out_.host<char>() + offset, dev_out_.get<char>() + offset, n,
                                 cudaMemcpyDeviceToHost, d2h_.get()));
      }
    }
    XFC_CUDA(cudaEventRecord(h2d_end_.get(), h2d_.get()));
    XFC_CUDA(cudaEventRecord(d2h_end_.get(), d2h_.get()));
    XFC_CUDA(cudaEventSynchronize(h2d_end_.get()));
    XFC_CUDA(cudaEventSynchronize(d2h_end_.get()));
    return std::max(elapsed_seconds(start_, h2d_end_), elapsed_seconds(start_, d2h_end_));
  }

 private:
  pinned_buffer& host_in_;
  pinned_buffer& host_out_;
  device_buffer dev_in_, dev_out_;
  std::uint64_t chunk_;
  cuda_stream h2d_, d2h_;
  cuda_event start_{true}, h2d_end_{true}, d2h_end_{true};  // timed
  device_drain drain_;
};

// ---- CPU threads reading host memory -------------------------------------------------------------------

constexpr std::uint64_t fill_word = 0x0101010101010101ull;  // memset(…, 1, …) seen as 64-bit words

std::uint64_t sum_words(const std::uint64_t* p, std::uint64_t n) {
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < n; ++i) sum += p[i];  // -O3 vectorises this; memory bounds it, not the ALU
  return sum;
}

struct host_read_run {
  std::uint64_t bytes = 0;
  double seconds = 0;
};

/// `threads` threads memset their part of `buf` (so it is freshly written, as a just-delivered output is),
/// then, after `begin()` and the clock starts, sum it: once, or with `wait` given, in 8 MiB blocks round
/// their part until `wait()` (called on this thread) returns. The sums are checked, so none is dead code.
host_read_run host_read(pinned_buffer& buf, unsigned threads, const std::function<void()>& begin,
                        const std::function<void()>& wait) {
  constexpr std::uint64_t block_words = (8 * xf::MiB) / 8;
  const std::uint64_t words = buf.bytes() / 8, part = words / threads;
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> words_read{0}, bad_sums{0};
  std::barrier sync(static_cast<std::ptrdiff_t>(threads) + 1);
  std::vector<std::jthread> workers;
  for (unsigned t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      std::uint64_t* p = buf.host<std::uint64_t>() + t * part;
      const std::uint64_t n = t + 1 == threads ? words - t * part : part;
      std::memset(p, 1, n * 8);
      sync.arrive_and_wait();  // filled
      sync.arrive_and_wait();  // clock started
      std::uint64_t read = 0, sum = 0;
      if (!wait) {
        sum = sum_words(p, n), read = n;
      } else {
        for (std::uint64_t at = 0; !stop.load(std::memory_order_relaxed); at = at == n ? 0 : at) {
          const std::uint64_t len = std::min(block_words, n - at);
          sum += sum_words(p + at, len), read += len, at += len;
        }
      }
      if (sum != read * fill_word) bad_sums.fetch_add(1);
      words_read.fetch_add(read);
    });
  }
  sync.arrive_and_wait();
  std::exception_ptr failure;
  try {
    if (begin) begin();
  } catch (...) {
    failure = std::current_exception();
    stop = true;
  }
  const auto t0 = std::chrono::steady_clock::now();
  sync.arrive_and_wait();
  if (wait && !failure) {
    try {
      wait();
    } catch (...) {
      failure = std::current_exception();
    }
    stop = true;
  }
  for (auto& w : workers) w.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (failure) std::rethrow_exception(failure);
  if (bad_sums != 0) throw std::runtime_error("host-read: a thread's sum of its part was wrong");
  return {words_read * 8, seconds};
}

// ---- results -------------------------------------------------------------------------------------------

struct run_record {
  double gbps, seconds;
  std::uint64_t bytes;
};

struct result {
  std::string name, what;
  std::vector<run_record> runs;
  std::vector<double> sorted_gbps() const {
    std::vector<double> v;
    for (const auto& r : runs) v.push_back(r.gbps);
    std::sort(v.begin(), v.end());
    return v;
  }
  double median() const {
    const auto v = sorted_gbps();
    return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  }
};

device_info open_device(int ordinal) {
  int count = 0;
  if (const cudaError_t err = cudaGetDeviceCount(&count); err != cudaSuccess) {
    throw no_gpu_error(std::string("cudaGetDeviceCount: ") + cudaGetErrorName(err) + ": " +
                       cudaGetErrorString(err));
  }
  if (count == 0) throw no_gpu_error("no CUDA device found");
  if (ordinal < 0 || ordinal >= count) {
    throw no_gpu_error("--device " + std::to_string(ordinal) + ": there are " + std::to_string(count) +
                       " CUDA device(s)");
  }
  device_info dev;
  dev.ordinal = ordinal;
  XFC_CUDA(cudaSetDevice(ordinal));
  XFC_CUDA(cudaGetDeviceProperties(&dev.prop, ordinal));
  if (dev.prop.canMapHostMemory == 0)
    throw no_gpu_error(std::string(dev.prop.name) + " cannot map host memory");
  return dev;
}

std::uint64_t parse_byte_option(const char* option, const std::string& text) {
  if (const auto bytes = xf::parse_bytes(text)) return *bytes;
  throw std::invalid_argument(std::string(option) + " '" + text + "': " + xf::bytes_syntax_problem(text));
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::pair<std::string, std::string>> measurements = {
      {"zero-copy", "one kernel reads pinned host memory and writes pinned host memory (out = in * 3)"},
      {"zero-copy-read", "the kernel only reads pinned host memory"},
      {"zero-copy-write", "the kernel only writes pinned host memory"},
      {"copy-engines", "cudaMemcpyAsync H2D and D2H at once on two streams; GB/s of one direction"},
      {"copy-h2d", "cudaMemcpyAsync H2D alone"},
      {"copy-d2h", "cudaMemcpyAsync D2H alone"},
      {"host-read", "CPU threads sum a freshly memset pinned host buffer"},
      {"host-read-under-zero-copy", "host-read while the zero-copy kernel streams (and the kernel's rate)"},
      {"host-read-under-copy-engines",
       "host-read while the copy engines stream both ways (and the engines' rate)"}};
  std::vector<std::string> names;
  for (const auto& m : measurements) names.push_back(m.first);

  std::string bytes_text = "8GiB", buffer_text = "1GiB", chunk_text = "4MiB", host_text = "4GiB";
  std::string json_path, commit;
  std::vector<std::string> only;
  unsigned threads = 12, repeats = 3;
  int ordinal = 0;
  CLI::App app{
      "xeflow-ceiling: measures the ceilings of a CPU->GPU->CPU stream on this machine: zero-copy kernel "
      "reads/writes of pinned host memory, the copy engines, and CPU threads reading host memory (alone and "
      "while the kernel streams). GB/s with 1 GB = 1e9 bytes; the median of --repeats runs."};
  app.option_defaults()->always_capture_default();
  app.add_option("--bytes", bytes_text,
                 "bytes streamed per run (per direction for the copies; units: KiB, ...)");
  app.add_option("--buffer-bytes", buffer_text, "size of each host (and device) buffer streamed in passes");
  app.add_option("--chunk", chunk_text, "bytes per cudaMemcpyAsync for the copy-engine runs");
  app.add_option("--host-bytes", host_text, "size of the buffer the CPU threads read");
  app.add_option("--threads", threads, "CPU threads reading host memory")->check(CLI::Range(1u, 1024u));
  app.add_option("--repeats", repeats, "runs per measurement (the median is reported)")
      ->check(CLI::Range(1u, 1000u));
  app.add_option("--only", only, "measurements to run, comma-separated (default: all)")
      ->delimiter(',')
      ->check(CLI::IsMember(names));
  app.add_option("--json", json_path, "also write the results as JSON to this file");
  app.add_option("--commit", commit, "commit recorded in the JSON");
  app.add_option("--device", ordinal, "CUDA device ordinal");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : exit_usage;
  }

  std::uint64_t bytes = 0, buffer_bytes = 0, chunk = 0, host_bytes = 0;
  try {
    bytes = parse_byte_option("--bytes", bytes_text);
    buffer_bytes = parse_byte_option("--buffer-bytes", buffer_text);
    chunk = parse_byte_option("--chunk", chunk_text);
    host_bytes = parse_byte_option("--host-bytes", host_text);
    // 16-byte multiples: the kernel moves uint4 vectors and has no byte-granular tail.
    if (bytes == 0 || bytes % 16 != 0)
      throw std::invalid_argument("--bytes must be a positive multiple of 16");
    if (buffer_bytes == 0 || buffer_bytes % 16 != 0) {
      throw std::invalid_argument("--buffer-bytes must be a positive multiple of 16");
    }
    if (chunk == 0 || chunk > buffer_bytes)
      throw std::invalid_argument("--chunk must be 1 .. --buffer-bytes");
    if (host_bytes < std::uint64_t{threads} * 8 * xf::MiB) {
      throw std::invalid_argument("--host-bytes must be at least 8 MiB per thread");
    }
  } catch (const std::exception& e) {
    std::cerr << "xeflow-ceiling: error: " << e.what() << "\n";
    return exit_usage;
  }
  if (only.empty()) only = names;
  for (auto it = only.begin(); it != only.end(); ++it) {  // a name given twice would run twice per round
    only.erase(std::remove(std::next(it), only.end(), *it), only.end());
  }
  auto selected = [&](const char* name) { return std::find(only.begin(), only.end(), name) != only.end(); };

  std::vector<result> results;
  auto record = [&](const std::string& name, const std::string& what, std::uint64_t n, double seconds) {
    auto it = std::find_if(results.begin(), results.end(), [&](const result& r) { return r.name == name; });
    if (it == results.end()) it = results.insert(results.end(), result{name, what, {}});
    it->runs.push_back({static_cast<double>(n) / seconds / 1e9, seconds, n});
    std::fprintf(stderr, "%-26s run %zu/%u: %8.2f GB/s\n", name.c_str(), it->runs.size(), repeats,
                 it->runs.back().gbps);
  };
  auto what_of = [&](const std::string& name) {
    for (const auto& m : measurements) {
      if (m.first == name) return m.second;
    }
    return std::string();
  };

  device_info dev;
  int grid_blocks[3] = {};
  try {
    dev = open_device(ordinal);
    const bool any_zero_copy = selected("zero-copy") || selected("zero-copy-read") ||
                               selected("zero-copy-write") || selected("host-read-under-zero-copy");
    const bool any_copy = selected("copy-engines") || selected("copy-h2d") || selected("copy-d2h") ||
                          selected("host-read-under-copy-engines");
    const bool any_host = selected("host-read") || selected("host-read-under-zero-copy") ||
                          selected("host-read-under-copy-engines");
    // The copies use the zero-copy rig's pinned buffers as their host side: pinned is pinned.
    std::optional<zero_copy_rig> zc;
    if (any_zero_copy || any_copy) zc.emplace(dev, buffer_bytes);
    std::optional<copy_rig> copies;
    if (any_copy) copies.emplace(zc->in(), zc->out(), chunk);
    std::optional<pinned_buffer> host_buf;
    if (any_host) host_buf.emplace(host_bytes);

    // Untimed warm-up: one pass each (first-touch of the mappings, module load, copy-engine setup).
    if (any_zero_copy) zc->run<zc_mode::copy>(buffer_bytes);
    if (zc) {
      for (int m = 0; m < 3; ++m) grid_blocks[m] = zc->grid_blocks(static_cast<zc_mode>(m));
    }
    if (any_copy) copies->run(buffer_bytes, true, true);

    // Rounds rather than one measurement's repeats back to back: drift (clocks, temperature, other
    // tenants) then spreads over all measurements instead of biasing one.
    for (unsigned rep = 0; rep < repeats; ++rep) {
      for (const auto& name : only) {
        if (name == "zero-copy") record(name, what_of(name), bytes, zc->run<zc_mode::copy>(bytes));
        if (name == "zero-copy-read") record(name, what_of(name), bytes, zc->run<zc_mode::read>(bytes));
        if (name == "zero-copy-write") record(name, what_of(name), bytes, zc->run<zc_mode::write>(bytes));
        if (name == "copy-engines") record(name, what_of(name), bytes, copies->run(bytes, true, true));
        if (name == "copy-h2d") record(name, what_of(name), bytes, copies->run(bytes, true, false));
        if (name == "copy-d2h") record(name, what_of(name), bytes, copies->run(bytes, false, true));
        if (name == "host-read") {
          const host_read_run r = host_read(*host_buf, threads, nullptr, nullptr);
          record(name, what_of(name), r.bytes, r.seconds);
        }
        if (name == "host-read-under-zero-copy") {
          // The kernel starts just before the clock; the threads read round their parts until it ends.
          double kernel_seconds = 0;
          const host_read_run r = host_read(
              *host_buf, threads, [&] { zc->run<zc_mode::copy>(bytes, false); },
              [&] { kernel_seconds = zc->finish(); });
          zc->verify(bytes);
          record(name, what_of(name), r.bytes, r.seconds);
          record("zero-copy-under-host-read",
                 "the zero-copy kernel's rate while host-read-under-zero-copy reads", bytes, kernel_seconds);
        }
        if (name == "host-read-under-copy-engines") {
          // The copies are issued and timed (by their events) on this thread once the readers run; the
          // readers go round their parts until the copies end: a bridged stream's engines and its sink's
          // reads of the delivered frames share host memory the same way.
          double copy_seconds = 0;
          const host_read_run r =
              host_read(*host_buf, threads, nullptr, [&] { copy_seconds = copies->run(bytes, true, true); });
          record(name, what_of(name), r.bytes, r.seconds);
          record(
              "copy-engines-under-host-read",
              "the copy engines' rate (both ways, one direction's bytes) while host-read-under-copy-engines "
              "reads",
              bytes, copy_seconds);
        }
      }
    }
  } catch (const no_gpu_error& e) {
    std::cerr << "xeflow-ceiling: no usable GPU: " << e.what() << "\n";
    return exit_no_gpu;
  } catch (const std::exception& e) {
    std::cerr << "xeflow-ceiling: error: " << e.what() << "\n";
    return exit_failed;
  }

  std::printf("%s, %s streamed per run, %s buffers\n", dev.prop.name, xf::format_bytes(bytes).c_str(),
              xf::format_bytes(buffer_bytes).c_str());
  std::printf("%-26s %9s %9s %9s %7s\n", "name", "GB/s", "min", "max", "repeats");
  for (const auto& r : results) {
    const auto v = r.sorted_gbps();
    std::printf("%-26s %9.2f %9.2f %9.2f %7zu\n", r.name.c_str(), r.median(), v.front(), v.back(), v.size());
  }

  if (!json_path.empty()) {
    nlohmann::json out_results = nlohmann::json::array();
    for (const auto& r : results) {
      nlohmann::json runs = nlohmann::json::array();
      for (const auto& run : r.runs)
        runs.push_back({{"gbps", run.gbps}, {"seconds", run.seconds}, {"bytes", run.bytes}});
      const auto v = r.sorted_gbps();
      out_results.push_back({{"name", r.name},
                             {"what", r.what},
                             {"gbps", r.median()},
                             {"min_gbps", v.front()},
                             {"max_gbps", v.back()},
                             {"runs", runs}});
    }
    const nlohmann::json doc = {
        {"device", dev.prop.name},
        {"date", utc_now()},
        {"commit", commit},
        {"results", out_results},
        {"config",
         {{"bytes", bytes},
          {"buffer_bytes", buffer_bytes},
          {"chunk_bytes", chunk},
          {"host_bytes", host_bytes},
          {"threads", threads},
          {"repeats", repeats},
          {"only", only},
          {"device_ordinal", dev.ordinal},
          {"sms", dev.prop.multiProcessorCount},
          {"l2_bytes", dev.prop.l2CacheSize},
          {"block_threads", block_threads},
          {"grid_blocks", {{"copy", grid_blocks[0]}, {"read", grid_blocks[1]}, {"write", grid_blocks[2]}}},
          {"unroll", unroll},
          {"sample_stride", sample_stride},
          {"bytes_per_gb", 1e9}}}};
    if (!xf::bench::write_json(json_path, doc, "xeflow-ceiling")) return exit_failed;
  }
  return 0;
}
