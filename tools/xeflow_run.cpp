// xeflow-run: the command-line runner for topologies built from the registered operators, with the
// built-in GPU operators' fused kernel (operators/builtin_kernel.cu).
#include "framework/launch/run_launcher.hpp"
#include "operators/builtin_gpu.hpp"

int main(int argc, char** argv) {
  return xf::run_launcher<xf::builtin_gpu_operators>(argc, argv);
}
