// Whether the MPI library can send and receive GPU device memory itself (CUDA-aware), as Open MPI says at
// compile time (MPIX_CUDA_AWARE_SUPPORT in <mpi-ext.h>) and at run time (MPIX_Query_cuda_support()).
#pragma once

#include <optional>
#include <string>

namespace xf::mpi {

struct cuda_awareness {
  /// The library moves device memory: the run-time query says so (the compile-time macro describes the
  /// headers built against, the query the library loaded).
  bool aware = false;
  /// MPIX_CUDA_AWARE_SUPPORT where <mpi-ext.h> defines it; none for a library without Open MPI's extension.
  std::optional<int> compiled;
  /// MPIX_Query_cuda_support() where the extension declares it.
  std::optional<int> queried;
  /// One line for logs and the benchmark's JSON: what was found and so what `aware` is.
  std::string reason;
};

/// Asks the library. Needs MPI initialised; cheap, but the messenger asks once and keeps the answer.
cuda_awareness detect_cuda_awareness();

}  // namespace xf::mpi
