// Replaying what a topic must hold: for each topic whose upstream chain is linear and replayable, a
// frame_reference that regenerates the source's frame at an offset and re-applies every operator on the
// way (GPU operators through their host compute). Verify sinks compare what arrives against it.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "framework/model/host_kernel_op.hpp"
#include "framework/model/operator.hpp"
#include "framework/plan/plan.hpp"

namespace xf {

/// The run-time objects of one operator, as the executor made them.
struct operator_instance {
  std::unique_ptr<cpu_operator> cpu;       ///< operators run on CPU threads
  std::unique_ptr<host_kernel_op> kernel;  ///< GPU operators run by kernel blocks (host executor)
};

/// The frame_reference of every topic whose chain is replayable. A source's reference is the source itself
/// when it implements frame_reference (it then replays itself, and may report a period), otherwise a
/// wrapper calling its produce(); a map's reference replays its upstream's and re-applies the map, and is
/// periodic when its upstream is (see map_reference::period for the assumption that takes).
class reference_chain {
 public:
  /// `instances` is indexed like plan.operators and must outlive this object. Sources must have been
  /// started (their produce is what replays them). A map with two implementations (its compute and a
  /// library's: operator_entry::make_cpu_version) is replayed by the one that did not run, so that a
  /// verify sink checks each against the other.
  reference_chain(const plan& p, const std::vector<operator_instance>& instances);
  ~reference_chain();
  reference_chain(const reference_chain&) = delete;
  reference_chain& operator=(const reference_chain&) = delete;

  /// What topic `topic_index` must hold, or null when its chain is not linear or not replayable.
  const frame_reference* for_topic(std::size_t topic_index) const { return by_topic_[topic_index]; }

 private:
  // The implementations made to replay a map with (declared before the references that point to them).
  std::vector<std::unique_ptr<cpu_map>> replay_maps_;
  std::vector<std::unique_ptr<host_kernel_op>> replay_kernels_;
  std::vector<std::unique_ptr<frame_reference>> owned_;
  std::vector<const frame_reference*> by_topic_;
};

/// A ranked run's replays: the chains of the whole topology, over instances of its own, so that a verify
/// sink on one rank replays a source and maps that run on others (the replayed chain does not care where
/// they ran). `whole` is the plan of the whole topology as one process (it must outlive this object); its
/// sources are started here for their replays, and stopped when this object goes.
class whole_topology_replay {
 public:
  whole_topology_replay(const plan& whole, const std::atomic<bool>* interrupted);
  ~whole_topology_replay();
  whole_topology_replay(const whole_topology_replay&) = delete;
  whole_topology_replay& operator=(const whole_topology_replay&) = delete;

  /// What the topic `t` (a spec's topic) must hold, or null when its chain is not replayable here.
  const frame_reference* for_topic(const topic_spec* t) const;

 private:
  const plan& whole_;
  std::vector<operator_instance> instances_;
  std::vector<bool> started_;
  std::unique_ptr<reference_chain> chain_;
};

}  // namespace xf
