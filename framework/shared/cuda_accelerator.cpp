// The CUDA accelerator of cuda_accelerator.hpp. The virtual memory calls are the driver API's, reached
// through the runtime (cudaGetDriverEntryPointByVersion), so programs link the CUDA runtime alone as the
// rest of xeflow does.
#include "framework/shared/cuda_accelerator.hpp"

#include <cuda.h>

#include <stdexcept>
#include <string>

#include "framework/core/cuda_check.hpp"

namespace xf::shared {
namespace {

/// The driver's virtual memory calls, looked up once.
struct vmm_calls {
  CUresult (*get_granularity)(std::size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags);
  CUresult (*address_reserve)(CUdeviceptr*, std::size_t, std::size_t, CUdeviceptr, unsigned long long);
  CUresult (*address_free)(CUdeviceptr, std::size_t);
  CUresult (*create)(CUmemGenericAllocationHandle*, std::size_t, const CUmemAllocationProp*,
                     unsigned long long);
  CUresult (*release)(CUmemGenericAllocationHandle);
  CUresult (*map)(CUdeviceptr, std::size_t, std::size_t, CUmemGenericAllocationHandle, unsigned long long);
  CUresult (*unmap)(CUdeviceptr, std::size_t);
  CUresult (*set_access)(CUdeviceptr, std::size_t, const CUmemAccessDesc*, std::size_t);
  CUresult (*error_name)(CUresult, const char**);
  CUresult (*device_attribute)(int*, CUdevice_attribute, CUdevice);
  CUresult (*device_get)(CUdevice*, int);
};

template <class F>
void look_up(const char* symbol, F*& out) {
  void* f = nullptr;
  cudaDriverEntryPointQueryResult found{};
  XF_CUDA_TRY(cudaGetDriverEntryPointByVersion(symbol, &f, 12000, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || f == nullptr)
    throw std::runtime_error(std::string("shared objects: the CUDA driver has no ") + symbol);
  out = reinterpret_cast<F*>(f);
}

const vmm_calls& vmm() {
  static const vmm_calls calls = [] {
    vmm_calls c{};
    look_up("cuMemGetAllocationGranularity", c.get_granularity);
    look_up("cuMemAddressReserve", c.address_reserve);
    look_up("cuMemAddressFree", c.address_free);
    look_up("cuMemCreate", c.create);
    look_up("cuMemRelease", c.release);
    look_up("cuMemMap", c.map);
    look_up("cuMemUnmap", c.unmap);
    look_up("cuMemSetAccess", c.set_access);
    look_up("cuGetErrorName", c.error_name);
    look_up("cuDeviceGetAttribute", c.device_attribute);
    look_up("cuDeviceGet", c.device_get);
    return c;
  }();
  return calls;
}

void check(CUresult r, const char* call) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  vmm().error_name(r, &name);
  throw std::runtime_error(std::string("shared objects: ") + call + " failed: " + (name ? name : "?"));
}

/// Makes `device` the calling thread's current device for one call that takes none (cudaMemGetInfo,
/// cudaDeviceSynchronize), and gives the thread its own back after: the object space is called from the
/// application's threads, whose current device is theirs to choose.
class device_scope {
 public:
  explicit device_scope(int device) {
    XF_CUDA_TRY(cudaGetDevice(&previous_));
    if (previous_ == device) return;
    XF_CUDA_TRY(cudaSetDevice(device));
    switched_ = true;
  }
  ~device_scope() {
    if (switched_) cuda_ok(cudaSetDevice(previous_));
  }
  device_scope(const device_scope&) = delete;
  device_scope& operator=(const device_scope&) = delete;

