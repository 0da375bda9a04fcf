// Open MPI's CUDA extension: a compile-time macro for the headers, a query for the library at run time.
#include "framework/mpi/cuda_awareness.hpp"

#include <mpi.h>
#if XF_HAVE_MPI_EXT
#include <mpi-ext.h>
#endif

#include <string>

namespace xf::mpi {

cuda_awareness detect_cuda_awareness() {
  cuda_awareness a;
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  a.compiled = MPIX_CUDA_AWARE_SUPPORT;
  // Declared whatever the macro's value: a library built without CUDA answers 0.
  a.queried = MPIX_Query_cuda_support();
  a.aware = *a.queried == 1;
  a.reason = std::string(a.aware ? "CUDA-aware" : "not CUDA-aware") +
             ": MPIX_Query_cuda_support() = " + std::to_string(*a.queried) +
             " (built against headers with MPIX_CUDA_AWARE_SUPPORT " + std::to_string(*a.compiled) + ")";
#else
  a.reason =
      "not CUDA-aware: the MPI library's headers define no MPIX_CUDA_AWARE_SUPPORT (no Open MPI CUDA "
      "extension in <mpi-ext.h>)";
#endif
  return a;
}

}  // namespace xf::mpi
