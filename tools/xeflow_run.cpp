// xeflow-run: the command-line runner for topologies built from the registered operators, with the
// built-in GPU operators' fused kernel.
#include "framework/runtime/launcher.hpp"
#include "operators/builtin_kernel.hpp"

int main(int argc, char** argv) {
  return xf::run_launcher(argc, argv, {}, xf::builtin_kernel());
}
