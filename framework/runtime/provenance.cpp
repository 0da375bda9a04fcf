// Collecting a run's provenance: the generated build information, the device probe, the host's name.
#include "framework/runtime/provenance.hpp"

#include <unistd.h>

#include <climits>

#include "framework/plan/device_probe.hpp"
#include "framework/runtime/build_info.hpp"

namespace xf {
namespace {

std::optional<std::string> unless_empty(std::string text) {
  if (text.empty()) return std::nullopt;
  return text;
}

std::string host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

}  // namespace

run_provenance collect_provenance(std::optional<std::uint32_t> gpu_ordinal) {
  const build_info build = this_build();
  run_provenance p;
  p.version = std::string(build.version);
  p.commit = std::string(build.commit);
  p.build_type = std::string(build.build_type);
  cuda_versions cuda = probe_cuda_versions();
  p.cuda_runtime = unless_empty(std::move(cuda.runtime));
  p.cuda_driver = unless_empty(std::move(cuda.driver));
  if (gpu_ordinal) p.gpu = unless_empty(probe_device(*gpu_ordinal).name);
  p.host = host_name();
  return p;
}

}  // namespace xf
