// cuda_accelerator: shared objects on a CUDA GPU, one pointer on both sides. Each object's accelerator copy
// is device memory mapped with the CUDA virtual memory API at an address reserved for it (reserve, create,
// map, set access); the object space then maps the object's host pages over the same range (MAP_FIXED over
// the PROT_NONE placeholder the driver keeps there), so that kernels reach the device memory through the
// GPU's page tables and the CPU its pages through its own. xeflow-shared-address-probe checks exactly this
// on a machine (it held on the H100 machines: kernels saw the device memory, the CPU its pages, and
// cudaMemcpy on the address moved the device side).
//
// Transfers run on a stream of the accelerator's own, between the device address and the library's view of
// the host pages (pinned with cudaHostRegister where the driver allows it, so the copy engines move it
// directly). No driver call is async-signal-safe: faults hand their transfers to the object space's
// transfer agent.
//
// Note for kernels: under unified addressing a CUDA API call given a shared pointer means the device copy
// (cudaMemcpy from it reads the GPU's memory, not the host pages the CPU wrote before the next call()).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "framework/shared/accelerator.hpp"

namespace xf::shared {

class cuda_accelerator final : public accelerator {
 public:
  /// On CUDA device `device`, which becomes the constructing thread's current device (the transfer
  /// agent's thread makes it its own through bind_thread; allocate and wait_for_kernels switch to it for
  /// their call). Throws cuda_error where it cannot (no GPU, no virtual memory management).
  explicit cuda_accelerator(int device = 0);
  ~cuda_accelerator() override;
  cuda_accelerator(const cuda_accelerator&) = delete;
  cuda_accelerator& operator=(const cuda_accelerator&) = delete;

  void* allocate(std::size_t bytes) override;
  void release(void* accelerator_copy) noexcept override;
  void to_accelerator(void* accelerator_copy, const void* host, std::size_t bytes) override;
  void finish_to_accelerator() override;
  void to_host(void* host, const void* accelerator_copy, std::size_t bytes) override;
  bool transfers_signal_safe() const override { return false; }
  bool single_address() const override { return true; }
  void host_view_created(void* view, std::size_t bytes) override;
  void host_view_released(void* view, std::size_t bytes) noexcept override;
  void bind_thread() override;
  void wait_for_kernels() override;

  int device() const { return device_; }
  /// The device memory an object takes is a multiple of this (the driver's mapping granularity).
  std::size_t granularity() const { return granularity_; }
  /// Host views the driver would not pin: their transfers go through its staging buffers (slower).
  std::uint64_t unpinned_views() const;

 private:
  struct mapping {
    std::uint64_t handle;  ///< CUmemGenericAllocationHandle
    std::size_t bytes;     ///< reserved and mapped, a multiple of granularity_
  };

  int device_;
  std::size_t granularity_ = 0;
  cudaStream_t stream_ = nullptr;
  mutable std::mutex mutex_;
  std::map<std::uintptr_t, mapping> mappings_;
  std::map<std::uintptr_t, bool> pinned_;  ///< host view → registered with cudaHostRegister
  std::uint64_t unpinned_ = 0;
};

}  // namespace xf::shared
