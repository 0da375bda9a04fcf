// xeflow-shared-address-probe: can one virtual address name device memory in kernels and host memory on
// the CPU? The ADSM/GMAC paper's single pointer needs exactly that, and the answer decides how the shared
// objects library (framework/shared) obtains it. Two ways are tried and every step is reported:
//
//   device first  reserve a range with the CUDA virtual memory API (cuMemAddressReserve), map device memory
//                 there for the GPU (cuMemCreate, cuMemMap, cuMemSetAccess), then map host pages over the
//                 same range for the CPU (mmap MAP_FIXED over the driver's placeholder): kernels should see
//                 the device memory, the CPU its pages, and copies must go through another host view
//                 (cudaMemcpy on the shared address means the device side under unified addressing).
//   host first    map host pages, then ask cuMemAddressReserve for that address as a hint.
//
// Exit 0 when "device first" worked end to end, 1 otherwise, 2 without a usable GPU.
#include <cuda.h>
#include <cuda_runtime.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

namespace {

int failures = 0;

bool report(const char* step, bool ok, const std::string& detail = "") {
  std::printf("%-62s %s%s%s\n", step, ok ? "ok" : "FAILS", detail.empty() ? "" : ": ", detail.c_str());
  if (!ok) ++failures;
  return ok;
}

std::string driver_error(CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  cuGetErrorName(r, &name);
  cuGetErrorString(r, &text);
  return std::string(name ? name : "?") + " (" + (text ? text : "?") + ")";
}

bool driver_step(const char* step, CUresult r) {
  return report(step, r == CUDA_SUCCESS, r == CUDA_SUCCESS ? "" : driver_error(r));
}

bool runtime_step(const char* step, cudaError_t e) {
  return report(
      step, e == cudaSuccess,
      e == cudaSuccess ? "" : std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")");
}

/// The line of /proc/self/maps that holds `address`, or "" (what the process has mapped there).
std::string mapping_of(std::uintptr_t address) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    unsigned long begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &begin, &end) == 2 && address >= begin && address < end)
      return line;
  }
  return "";
}

__global__ void fill_kernel(unsigned* p, std::size_t n, unsigned base) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    p[i] = base + static_cast<unsigned>(i);
}

__global__ void count_unequal_kernel(const unsigned* p, std::size_t n, unsigned base, unsigned* unequal) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    if (p[i] != base + static_cast<unsigned>(i)) atomicAdd(unequal, 1u);
}

}  // namespace

int main() {
  if (cudaFree(nullptr) != cudaSuccess) {
    std::printf("no usable CUDA device\n");
    return 2;
  }
  int device = 0;
  cudaGetDevice(&device);
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  std::size_t granularity = 0;
  if (!driver_step("cuMemGetAllocationGranularity",
                   cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM)))
    return 1;
  const std::size_t bytes = (std::size_t{16} << 20) / granularity * granularity;
  const std::size_t words = bytes / sizeof(unsigned);
  unsigned* unequal = nullptr;
  cudaMallocManaged(&unequal, sizeof(unsigned));

  std::printf("device first (%zu bytes, granularity %zu)\n", bytes, granularity);
  CUdeviceptr va = 0;
  CUmemGenericAllocationHandle handle{};
  if (!driver_step("  cuMemAddressReserve", cuMemAddressReserve(&va, bytes, 0, 0, 0))) return 1;
  const auto address = static_cast<std::uintptr_t>(va);
  std::printf("  address %#lx; the process maps there: %s\n", static_cast<unsigned long>(address),
              mapping_of(address).c_str());
  driver_step("  cuMemCreate (device memory)", cuMemCreate(&handle, bytes, &prop, 0));
  driver_step("  cuMemMap", cuMemMap(va, bytes, 0, handle, 0));
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  driver_step("  cuMemSetAccess", cuMemSetAccess(va, bytes, &access, 1));
  auto* shared = reinterpret_cast<unsigned*>(address);
  fill_kernel<<<264, 256>>>(shared, words, 1000);
  runtime_step("  a kernel writes device memory at the address", cudaDeviceSynchronize());

  void* host = ::mmap(reinterpret_cast<void*>(address), bytes, PROT_READ | PROT_WRITE,
                      MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (report("  mmap host pages over the range (MAP_FIXED)", host == reinterpret_cast<void*>(address),
             host == MAP_FAILED ? std::strerror(errno) : "")) {
    std::printf("  the process maps there now: %s\n", mapping_of(address).c_str());
    for (std::size_t i = 0; i < words; ++i) shared[i] = 7;  // the CPU's pages
    *unequal = 0;
    count_unequal_kernel<<<264, 256>>>(shared, words, 1000, unequal);
    const bool ran =
        runtime_step("  a kernel reads the address after the CPU wrote its pages", cudaDeviceSynchronize());
    report("  ... and sees the device memory, not the CPU's pages", ran && *unequal == 0,
           std::to_string(*unequal) + " words differ");
    fill_kernel<<<264, 256>>>(shared, words, 5000);
    runtime_step("  a kernel writes the address again", cudaDeviceSynchronize());
    bool host_kept = true;
    for (std::size_t i = 0; i < words; ++i) host_kept = host_kept && shared[i] == 7;
    report("  the CPU's pages are unchanged by the kernel's writes", host_kept);
    unsigned first[4] = {};
    const bool copied = runtime_step("  cudaMemcpy device-to-host from the address",
                                     cudaMemcpy(first, shared, sizeof first, cudaMemcpyDeviceToHost));
    report("  ... copies the device memory", copied && first[0] == 5000 && first[3] == 5003,
           std::to_string(first[0]) + ", " + std::to_string(first[3]));
    ::munmap(host, bytes);
  }
  driver_step("  cuMemUnmap", cuMemUnmap(va, bytes));
  driver_step("  cuMemRelease", cuMemRelease(handle));
  driver_step("  cuMemAddressFree", cuMemAddressFree(va, bytes));
  const int device_first_failures = failures;

  std::printf("host first\n");
  void* pages = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CUdeviceptr hinted = 0;
  const CUresult r = cuMemAddressReserve(&hinted, bytes, 0, reinterpret_cast<CUdeviceptr>(pages), 0);
  std::printf("  host pages at %p; cuMemAddressReserve with that hint: %s, address %#lx (%s)\n", pages,
              r == CUDA_SUCCESS ? "ok" : driver_error(r).c_str(), static_cast<unsigned long>(hinted),
              hinted == reinterpret_cast<CUdeviceptr>(pages) ? "the same" : "another");
  if (r == CUDA_SUCCESS) cuMemAddressFree(hinted, bytes);
  ::munmap(pages, bytes);
  cudaFree(unequal);
  std::printf("device first: %s\n", device_first_failures == 0 ? "works" : "does not work");
  return device_first_failures == 0 ? 0 : 1;
}
