// Where a run's numbers come from: the build, the CUDA runtime and driver, the GPU and the host. The stats
// carry it (format_stats_json's "provenance") so that a result can be traced to what produced it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace xf {

struct run_provenance {
  std::string version;     ///< the project's version
  std::string commit;      ///< build_info::commit: the short hash, "-dirty", or "unknown"
  std::string build_type;  ///< meson's buildtype
  /// CUDA's versions as "major.minor": none in a build without CUDA; the driver's also none where no
  /// driver is installed.
  std::optional<std::string> cuda_runtime, cuda_driver;
  std::optional<std::string> gpu;  ///< the name of the GPU the run's kernel ran on; none on the host executor
  std::string host;                ///< the host's name (gethostname)
};

/// This process's provenance, with the name of GPU `gpu_ordinal` when a run used one (device_status::name;
/// none when it cannot be read). Only the device probe asks CUDA anything (nothing in a build without
/// CUDA, and no GPU is needed for the versions). Never throws for a missing GPU or driver.
run_provenance collect_provenance(std::optional<std::uint32_t> gpu_ordinal = std::nullopt);

}  // namespace xf
