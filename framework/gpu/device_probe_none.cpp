// probe_device in a build without CUDA: no device can be used.
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

std::uint32_t device_count() noexcept {
  return 0;
}

}  // namespace xf
