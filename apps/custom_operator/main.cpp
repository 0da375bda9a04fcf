// xeflow-custom: xeflow-run plus this folder's operators — the path for a user's own operators.
// The GPU operators are one list (custom_kernel.hpp) that registers them and builds the kernel
// (custom_kernel.cu); the CPU operators are registered one line each. Nothing in framework/, topics/ or
// operators/ changes. golden_diff is a file reader: in the kernel it reads through the file cache.
#include <xeflow/launcher.hpp>

#include "byte_sum_op.hpp"
#include "custom_kernel.hpp"
#include "xor_mask_op.hpp"

int main(int argc, char** argv) {
  return xf::run_launcher<example::custom_gpu_operators>(argc, argv, [](xf::operator_registry& registry) {
    registry.add<example::xor_mask_op>("xor_mask");
    registry.add<example::byte_sum_op>("byte_sum");
  });
}
