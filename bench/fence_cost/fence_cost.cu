// xeflow-fence-cost: what a release fence costs a block of a persistent kernel on this machine, by scope
// (device, system), by what the warp stored just before it (nothing, a word in device memory, a word in
// pinned host memory) and by what the link carries meanwhile (nothing, the copy engines host -> device,
// device -> host), with one block fencing alone and with a full grid fencing at once.
//
// The persistent kernel publishes each round behind one system-scope release fence (publish_round), so a
// round cannot be shorter than this fence; its stats report the fences' mean (`fence_cycles` / `fences`).
// This program measures the fence apart from everything else a round does, so the two can be compared.
//
// Each block is one warp that, `--iterations` times: stores its word (relaxed), reads clock64, fences
// (the whole warp, as publish_round does), reads clock64 again, then sleeps `--gap-ns` (a round's compute).
// Cycles become time by the block's own clock64 / %globaltimer ratio over its run. Under load, the copies
// are issued on another stream for as long as the kernel runs (checked by events: a case whose kernel was
// not covered by copies from start to end is reported as such).
// Exit codes: 0 ok; 1 a run failed; 2 no usable GPU; 3 bad command line.
#include <cuda_runtime.h>
#include <cuda/atomic>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/common/json_output.hpp"

namespace {

constexpr int exit_failed = 1, exit_no_gpu = 2, exit_usage = 3;

void cuda_check(cudaError_t err, const char* call, int line) {
  if (err == cudaSuccess) return;
  (void)cudaGetLastError();
  throw std::runtime_error(std::string(call) + " failed at line " + std::to_string(line) + ": " +
                           cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}
#define FC_CHECK(call) cuda_check((call), #call, __LINE__)

enum class scope : int { device, system };
enum class stored : int { nothing, device_word, host_word };
enum class link_load : int { idle, h2d, d2h };

const char* name_of(scope s) {
  return s == scope::device ? "device" : "system";
}
const char* name_of(stored s) {
  return s == stored::nothing ? "nothing" : s == stored::device_word ? "device word" : "host word";
}
const char* name_of(link_load l) {
  return l == link_load::idle ? "idle" : l == link_load::h2d ? "copies h2d" : "copies d2h";
}

__device__ __forceinline__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

struct block_span {
  unsigned long long cycles, ns;
};

/// One warp a block: store, fence, record the fence's cycles, sleep; `samples` is [blocks][iterations].
template <scope Scope>
__global__ void fence_kernel(stored what, std::uint64_t* device_words, std::uint64_t* host_words,
                             std::uint32_t iterations, std::uint32_t gap_ns, std::uint32_t* samples,
                             block_span* spans) {
  const std::uint64_t c0 = clock64(), n0 = global_ns();
  for (std::uint32_t i = 0; i < iterations; ++i) {
    if (threadIdx.x == 0) {
      // A page apart, so blocks never share a line (as the topics' words of different slots).
      if (what == stored::device_word)
        cuda::atomic_ref<std::uint64_t, cuda::thread_scope_device>(device_words[blockIdx.x * 512])
            .store(i, cuda::std::memory_order_relaxed);
      else if (what == stored::host_word)
        cuda::atomic_ref<std::uint64_t, cuda::thread_scope_system>(host_words[blockIdx.x * 512])
            .store(i, cuda::std::memory_order_relaxed);
    }
    __syncwarp();
    const std::uint64_t t0 = clock64();
    if constexpr (Scope == scope::system)
      cuda::atomic_thread_fence(cuda::std::memory_order_release, cuda::thread_scope_system);
    else
      cuda::atomic_thread_fence(cuda::std::memory_order_release, cuda::thread_scope_device);
    const std::uint64_t t1 = clock64();
    if (threadIdx.x == 0)
      samples[std::uint64_t{blockIdx.x} * iterations + i] = static_cast<std::uint32_t>(t1 - t0);
    if (gap_ns != 0) __nanosleep(gap_ns);
  }
  if (threadIdx.x == 0) spans[blockIdx.x] = {clock64() - c0, global_ns() - n0};
}

struct case_result {
  scope sc;
  stored st;
  link_load load;
  std::uint32_t blocks;
  double mean_us, p50_us, p99_us, max_us;
  double cycles_per_ns;
  bool covered;  ///< the copies ran from before the kernel's start to after its end
  std::uint64_t copied_bytes;
};

double quantile(std::vector<double>& v, double q) {
  const std::size_t k = std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

struct rig {
  std::uint32_t max_blocks, iterations, gap_ns;
  std::uint64_t copy_bytes;
  std::uint64_t *device_words = nullptr, *host_words = nullptr;
  std::uint32_t* samples = nullptr;
  block_span* spans = nullptr;
  void *host_buf = nullptr, *device_buf = nullptr;
  cudaStream_t kernel_stream{}, copy_stream{};
  cudaEvent_t kernel_start{}, kernel_end{}, copy_first{}, copy_done[2]{};

  rig(std::uint32_t blocks, std::uint32_t iters, std::uint32_t gap, std::uint64_t copy)
      : max_blocks(blocks), iterations(iters), gap_ns(gap), copy_bytes(copy) {
    FC_CHECK(cudaMalloc(&device_words, std::uint64_t{blocks} * 512 * 8));
    FC_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host_words), std::uint64_t{blocks} * 512 * 8,
                           cudaHostAllocMapped));
    FC_CHECK(cudaMalloc(&samples, std::uint64_t{blocks} * iters * 4));
    FC_CHECK(cudaMalloc(&spans, std::uint64_t{blocks} * sizeof(block_span)));
    FC_CHECK(cudaHostAlloc(&host_buf, copy, cudaHostAllocDefault));
    FC_CHECK(cudaMalloc(&device_buf, copy));
    FC_CHECK(cudaMemset(device_buf, 1, copy));
    std::fill_n(static_cast<char*>(host_buf), copy, 2);
    FC_CHECK(cudaStreamCreateWithFlags(&kernel_stream, cudaStreamNonBlocking));
    FC_CHECK(cudaStreamCreateWithFlags(&copy_stream, cudaStreamNonBlocking));
    for (cudaEvent_t* e : {&kernel_start, &kernel_end, &copy_first, &copy_done[0], &copy_done[1]})
      FC_CHECK(cudaEventCreate(e));
  }
  ~rig() {
    cudaFree(device_words);
    cudaFreeHost(host_words);
    cudaFree(samples);
    cudaFree(spans);
    cudaFreeHost(host_buf);
    cudaFree(device_buf);
    cudaStreamDestroy(kernel_stream);
    cudaStreamDestroy(copy_stream);
    for (cudaEvent_t e : {kernel_start, kernel_end, copy_first, copy_done[0], copy_done[1]})
      cudaEventDestroy(e);
  }

