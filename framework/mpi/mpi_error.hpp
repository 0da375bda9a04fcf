// Checked MPI calls: an MPI error becomes an exception naming the call, where it was (file:line) and who
// took part (rank, peer, tag), with MPI's error class and text. The communicators of this layer return
// errors (MPI_ERRORS_RETURN) instead of aborting the job, so that a caller can catch and report them.
#pragma once

#include <mpi.h>

#include <stdexcept>
#include <string>

namespace xf::mpi {

/// Who took part in a call: the calling rank, the other side and the tag (-1 where one does not apply).
struct call_site {
  int rank = -1;
  int peer = -1;
  int tag = -1;
  /// "rank 0, peer 1, tag 7", leaving out what is -1.
  std::string str() const;
};

/// An MPI call failed, or a message broke the receive's rules (code MPI_ERR_TRUNCATE for a message longer
/// than the receive's capacity). `error_class()` is MPI's error class (MPI_Error_class of the code).
class mpi_error : public std::runtime_error {
 public:
  mpi_error(int error_class, const std::string& what) : std::runtime_error(what), class_(error_class) {}
  int error_class() const noexcept { return class_; }

 private:
  int class_;
};

/// "MPI_ERR_TRUNCATE: message truncated": the class's name where it is one of the common ones, and MPI's
/// own text of the code.
std::string describe_mpi_error(int code);

/// Throws mpi_error for anything but MPI_SUCCESS: "MPI_Isend(...) failed at file:line (rank 0, peer 1, tag
/// 7): MPI_ERR_RANK: invalid rank".
void mpi_check(int code, const char* call, const call_site& site, const char* file, int line);

}  // namespace xf::mpi

#define XF_MPI_TRY(call, site) ::xf::mpi::mpi_check((call), #call, (site), __FILE__, __LINE__)
