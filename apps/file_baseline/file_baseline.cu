// xeflow-file-baseline's work: the reading threads and their copies, and the device checksum.
#include "apps/file_baseline/file_baseline.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "apps/file_baseline/file_checksum.hpp"
#include "framework/files/file_table.hpp"
#include "framework/gpu/cuda_check.hpp"

namespace xf::file_baseline {
namespace {

/// Sum of the file's 64-bit little-endian words (a short tail zero-padded): order-free, so the device
/// sums with atomics and the host in one pass.
__global__ void sum_words(const std::uint64_t* words, std::uint64_t count, unsigned long long* sum) {
  unsigned long long local = 0;
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::uint64_t{gridDim.x} * blockDim.x)
    local += words[i];
  atomicAdd(sum, local);
}

struct pinned_deleter {
  void operator()(std::byte* p) const { cuda_ok(cudaFreeHost(p)); }
};
struct device_deleter {
  void operator()(std::byte* p) const { cuda_ok(cudaFree(p)); }
};

}  // namespace

result run(const config& c) {
  if (c.threads == 0 || c.buffers == 0) throw std::invalid_argument("--threads and --buffers must be at least 1");
  if (c.request == 0 || c.request % 4096 != 0) throw std::invalid_argument("--request must be a multiple of 4KiB");
  file_table files({.direct = c.direct, .max_direct_alignment = 4096});
  files.open(c.path, {"xeflow-file-baseline", "", std::nullopt});
  const opened_file& file = files.file(0);
  result r;
  r.bytes = file.size;
  r.direct = file.direct;
  cudaDeviceProp prop{};
  XF_CUDA_TRY(cudaGetDeviceProperties(&prop, 0));
  r.device = prop.name;
  std::size_t free_bytes = 0, total = 0;
  XF_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total));
  const std::uint64_t image_bytes = (file.size + c.request) / 8 * 8 + 8;  // room for a last whole request
  if (image_bytes > free_bytes / 10 * 9)
    throw std::invalid_argument("the file (" + std::to_string(file.size) + " bytes) does not fit in the GPU's free memory");
  std::byte* image = nullptr;
  XF_CUDA_TRY(cudaMalloc(&image, image_bytes));
  std::unique_ptr<std::byte, device_deleter> image_owner(image);
  XF_CUDA_TRY(cudaMemset(image, 0, image_bytes));

  // Thread t reads bytes [t·part, (t+1)·part) of the file, in requests; part a multiple of the request.
  const std::uint64_t requests = (file.size + c.request - 1) / c.request;
  const std::uint64_t part = (requests + c.threads - 1) / c.threads * c.request;
  std::atomic<bool> failed{false};
  std::string failure;
  std::mutex failure_mutex;
  std::vector<std::thread> threads;
  const auto start = std::chrono::steady_clock::now();
  for (unsigned t = 0; t < c.threads; ++t) {
    threads.emplace_back([&, t] {
      try {
        cudaStream_t stream = nullptr;
        XF_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        std::vector<std::unique_ptr<std::byte, pinned_deleter>> buffers;
        std::vector<cudaEvent_t> copied(c.buffers, nullptr);
        for (unsigned b = 0; b < c.buffers; ++b) {
          std::byte* p = nullptr;
          XF_CUDA_TRY(cudaHostAlloc(&p, c.request, cudaHostAllocDefault));
          buffers.emplace_back(p);
          XF_CUDA_TRY(cudaEventCreateWithFlags(&copied[b], cudaEventDisableTiming));
        }
        const std::uint64_t begin = std::min<std::uint64_t>(file.size, t * part);
        const std::uint64_t end = std::min<std::uint64_t>(file.size, begin + part);
        unsigned next = 0;
        for (std::uint64_t at = begin; at < end && !failed.load(); at += c.request) {
          const std::uint64_t n = std::min(c.request, end - at);
          XF_CUDA_TRY(cudaEventSynchronize(copied[next]));  // its last copy is done: the buffer is free
          const read_outcome out = files.read(0, at, n, buffers[next].get(), c.request);
          if (out.status != file_status::ok) throw files.failure(0, out, at, {"xeflow-file-baseline", "", std::nullopt});
          XF_CUDA_TRY(cudaMemcpyAsync(image + at, buffers[next].get(), n, cudaMemcpyHostToDevice, stream));
          XF_CUDA_TRY(cudaEventRecord(copied[next], stream));
          next = (next + 1) % c.buffers;
        }
        XF_CUDA_TRY(cudaStreamSynchronize(stream));
        for (cudaEvent_t e : copied) cuda_ok(cudaEventDestroy(e));
        cuda_ok(cudaStreamDestroy(stream));
      } catch (const std::exception& e) {
        std::lock_guard lock(failure_mutex);
        if (!failed.exchange(true)) failure = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (failed.load()) throw std::runtime_error(failure);

  if (c.verify) {
    unsigned long long* sum = nullptr;
    XF_CUDA_TRY(cudaMalloc(&sum, sizeof *sum));
    XF_CUDA_TRY(cudaMemset(sum, 0, sizeof *sum));
    sum_words<<<prop.multiProcessorCount * 4, 256>>>(reinterpret_cast<const std::uint64_t*>(image),
                                                     (file.size + 7) / 8, sum);
    XF_CUDA_TRY(cudaGetLastError());
    unsigned long long device_sum = 0;
    XF_CUDA_TRY(cudaMemcpy(&device_sum, sum, sizeof device_sum, cudaMemcpyDeviceToHost));
    cuda_ok(cudaFree(sum));
    r.device_checksum = device_sum;
    r.file_checksum = file_checksum(files, 0, file.size, c.request, "xeflow-file-baseline");
    r.verified = r.device_checksum == r.file_checksum;
  }
  return r;
}

}  // namespace xf::file_baseline