 private:
  int previous_ = 0;
  bool switched_ = false;
};

CUmemAllocationProp device_memory(int device) {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = device;
  return p;
}

}  // namespace

cuda_accelerator::cuda_accelerator(int device) : device_(device) {
  XF_CUDA_TRY(cudaSetDevice(device_));
  XF_CUDA_TRY(cudaFree(nullptr));  // the device's primary context, which the driver calls below use
  CUdevice handle = 0;
  check(vmm().device_get(&handle, device_), "cuDeviceGet");
  int vmm_supported = 0;
  check(
      vmm().device_attribute(&vmm_supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, handle),
      "cuDeviceGetAttribute");
  if (!vmm_supported)
    throw std::runtime_error("shared objects: GPU " + std::to_string(device_) +
                             " has no virtual memory management (one address on both sides needs it)");
  const CUmemAllocationProp prop = device_memory(device_);
  check(vmm().get_granularity(&granularity_, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
        "cuMemGetAllocationGranularity");
  XF_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

cuda_accelerator::~cuda_accelerator() {
  cuda_ok(cudaStreamSynchronize(stream_));
  cuda_ok(cudaStreamDestroy(stream_));
}

void* cuda_accelerator::allocate(std::size_t bytes) {
  const std::size_t size = (bytes + granularity_ - 1) / granularity_ * granularity_;
  std::size_t free_bytes = 0, total_bytes = 0;
  {
    const device_scope on(device_);
    XF_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  }
  if (size > free_bytes)
    throw std::runtime_error("shared objects: an object of " + std::to_string(bytes) + " bytes needs " +
                             std::to_string(size) + " bytes of GPU memory, and " +
                             std::to_string(free_bytes) + " are free");
  const CUmemAllocationProp prop = device_memory(device_);
  CUdeviceptr address = 0;
  check(vmm().address_reserve(&address, size, granularity_, 0, 0), "cuMemAddressReserve");
  CUmemGenericAllocationHandle handle = 0;
  if (CUresult r = vmm().create(&handle, size, &prop, 0); r != CUDA_SUCCESS) {
    vmm().address_free(address, size);
    check(r, "cuMemCreate");
  }
  CUresult r = vmm().map(address, size, 0, handle, 0);
  if (r == CUDA_SUCCESS) {
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    r = vmm().set_access(address, size, &access, 1);
    if (r != CUDA_SUCCESS) vmm().unmap(address, size);
  }
  if (r != CUDA_SUCCESS) {
    vmm().release(handle);
    vmm().address_free(address, size);
    check(r, "cuMemMap / cuMemSetAccess");
  }
  std::lock_guard lock(mutex_);
  mappings_[address] = {handle, size};
  return reinterpret_cast<void*>(address);
}

void cuda_accelerator::release(void* accelerator_copy) noexcept {
  mapping m{};
  {
    std::lock_guard lock(mutex_);
    const auto it = mappings_.find(reinterpret_cast<std::uintptr_t>(accelerator_copy));
    if (it == mappings_.end()) return;
    m = it->second;
    mappings_.erase(it);
  }
  // No copy may still read or write it.
  cuda_ok(cudaStreamSynchronize(stream_));
  const auto address = reinterpret_cast<CUdeviceptr>(accelerator_copy);
  vmm().unmap(address, m.bytes);
  vmm().release(m.handle);
  vmm().address_free(address, m.bytes);
}

void cuda_accelerator::to_accelerator(void* accelerator_copy, const void* host, std::size_t bytes) {
  XF_CUDA_TRY(cudaMemcpyAsync(accelerator_copy, host, bytes, cudaMemcpyHostToDevice, stream_));
}

void cuda_accelerator::finish_to_accelerator() {
  XF_CUDA_TRY(cudaStreamSynchronize(stream_));
}

void cuda_accelerator::to_host(void* host, const void* accelerator_copy, std::size_t bytes) {
  XF_CUDA_TRY(cudaMemcpyAsync(host, accelerator_copy, bytes, cudaMemcpyDeviceToHost, stream_));
  XF_CUDA_TRY(cudaStreamSynchronize(stream_));
}

void cuda_accelerator::host_view_created(void* view, std::size_t bytes) {
  // A shared mapping of a memfd pins like any other host memory; where the driver refuses, transfers
  // still work, staged through its own pinned buffers.
  const bool pinned = cudaHostRegister(view, bytes, cudaHostRegisterDefault) == cudaSuccess;
  if (!pinned) (void)cudaGetLastError();
  std::lock_guard lock(mutex_);
  pinned_[reinterpret_cast<std::uintptr_t>(view)] = pinned;
  if (!pinned) ++unpinned_;
}

void cuda_accelerator::host_view_released(void* view, std::size_t) noexcept {
  bool pinned = false;
  {
    std::lock_guard lock(mutex_);
    const auto it = pinned_.find(reinterpret_cast<std::uintptr_t>(view));
    if (it == pinned_.end()) return;
    pinned = it->second;
    pinned_.erase(it);
  }
  cuda_ok(cudaStreamSynchronize(stream_));
  if (pinned) cuda_ok(cudaHostUnregister(view));
}

void cuda_accelerator::bind_thread() {
  XF_CUDA_TRY(cudaSetDevice(device_));
}

void cuda_accelerator::wait_for_kernels() {
  const device_scope on(device_);
  XF_CUDA_TRY(cudaDeviceSynchronize());
}

std::uint64_t cuda_accelerator::unpinned_views() const {
  std::lock_guard lock(mutex_);
  return unpinned_;
}

}  // namespace xf::shared
