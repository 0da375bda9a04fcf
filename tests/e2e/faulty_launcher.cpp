// xeflow-run with the faulty test operators added: what a user's own launcher looks like, used by the
// end-to-end fault tests.
#include "framework/runtime/launcher.hpp"
#include "tests/e2e/faulty_ops.hpp"

namespace xf::test {
const kernel_program* faulty_kernel();  // tests/support/test_kernel.cu
}

int main(int argc, char** argv) {
  return xf::run_launcher(
      argc, argv,
      [](xf::operator_registry& registry) {
        registry.add<xf::test::throw_at_op>("throw_at");
        registry.add<xf::test::corrupt_at_op>("corrupt_at");
        registry.add<xf::test::fail_at_op>("fail_at");
        registry.add<xf::test::hang_at_op>("hang_at");
        registry.add<xf::test::wild_write_at_op>("wild_write_at");
      },
      xf::test::faulty_kernel());
}
