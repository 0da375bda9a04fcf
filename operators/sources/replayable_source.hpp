// A source whose frame o is a pure function of o, read from a dataset: produce() and a verify sink's
// replay (frame_reference::expected) fill the frame the same way, so the source is its own reference and
// replays cost no second copy of its logic. Sources that count what they publish do it in produced(),
// which replays never call.
#pragma once

#include <cstdint>

#include "framework/model/operator.hpp"

namespace xf {

class replayable_source : public cpu_source, public frame_reference {
 public:
  bool produce(std::uint64_t offset, frame_out& out) final {
    if (!fill(offset, out)) return false;
    produced(offset, out);
    return true;
  }
  bool expected(std::uint64_t offset, frame_out& out) const final { return fill(offset, out); }

 protected:
  /// Writes frame `offset` into `out` (setting out.bytes) and returns true, or returns false past the end.
  /// Thread-safe.
  virtual bool fill(std::uint64_t offset, frame_out& out) const = 0;
  /// After produce() filled frame `offset` (not after replays): the source's own counting.
  virtual void produced(std::uint64_t /*offset*/, const frame_out& /*out*/) {}
};

}  // namespace xf
