// Is there a GPU this process can use? Asked once at start-up to choose the executor (the probe itself is
// the device driver's: framework/gpu/device_probe.cpp, or device_probe_none.cpp in a build without CUDA).
#pragma once

#include <cstdint>
#include <string>

namespace xf {

struct device_status {
  bool usable = false;
  std::string description;  ///< "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.1 GiB)" when usable
  std::string reason;       ///< why not, when not usable ("built without CUDA", "no CUDA-capable device")
  std::uint32_t sm_count = 0;
};

/// Probes device 0 through the CUDA runtime (when built with CUDA). Never throws.
device_status probe_device() noexcept;

}  // namespace xf
