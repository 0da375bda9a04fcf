// A ranked run's session over MPI (process_group.hpp's rank_session): one thread of its own, from before
// the run starts until every rank's run has ended, is this rank's only caller of MPI meanwhile (the
// library at MPI_THREAD_SERIALIZED: the launcher's thread calls it only before and after). It drives the
// run's bridges (framework/mpi/topic_link.hpp, a communicator each) and the control plane: a failure on
// this rank goes to every other rank, which fails its run with it; an interrupt here drains every rank.
// Control messages are synchronous sends that each rank's thread always has a receive posted for, and a
// rank's session ends only after a barrier every rank enters once its sends were matched: no message is
// left in flight when the sessions end.
#pragma once

#include <mpi.h>

#include <memory>

#include "framework/launch/process_group.hpp"

namespace xf {

/// Starts the session for this rank's part `p` of `spec` on the world communicator `world` (collective:
/// every rank makes the bridges' communicators in the same order). `control` is the run's.
std::unique_ptr<rank_session> start_mpi_rank_session(MPI_Comm world, const topology_spec& spec, const plan& p,
                                                     run_control& control);

}  // namespace xf
