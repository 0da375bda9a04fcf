// The device probe in a build without CUDA: no device can be used, and no CUDA version is known.
#include "framework/plan/device_probe.hpp"

namespace xf {

device_status probe_device(std::uint32_t ordinal) noexcept {
  device_status status;
  status.ordinal = ordinal;
  status.reason = "built without CUDA";
  return status;
}

bool select_device(std::uint32_t) noexcept {
  return false;
}

cuda_versions probe_cuda_versions() noexcept {
  return {};
}

std::uint32_t device_count() noexcept {
  return 0;
}

}  // namespace xf
