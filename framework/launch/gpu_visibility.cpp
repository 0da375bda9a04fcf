#include "framework/launch/gpu_visibility.hpp"

#include <cstdlib>

namespace xf {

std::string visible_gpus_through(std::uint32_t ordinal) {
  std::string list = "0";
  for (std::uint32_t k = 1; k <= ordinal; ++k) list += "," + std::to_string(k);
  return list;
}

std::optional<std::string> limit_visible_gpus(std::uint32_t ordinal) {
  if (std::getenv("CUDA_VISIBLE_DEVICES") != nullptr) return std::nullopt;
  std::string list = visible_gpus_through(ordinal);
  // The variable is read once, when the driver initialises: it must be set before any CUDA call.
  if (setenv("CUDA_VISIBLE_DEVICES", list.c_str(), 0) != 0) return std::nullopt;
  return list;
}

}  // namespace xf
