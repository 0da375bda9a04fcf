// probe_device in a build without CUDA: no device can be used.
#include "framework/plan/device_probe.hpp"

namespace xf {

device_status probe_device() noexcept {
  device_status status;
  status.reason = "built without CUDA";
  return status;
}

}  // namespace xf
