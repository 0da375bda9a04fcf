// xeflow-custom: xeflow-run plus this folder's operators — the path for a user's own operators.
// Their launcher registers them (one line each) next to the built-ins and passes its fused GPU kernel
// (custom_kernel.cu: one line naming its GPU operators); nothing in framework/, topics/ or operators/
// changes. golden_diff is a file reader: in the kernel it reads through the file cache.
#include <xeflow/launcher.hpp>

#include "clamp_op.hpp"
#include "custom_kernel.hpp"
#include "golden_diff_op.hpp"
#include "xor_mask_op.hpp"

int main(int argc, char** argv) {
  return xf::run_launcher(
      argc, argv,
      [](xf::operator_registry& registry) {
        registry.add<example::clamp_op>("clamp");
        registry.add<example::xor_mask_op>("xor_mask");
        registry.add<example::golden_diff_op>("golden_diff");
      },
      example::custom_kernel());
}
