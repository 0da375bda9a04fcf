// A build without MPI: a process an MPI launcher started runs alone when it is the only one, and refuses
// to run as one of several (each would run the whole topology on its own).
#include <memory>
#include <string>

#include "framework/core/errors.hpp"
#include "framework/launch/process_group.hpp"

namespace xf {

bool built_with_mpi() noexcept {
  return false;
}

std::unique_ptr<process_group> join_mpi_job(int&, char**&, std::uint32_t processes) {
  if (processes <= 1) return nullptr;
  throw config_error(source_pos{},
                     "started by an MPI launcher as one of " + std::to_string(processes) +
                         " processes, but this program was built without MPI (install libopenmpi-dev and "
                         "rebuild): each process would run the whole topology alone");
}

}  // namespace xf
