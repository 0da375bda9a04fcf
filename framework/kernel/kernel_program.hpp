// The compiled virtualised kernel of one executable, as host code sees it. CUDA 13 keeps kernel templates
// local to their translation unit, so the persistent kernel and the device code of its operators are
// compiled together in one `.cu` per executable (fused_kernel.cuh): the built-in GPU operators plus a
// launcher's own, a fixed list with static dispatch. Host code holds it through this interface.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <typeindex>

#include "framework/kernel/kernel_catalog.hpp"

// The CUDA runtime's stream handle (cudaStream_t is this type), declared here so that host code holding a
// kernel_program compiles without the CUDA headers.
struct CUstream_st;

namespace xf {

using stream_handle = CUstream_st*;

class kernel_program {
 public:
  virtual ~kernel_program() = default;
  /// The position of a GPU operator type in this kernel's list, or nullopt when it was not compiled in.
  virtual std::optional<std::uint32_t> index_of(std::type_index op) const = 0;
  /// Blocks of `threads` threads that fit on one SM at once (the occupancy API, for this kernel).
  virtual int blocks_per_sm(int threads) const = 0;
  /// Launches the kernel with `blocks` × `threads` as a cooperative launch, so either every block is
  /// resident at once or the launch fails (blocks that feed each other must all run). Asynchronous.
  virtual void launch(const kernel_args& args, std::uint32_t blocks, std::uint32_t threads,
                      stream_handle stream) const = 0;

  /// One GPU operator's compute over one frame in device memory.
  struct frame_launch {
    std::uint32_t type;       ///< index_of the operator's type
    element_type element;     ///< of the frame
    const std::byte* params;  ///< the params struct, device memory, 16-byte aligned
    const std::byte* in;
    std::byte* out;       ///< null for a GPU sink
    std::uint64_t bytes;  ///< of the frame
    std::uint64_t offset;
    std::byte* state;        ///< a GPU sink's accumulator (device memory), else null
    std::uint64_t* failure;  ///< device memory: frame_task::fail's word
  };
  /// Runs `f` as an ordinary launch of `blocks` × `threads`, the grid's threads being the virtual threads:
  /// how the GPU baselines run an operator, so they and the virtualised kernel execute the same code.
  /// Asynchronous; throws cuda_error when the launch fails.
  virtual void launch_frame(const frame_launch& f, std::uint32_t blocks, std::uint32_t threads,
                            stream_handle stream) const = 0;
  /// Blocks of `threads` of launch_frame's kernel that fit on one SM at once (its occupancy).
  virtual int frame_blocks_per_sm(int threads) const = 0;
};

/// The fused kernel of the GPU operators in `GpuOperators` (a gpu_operator_list), or null in a build
/// without CUDA. Defined by the one kernel file that names the list, with XF_KERNEL(GpuOperators)
/// (framework/gpu/fused_kernel.cuh); a program that uses a list without its kernel file does not link.
template <class GpuOperators>
const kernel_program* compiled_kernel();

}  // namespace xf
