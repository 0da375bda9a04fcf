// xeflow-run with the faulty test operators added: what a user's own launcher looks like, used by the
// end-to-end fault tests.
#include "tests/e2e/faulty_ops.hpp"
#include "tools/launcher.hpp"

int main(int argc, char** argv) {
  return xf::run_launcher(argc, argv, [](xf::operator_registry& registry) {
    registry.add<xf::test::throw_at_op>("throw_at");
    registry.add<xf::test::corrupt_at_op>("corrupt_at");
  });
}
