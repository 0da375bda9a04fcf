// The main of an MPI benchmark program: MPI started and finished around it, errors returned as codes, and
// an exception on one rank ending the whole job (the other rank may be waiting for a message that will not
// come) with the program's name and the reason on stderr.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <exception>

namespace xf::mpi::bench {

/// Runs `run(argc, argv)` between MPI_Init and MPI_Finalize and returns its exit code.
template <class Run>
int run_mpi_program(int argc, char** argv, const char* program, Run run) {
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    std::fprintf(stderr, "%s: MPI_Init failed\n", program);
    return 1;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int code = 1;
  try {
    code = run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return code;
}

}  // namespace xf::mpi::bench
