// A recorded timeline (framework/core/trace.hpp) as a Chrome trace event file: the JSON Perfetto
// (ui.perfetto.dev) and chrome://tracing open. Each track is a thread of one process, named and sorted
// (GPU blocks first, then the copy engines, the file cache's I/O threads and the CPU operators' workers);
// spans are complete events ("X"), instants "i"; times in microseconds from the first event.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "framework/core/trace.hpp"

namespace xf {

/// Writes `recording` to `out` as a Chrome trace; `process` names the process (the topology, a rank) and
/// `metadata` goes under "otherData" (the build, the sampling, what was dropped). Events are written one
/// by one, so a large trace needs no second copy in memory.
void write_chrome_trace(std::ostream& out, const trace::recording& recording, int pid,
                        const std::string& process, const nlohmann::json& metadata);

}  // namespace xf