  void copy_once(link_load load) {
    if (load == link_load::h2d)
      FC_CHECK(cudaMemcpyAsync(device_buf, host_buf, copy_bytes, cudaMemcpyHostToDevice, copy_stream));
    else
      FC_CHECK(cudaMemcpyAsync(host_buf, device_buf, copy_bytes, cudaMemcpyDeviceToHost, copy_stream));
  }

  case_result run(scope sc, stored st, link_load load, std::uint32_t blocks) {
    case_result r{sc, st, load, blocks, 0, 0, 0, 0, 0, true, 0};
    if (load != link_load::idle) {
      // Two copies queued ahead of the kernel, then one more each time the older of the two ends.
      FC_CHECK(cudaEventRecord(copy_first, copy_stream));
      for (cudaEvent_t e : copy_done) {
        copy_once(load);
        FC_CHECK(cudaEventRecord(e, copy_stream));
      }
      r.copied_bytes = 2 * copy_bytes;
    }
    FC_CHECK(cudaEventRecord(kernel_start, kernel_stream));
    if (sc == scope::system)
      fence_kernel<scope::system><<<blocks, 32, 0, kernel_stream>>>(st, device_words, host_words, iterations,
                                                                    gap_ns, samples, spans);
    else
      fence_kernel<scope::device><<<blocks, 32, 0, kernel_stream>>>(st, device_words, host_words, iterations,
                                                                    gap_ns, samples, spans);
    FC_CHECK(cudaGetLastError());
    FC_CHECK(cudaEventRecord(kernel_end, kernel_stream));
    for (std::size_t k = 0; load != link_load::idle; k ^= 1) {
      cudaError_t copy = cudaErrorNotReady, kernel = cudaErrorNotReady;
      while (copy == cudaErrorNotReady && kernel == cudaErrorNotReady) {
        copy = cudaEventQuery(copy_done[k]);
        kernel = cudaEventQuery(kernel_end);
      }
      if (copy != cudaErrorNotReady) FC_CHECK(copy);
      if (kernel != cudaErrorNotReady) {
        FC_CHECK(kernel);
        break;
      }
      copy_once(load);
      FC_CHECK(cudaEventRecord(copy_done[k], copy_stream));
      r.copied_bytes += copy_bytes;
    }
    FC_CHECK(cudaStreamSynchronize(kernel_stream));
    FC_CHECK(cudaStreamSynchronize(copy_stream));
    if (load != link_load::idle) {
      // Covered: the copies started before the kernel did; they went on until it ended (one was queued
      // whenever one ended, until then), so only the start can fail to be covered.
      float first_to_kernel = 0;
      FC_CHECK(cudaEventElapsedTime(&first_to_kernel, copy_first, kernel_start));
      r.covered = first_to_kernel >= 0;
    }
    std::vector<std::uint32_t> cycles(std::uint64_t{blocks} * iterations);
    std::vector<block_span> span(blocks);
    FC_CHECK(cudaMemcpy(cycles.data(), samples, cycles.size() * 4, cudaMemcpyDeviceToHost));
    FC_CHECK(cudaMemcpy(span.data(), spans, span.size() * sizeof(block_span), cudaMemcpyDeviceToHost));
    double ratio = 0;
    for (const block_span& s : span) ratio += static_cast<double>(s.cycles) / static_cast<double>(s.ns);
    ratio /= blocks;
    r.cycles_per_ns = ratio;
    std::vector<double> us(cycles.size());
    double sum = 0;
    for (std::size_t i = 0; i < cycles.size(); ++i) {
      us[i] = static_cast<double>(cycles[i]) / ratio / 1e3;
      sum += us[i];
    }
    r.mean_us = sum / static_cast<double>(us.size());
    r.max_us = *std::max_element(us.begin(), us.end());
    r.p99_us = quantile(us, 0.99);
    r.p50_us = quantile(us, 0.5);
    return r;
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::uint32_t iterations = 2000, gap_ns = 2000, blocks = 0;
  std::uint64_t copy_mib = 256;
  std::string json_path, commit;
  int ordinal = 0;
  CLI::App app{
      "xeflow-fence-cost: the cost of a release fence in a persistent kernel's block, by scope, by what was "
      "stored before it and by what the link carries meanwhile; one block alone and a full grid at once."};
  app.option_defaults()->always_capture_default();
  app.add_option("--iterations", iterations, "fences per block and case")->check(CLI::Range(1u, 1000000u));
  app.add_option("--gap-ns", gap_ns, "sleep between two fences (a round's compute)")
      ->check(CLI::Range(0u, 1000000u));
  app.add_option("--blocks", blocks, "blocks of the full grid (default: 2 per SM, the kernel's default)");
  app.add_option("--copy-mib", copy_mib, "MiB per copy of the copy engines' load")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{16384}));
  app.add_option("--json", json_path, "also write the results as JSON to this file");
  app.add_option("--commit", commit, "commit recorded in the JSON");
  app.add_option("--device", ordinal, "CUDA device ordinal");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : exit_usage;
  }
  cudaDeviceProp prop{};
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || ordinal < 0 || ordinal >= count) {
    std::cerr << "xeflow-fence-cost: no usable GPU (device " << ordinal << ")\n";
    return exit_no_gpu;
  }
  std::vector<case_result> results;
  try {
    FC_CHECK(cudaSetDevice(ordinal));
    FC_CHECK(cudaGetDeviceProperties(&prop, ordinal));
    if (blocks == 0) blocks = 2 * static_cast<std::uint32_t>(prop.multiProcessorCount);
    rig r(blocks, iterations, gap_ns, copy_mib << 20);
    r.run(scope::system, stored::host_word, link_load::idle, blocks);  // warm-up, not recorded
    for (link_load load : {link_load::idle, link_load::h2d, link_load::d2h})
      for (std::uint32_t b : {1u, blocks})
        for (stored st : {stored::nothing, stored::device_word, stored::host_word})
          for (scope sc : {scope::device, scope::system}) results.push_back(r.run(sc, st, load, b));
  } catch (const std::exception& e) {
    std::cerr << "xeflow-fence-cost: error: " << e.what() << "\n";
    return exit_failed;
  }

  std::printf("%s, %u fences a block, %u ns apart; full grid %u blocks of one warp\n", prop.name, iterations,
              gap_ns, blocks);
  std::printf("%-11s %6s %-12s %-7s %9s %9s %9s %9s\n", "link", "blocks", "stored", "scope", "mean us",
              "p50 us", "p99 us", "max us");
  for (const case_result& c : results)
    std::printf("%-11s %6u %-12s %-7s %9.2f %9.2f %9.2f %9.2f%s\n", name_of(c.load), c.blocks, name_of(c.st),
                name_of(c.sc), c.mean_us, c.p50_us, c.p99_us, c.max_us,
                c.covered ? "" : "  (copies not covering)");

  if (!json_path.empty()) {
    nlohmann::json cases = nlohmann::json::array();
    for (const case_result& c : results)
      cases.push_back({{"link", name_of(c.load)},
                       {"blocks", c.blocks},
                       {"stored", name_of(c.st)},
                       {"scope", name_of(c.sc)},
                       {"mean_us", c.mean_us},
                       {"p50_us", c.p50_us},
                       {"p99_us", c.p99_us},
                       {"max_us", c.max_us},
                       {"cycles_per_ns", c.cycles_per_ns},
                       {"copies_covering", c.covered},
                       {"copied_bytes", c.copied_bytes}});
    nlohmann::json doc = xf::bench::stamped("fence_cost", prop.name, commit, argc, argv);
    doc["config"] = {{"iterations", iterations},
                     {"gap_ns", gap_ns},
                     {"grid_blocks", blocks},
                     {"copy_bytes", copy_mib << 20},
                     {"device_ordinal", ordinal}};
    doc["cases"] = cases;
    if (!xf::bench::write_json(json_path, doc, "xeflow-fence-cost")) return exit_failed;
  }
  return 0;
}
