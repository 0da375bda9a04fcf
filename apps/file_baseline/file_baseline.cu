// xeflow-file-baseline's work: the file read into device memory by the reading threads (pread_copier), and
// the device checksum.
#include "apps/file_baseline/file_baseline.hpp"

#include <cuda_runtime.h>

#include <chrono>
#include <memory>
#include <stdexcept>

#include "apps/file_baseline/file_checksum.hpp"
#include "apps/file_baseline/pread_copier.hpp"
#include "framework/core/cuda_check.hpp"
#include "framework/files/file_table.hpp"

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

struct device_deleter {
  void operator()(std::byte* p) const { cuda_ok(cudaFree(p)); }
};

}  // namespace

result run(const config& c) {
  if (c.threads == 0 || c.buffers == 0)
    throw std::invalid_argument("--threads and --buffers must be at least 1");
  if (c.request == 0 || c.request % 4096 != 0)
    throw std::invalid_argument("--request must be a multiple of 4KiB");
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
    throw std::invalid_argument("the file (" + std::to_string(file.size) +
                                " bytes) does not fit in the GPU's free memory");
  std::byte* image = nullptr;
  XF_CUDA_TRY(cudaMalloc(&image, image_bytes));
  std::unique_ptr<std::byte, device_deleter> image_owner(image);
  XF_CUDA_TRY(cudaMemset(image, 0, image_bytes));

  // The threads' buffers and streams first: the time is from the first read to the last copy's completion.
  pread_copier copier(files, 0, c.threads, c.request, c.buffers, "xeflow-file-baseline");
  const auto start = std::chrono::steady_clock::now();
  copier.read(0, file.size, image);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

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
