// The MPI test's main: MPI_Init, then doctest on every rank, the ranks running the same cases in the same
// order (each case's sends on one rank meet their receives on the other). Only rank 0 reports: the other
// ranks' output is kept, and printed (without doctest's summary line, which CI counts once per run) only
// where they failed. Every rank's failures fail the run.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <mpi.h>

#include <iostream>
#include <sstream>
#include <string>

int main(int argc, char** argv) {
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    std::cerr << "mpi_test: MPI_Init failed\n";
    return 1;
  }
  // The cases check error codes themselves: an error returns instead of aborting the job.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  doctest::Context context(argc, argv);
  // mpirun hands the ranks a terminal even under meson test, and doctest's colours would split the summary
  // line that CI counts.
  context.setOption("no-colors", true);
  std::ostringstream quiet;
  if (rank != 0) context.setCout(&quiet);
  const int result = context.run();
  int failed = result != 0 ? 1 : 0, any_failed = failed;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank != 0 && failed) {
    // One write, so that mpirun does not interleave it with rank 0's output line by line.
    std::istringstream lines(quiet.str());
    std::string line, report;
    while (std::getline(lines, line))
      if (line.find("[doctest] test cases:") == std::string::npos)
        report += "[rank " + std::to_string(rank) + "] " + line + '\n';
    std::cerr << report << std::flush;
  }
  if (rank == 0 && any_failed && !failed)
    std::cerr << "mpi_test: another rank failed (its report is above)\n";
  const bool exit_only = context.shouldExit();
  MPI_Finalize();
  return exit_only ? result : any_failed;
}
