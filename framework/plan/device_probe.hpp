// Is there a GPU this process can use? Asked once at start-up to choose the executor (the probe itself is
// the device driver's: framework/gpu/device_probe.cpp, or device_probe_none.cpp in a build without CUDA).
#pragma once

#include <cstdint>
#include <string>

namespace xf {

struct device_status {
  bool usable = false;
  std::uint32_t ordinal = 0;  ///< the GPU probed (its CUDA ordinal)
  std::string name;           ///< "NVIDIA H100 80GB HBM3": set once its properties could be read
  std::string description;    ///< "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.1 GiB)" when usable
  /// Why not, when not usable ("built without CUDA", "no CUDA-capable device", "no GPU 2: this machine
  /// has 2 GPUs (0-1)").
  std::string reason;
  std::uint32_t sm_count = 0;
  /// Contexts on it are shared through MPS: kernels of several processes run on it at once (without
  /// MPS they take turns).
  bool mps = false;
};

/// Probes GPU `ordinal` through the CUDA runtime (when built with CUDA): an ordinal among the devices
/// CUDA_VISIBLE_DEVICES leaves visible, as cudaSetDevice takes it. The calling thread's current device
/// stays as it was. Never throws.
device_status probe_device(std::uint32_t ordinal = 0) noexcept;

/// Makes GPU `ordinal` the calling thread's current device (what the launcher's kernel is asked about
/// before planning: its occupancy there). False without CUDA or when CUDA refuses. Never throws.
bool select_device(std::uint32_t ordinal) noexcept;

/// The CUDA versions this process runs with, as "major.minor" ("12.4"): the runtime library's
/// (cudaRuntimeGetVersion) and the driver's (cudaDriverGetVersion). Either is empty when there is none:
/// both in a build without CUDA (which makes no CUDA call), the driver's where no driver is installed or
/// it cannot be asked. Asks no GPU (none need be present). Never throws.
struct cuda_versions {
  std::string runtime;
  std::string driver;
};
cuda_versions probe_cuda_versions() noexcept;

/// The GPUs this process sees (cudaGetDeviceCount): 0 in a build without CUDA, without a driver, or on
/// any error. Never throws.
std::uint32_t device_count() noexcept;

}  // namespace xf
