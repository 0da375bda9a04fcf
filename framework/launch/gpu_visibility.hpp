// The GPUs the CUDA driver sets up for a process. On its first CUDA call the driver initialises every GPU
// it can see; on a machine of several GPUs that is most of a one-shot run's start-up. A process whose
// kernel runs on GPU k needs GPUs 0 to k visible (ordinals keep their meaning), not the ones above.
// A route that maps another GPU's memory into this process (CUDA IPC, peer copies) needs that GPU visible
// too, and must widen the list.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace xf {

/// "0,1,...,k": the CUDA_VISIBLE_DEVICES value that shows the driver GPUs 0 to `ordinal` only, in its own
/// order, so that GPU `ordinal` keeps its ordinal. A list naming more GPUs than the machine has shows the
/// ones it has (CUDA stops at the first index that does not exist).
std::string visible_gpus_through(std::uint32_t ordinal);

/// Before the process's first CUDA call: sets CUDA_VISIBLE_DEVICES to visible_gpus_through(ordinal) unless
/// the environment already has it (the user's choice stands, an empty one included). Returns the value it
/// set, or nothing.
std::optional<std::string> limit_visible_gpus(std::uint32_t ordinal);

}  // namespace xf
