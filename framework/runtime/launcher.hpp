// The xeflow-run command line as a function, so a user's own launcher can add its operators to the
// built-in ones and get the very same tool:
//
//   int main(int argc, char** argv) {
//     return xf::run_launcher(argc, argv, [](xf::operator_registry& r) { r.add<my_op>("my_op"); },
//                             my_kernel());  // my_kernel.cu: fused_kernel<builtin_gpu_operators, my_op>()
//   }
#pragma once

#include <functional>

#include "framework/model/registry.hpp"

namespace xf {

/// Exit codes of xeflow-run.
enum exit_code : int {
  exit_ok = 0,
  exit_run_failed = 1,     ///< an operator failed, a frame was lost/corrupt, or an I/O error
  exit_config_error = 2,   ///< the topology or the command line is wrong (file:line:column messages)
  exit_interrupted = 130,  ///< SIGINT: the streams were drained and the stats printed
};

class kernel_program;
struct plan;
struct topology_spec;
struct plan_options;

/// Plans a loaded, validated spec for this machine: probes the GPU (unless `force_host` or the spec's
/// executor is host) and logs where the GPU operators run. Throws config_error. Shared by xeflow-run and
/// xeflow-tune.
plan plan_for_this_machine(const topology_spec& spec, const operator_registry& registry, bool force_host,
                           const kernel_program* kernel);

/// Parses the command line, loads and validates the topology, runs it and prints the stats.
/// `add_operators` registers operators beyond the built-in ones (may be empty). `kernel` is the
/// launcher's fused GPU kernel (framework/gpu/fused_kernel.cuh): the built-in GPU operators plus the
/// launcher's own; null runs every GPU operator on the host executor.
int run_launcher(int argc, char** argv, const std::function<void(operator_registry&)>& add_operators = {},
                 const kernel_program* kernel = nullptr);

}  // namespace xf
