// xeflow-run with the faulty test operators added: what a user's own launcher looks like, used by the
// end-to-end fault tests. Its GPU operators are the tests' list (tests/support/test_kernel.hpp).
#include "framework/launch/run_launcher.hpp"
#include "tests/e2e/faulty_ops.hpp"
#include "tests/support/test_kernel.hpp"

int main(int argc, char** argv) {
  return xf::run_launcher<xf::test::test_gpu_operators>(
      argc, argv, [](xf::operator_registry& registry) { registry.add<xf::test::throw_at_op>("throw_at"); });
}
