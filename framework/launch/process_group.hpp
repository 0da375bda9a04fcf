// The processes that run one topology together: this process alone, or the ranks of an MPI job (started
// by mpirun, or Slurm's srun). Every rank loads and plans the whole topology and runs its own part; the
// launcher uses the group to agree on what happened (a problem on any rank stops every rank with the same
// exit code) and, while a run goes on, for the rank session that carries its bridged topics and spreads a
// failure or an interrupt to every rank.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "framework/runtime/executor.hpp"
#include "framework/runtime/topic_carrier.hpp"

namespace xf {

struct plan;
struct topology_spec;

/// A ranked run's live part beside run_topology: the carrier of its bridges (topic_carrier) and the
/// control plane that spreads a failure or an interrupt between the ranks, from before the run starts
/// until every rank's run has ended.
class rank_session : public topic_carrier {
 public:
  /// This rank's run_topology has returned: spreads what is left to tell (a failure, an interrupt),
  /// then waits until every rank's run has ended, still listening. Ends the job (MPI_Abort) when a failure
  /// is known and some rank has not stopped within failure_deadline_ms.
  virtual void finish() = 0;
  /// Whether this rank's failure came from another rank (it was told), not from its own operators.
  virtual bool failure_was_told() const = 0;
  /// This rank's sinks' totals so far (its run's progress callback): ranks other than 0 send the latest to
  /// rank 0 now and then.
  virtual void report_progress(const run_progress& own) = 0;
  /// Rank 0: `own` with the latest totals every other rank reported added (the whole run's progress).
  virtual run_progress merged_progress(const run_progress& own) const = 0;
};

/// After a failure on any rank, how long every rank has to stop before the job is ended.
inline constexpr int failure_deadline_ms = 2000;

class process_group {
 public:
  virtual ~process_group() = default;
  virtual std::uint32_t rank() const = 0;
  virtual std::uint32_t size() const = 0;
  /// This rank's position among the ranks of its node (GPUs are shared out by it).
  virtual std::uint32_t node_rank() const = 0;

  // Collectives: every rank calls them, in the same order.
  /// The lowest rank whose `ok` is false; nothing when every rank is ok.
  virtual std::optional<std::uint32_t> first_failing(bool ok) = 0;
  /// The largest of every rank's `value`.
  virtual int max_over_ranks(int value) = 0;
  /// Rank 0 gets every rank's `text`, in rank order; the others get nothing.
  virtual std::vector<std::string> gather(const std::string& text) = 0;
  /// Every rank of this node gets the `value` of every rank of this node.
  virtual std::vector<std::uint32_t> node_values(std::uint32_t value) = 0;

  /// A ranked run's session for the part `p` of `spec` (collective: it makes the bridges' channels).
  /// The session fails the run through `control` and reads its flags; both must outlive it.
  virtual std::unique_ptr<rank_session> start_session(const topology_spec& spec, const plan& p,
                                                      run_control& control) = 0;
  /// Ends every rank of the job now with `code` (MPI_Abort), after `why` went to stderr.
  [[noreturn]] virtual void end_job(int code, const std::string& why) = 0;
};

/// Joins the MPI job this process was started in (the MPI library initialised, and finalised when the
/// group goes), or, when no MPI launcher started it, a group of this process alone. Throws config_error
/// when an MPI launcher started it with several processes but it was built without MPI.
std::unique_ptr<process_group> join_process_group(int& argc, char**& argv);

/// Whether this program was built with an MPI library, so that it can run as one rank of several
/// (process_group_mpi.cpp; false from process_group_none.cpp).
bool built_with_mpi() noexcept;

/// Whether an MPI launcher (mpirun, mpiexec, srun with PMI) started this process, and with how many
/// processes: from the variables the launchers set. 0: none did.
std::uint32_t launcher_process_count();

}  // namespace xf
