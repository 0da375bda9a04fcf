// The xeflow-run command line as a function, so a user's own launcher can add its operators to the
// built-in ones and get the very same tool. Its GPU operators are one list, which registers them and names
// its kernel file:
//
//   // my_operators.hpp
//   using my_gpu_operators = xf::gpu_operator_list<xf::builtin_gpu_operators, my_op>;
//   // my_kernel.cu (nvcc; or c++ -x c++ for a build without the GPU kernel)
//   XF_KERNEL(my_gpu_operators)
//   // main.cpp (run_launcher<List> is in framework/launch/run_launcher.hpp)
//   int main(int argc, char** argv) {
//     return xf::run_launcher<my_gpu_operators>(argc, argv, [](xf::operator_registry& r) {
//       r.add<my_cpu_sink>("my_cpu_sink");
//     });
//   }
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <typeindex>
#include <vector>

#include "framework/kernel/kernel_program.hpp"
#include "framework/model/registry.hpp"
#include "framework/plan/plan.hpp"

namespace xf {

/// Exit codes of xeflow-run.
enum exit_code : int {
  exit_ok = 0,
  exit_run_failed = 1,     ///< an operator failed, a frame was lost/corrupt, or an I/O error
  exit_config_error = 2,   ///< the topology or the command line is wrong (file:line:column messages)
  exit_interrupted = 130,  ///< SIGINT: the streams were drained and the stats printed
};

struct topology_spec;

/// Call once the topology is loaded and before the process's first CUDA call: when the process runs a
/// kernel on a GPU known without asking CUDA (its GPU operators' `device:`, else GPU 0 for the first rank
/// of a node), shows the CUDA driver GPUs 0 to that one only (limit_visible_gpus: the driver sets up every
/// GPU it sees, which was most of a one-shot run's start-up on a machine of four) and says so at debug
/// level. CUDA_VISIBLE_DEVICES set by the user stands. Shared by xeflow-run and xeflow-tune.
void limit_visible_gpus_for(const topology_spec& spec, bool force_host,
                            const std::optional<rank_part>& part = std::nullopt, std::uint32_t node_rank = 0);

/// Plans a loaded, validated spec for this machine: probes the GPU (unless `force_host` or the spec's
/// executor is host) and logs where the GPU operators run. Throws config_error. Shared by xeflow-run and
/// xeflow-tune. A ranked run plans its `part`; its GPU is its GPU operators' `device:`, or `node_rank`
/// (its position among its node's ranks) modulo the node's GPUs. `gpu_sharers`: the ranks of this node
/// whose kernels run on that GPU (under MPS they run at once, and each plans its share of the blocks).
plan plan_for_this_machine(const topology_spec& spec, const operator_registry& registry, bool force_host,
                           const kernel_program* kernel, const std::optional<rank_part>& part = std::nullopt,
                           std::uint32_t node_rank = 0, std::uint32_t gpu_sharers = 1);

/// A launcher's operators beyond the built-in CPU ones: what run_launcher<GpuOperators> passes on.
struct launcher_operators {
  std::function<void(operator_registry&)> add;  ///< registers the GPU list and the launcher's CPU operators
  std::vector<std::type_index> kernel_types;    ///< the GPU list's operator types, in kernel order
  const kernel_program* kernel = nullptr;       ///< the list's fused kernel; null without CUDA
};

/// Parses the command line, loads and validates the topology, runs it and prints the stats, with the
/// built-in CPU operators and `operators`. A GPU operator registered outside the kernel's list is refused
/// (exit_config_error) before anything runs. Started by mpirun (or srun) as several processes, each is
/// one rank: every rank loads and plans the whole topology and runs the operators placed on it (`rank:`),
/// topics between ranks carried by bridges; rank 0 prints the plan, the stats and the errors of every
/// rank, and every rank exits with the same code.
int run_launcher(int argc, char** argv, const launcher_operators& operators);

}  // namespace xf
