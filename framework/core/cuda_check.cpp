// Checked CUDA runtime calls.
#include "framework/core/cuda_check.hpp"

namespace xf {

bool cuda_error::sticky() const noexcept {
  switch (code_) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

std::string describe_cuda_error(cudaError_t code) {
  return std::string(cudaGetErrorName(code)) + ": " + cudaGetErrorString(code);
}

void cuda_check(cudaError_t code, const char* call, const char* file, int line) {
  if (code == cudaSuccess) return;
  cudaGetLastError();  // a non-sticky error must not poison the next unrelated check
  throw cuda_error(code, std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                             describe_cuda_error(code));
}

bool cuda_ok(cudaError_t code) noexcept {
  if (code == cudaSuccess) return true;
  cudaGetLastError();
  return false;
}

}  // namespace xf
