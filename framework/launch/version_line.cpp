// The version line, from the generated build information, the device probe and the process group.
#include "framework/launch/version_line.hpp"

#include "framework/launch/process_group.hpp"
#include "framework/plan/device_probe.hpp"
#include "framework/runtime/build_info.hpp"

namespace xf {

std::string version_line() {
  const build_info build = this_build();
  const std::string cuda = probe_cuda_versions().runtime;
  return "xeflow-run " + std::string(build.version) + " (commit " + std::string(build.commit) + ", " +
         std::string(build.build_type) + " build, " + (cuda.empty() ? "without CUDA" : "CUDA " + cuda) +
         ", MPI " + (built_with_mpi() ? "yes" : "no") + ")";
}

}  // namespace xf
