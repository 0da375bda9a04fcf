// xeflow-run as a function, for a launcher that adds its own operators to the built-in ones. Its GPU
// operators are one list (registered by it, compiled into its kernel by it):
//
//   using my_gpu_operators = xf::gpu_operator_list<xf::builtin_gpu_operators, my_op>;
//   int main(int argc, char** argv) {
//     return xf::run_launcher<my_gpu_operators>(argc, argv, [](xf::operator_registry& r) {
//       r.add<my_cpu_sink>("my_cpu_sink");  // CPU operators, one line each
//     });
//   }
//
// and its kernel file (<xeflow/kernel.hpp>) says XF_KERNEL(my_gpu_operators).
#pragma once

#include "framework/launch/run_launcher.hpp"
#include "operators/builtin_gpu.hpp"
