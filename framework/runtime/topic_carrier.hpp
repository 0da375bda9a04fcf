// What carries a ranked run's bridged topics to and from the other ranks. The runtime knows only this
// interface; the launcher's ranked run implements it over MPI (framework/launch). run_topology attaches
// the carrier once the run's topics exist, before any operator starts, and detaches it after its own
// workers have stopped: between the two the carrier drives every bridge of the plan (planned_topic::
// bridge_from, bridge_to) on threads of its own, and fails the run through its control on a fault.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "framework/runtime/run_control.hpp"
#include "topics/topic_view.hpp"

namespace xf {

/// What one bridge moved, as its rank saw it.
struct bridge_stats {
  std::string topic;
  std::uint32_t peer = 0;  ///< the rank at the other end
  bool sends = false;      ///< this rank's end sends (the topic is published here)
  std::uint64_t frames = 0, bytes = 0;
  double seconds = 0;                ///< from the first frame to the end of the stream
  std::uint64_t credit_wait_ns = 0;  ///< sending end: frames ready, but the reader had no slot free
  std::uint64_t credit_messages = 0;
  /// Steady clock (ns, as run_context's now_ns) of the first frame sent or received; 0: none.
  std::uint64_t first_ns = 0;
};

class topic_carrier {
 public:
  virtual ~topic_carrier() = default;
  /// The run's topics exist (views indexed like the plan's topics): start carrying.
  virtual void attach(const std::vector<topic_view>& views, run_control& control) = 0;
  /// Every worker of the run has stopped. Returns once every bridge is done — its stream carried to the
  /// end, or abandoned because the run aborted — and the carrier itself touches the topics no more. True
  /// when a bridge was abandoned with transfers in flight: the transport may still read or write the
  /// topics' frames, which must then outlive the run (the process ends soon after a failed run).
  virtual bool detach() = 0;
  /// What each bridge moved (after detach).
  virtual std::vector<bridge_stats> stats() const = 0;
  /// What each bridge moved so far, from any thread while the run goes (live metrics): topic, peer,
  /// direction, frames and bytes; empty where the carrier keeps no live counters.
  virtual std::vector<bridge_stats> live_stats() const { return {}; }
};

}  // namespace xf
