// The group of one process, and how a launcher's start is recognised. The MPI group is in
// process_group_mpi.cpp (process_group_none.cpp in a build without MPI).
#include "framework/launch/process_group.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "framework/core/errors.hpp"

namespace xf {

/// The MPI job's group (process_group_mpi.cpp), or, in a build without MPI, a config_error for more than
/// one process (process_group_none.cpp).
std::unique_ptr<process_group> join_mpi_job(int& argc, char**& argv, std::uint32_t processes);

namespace {

class single_process final : public process_group {
 public:
  std::uint32_t rank() const override { return 0; }
  std::uint32_t size() const override { return 1; }
  std::uint32_t node_rank() const override { return 0; }
  std::optional<std::uint32_t> first_failing(bool ok) override {
    return ok ? std::nullopt : std::optional<std::uint32_t>{0};
  }
  int max_over_ranks(int value) override { return value; }
  std::vector<std::string> gather(const std::string& text) override { return {text}; }
  std::vector<std::uint32_t> node_values(std::uint32_t value) override { return {value}; }
  std::unique_ptr<rank_session> start_session(const topology_spec&, const plan&, run_control&) override {
    return nullptr;  // one process plans every operator: no bridges
  }
  [[noreturn]] void end_job(int code, const std::string& why) override {
    std::fprintf(stderr, "%s\n", why.c_str());
    std::fflush(nullptr);
    std::_Exit(code);
  }
};

}  // namespace

std::uint32_t launcher_process_count() {
  // Open MPI's mpirun, MPICH's Hydra (and Intel MPI), and a Slurm job step's tasks.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"})
    if (const char* value = std::getenv(name); value != nullptr && *value != '\0') {
      char* end = nullptr;
      const unsigned long n = std::strtoul(value, &end, 10);
      if (end != value && *end == '\0' && n > 0) return static_cast<std::uint32_t>(n);
    }
  return 0;
}

std::unique_ptr<process_group> join_process_group(int& argc, char**& argv) {
  const std::uint32_t processes = launcher_process_count();
  if (processes == 0) return std::make_unique<single_process>();
  std::unique_ptr<process_group> job = join_mpi_job(argc, argv, processes);
  if (job) return job;
  return std::make_unique<single_process>();
}

}  // namespace xf
