// The device executor in a build without CUDA: the plan never picks it (no kernel program), and asking
// for it says why.
#include "framework/runtime/kernel_executor.hpp"

namespace xf {

std::unique_ptr<kernel_executor> make_device_kernel_executor(run_context&, const run_options&) {
  throw run_error(fault_site{}, "the device executor needs a build with CUDA");
}

}  // namespace xf
