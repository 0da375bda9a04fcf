// Checked CUDA runtime calls: XF_CUDA_TRY throws a cuda_error carrying the call, file:line
// and CUDA's name and message, and clears the last error; cuda_ok() is the non-throwing check for
// destructors and shutdown paths. Plain C++ (the CUDA runtime API is a C API): no nvcc needed.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace xf {

/// A CUDA runtime call failed. `sticky()` tells a corrupted context (illegal address, launch failure):
/// after one, every later call fails too and the process must end.
class cuda_error : public std::runtime_error {
 public:
  cuda_error(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  cudaError_t code() const noexcept { return code_; }
  bool sticky() const noexcept;

 private:
  cudaError_t code_;
};

/// "cudaErrorIllegalAddress: an illegal memory access was encountered"
std::string describe_cuda_error(cudaError_t code);

/// Throws cuda_error for anything but cudaSuccess (clearing CUDA's last error first).
void cuda_check(cudaError_t code, const char* call, const char* file, int line);

/// For noexcept paths: true on success; on failure clears the last error and returns false.
bool cuda_ok(cudaError_t code) noexcept;

}  // namespace xf

#define XF_CUDA_TRY(call) ::xf::cuda_check((call), #call, __FILE__, __LINE__)
