// The fused kernel of a list of GPU operators, as host code holds it (kernel_program): the persistent
// kernel (persistent_kernel.cuh) and a frame kernel compiled for one operator list, with the occupancy
// and launch calls. One `.cu` per list defines it, at global scope, naming the list that also registers
// the operators (framework/model/gpu_operator_list.hpp):
//
//   XF_KERNEL(my_gpu_operators)  // compiled_kernel<my_gpu_operators>()
//
// Compiled by a plain C++ compiler (a build without CUDA) the kernel is null: GPU operators then run on the
// host executor. So one source file serves both builds.
#pragma once

#include "framework/kernel/kernel_program.hpp"
#include "framework/model/gpu_operator_list.hpp"

/// Defines compiled_kernel<List>(): the fused kernel of `List`'s operators. Use once per list, at global
/// scope, in the file nvcc compiles for it.
#define XF_KERNEL(List)                                       \
  template <>                                                 \
  const ::xf::kernel_program* ::xf::compiled_kernel<List>() { \
    return ::xf::fused_kernel<List>();                        \
  }

#if !defined(__CUDACC__)
namespace xf {
template <class... Ops>
const kernel_program* fused_kernel() {
  return nullptr;
}
}  // namespace xf
#else

#include <cuda_runtime.h>

#include <cstdint>
#include <optional>
#include <typeindex>
#include <typeinfo>

#include "framework/core/cuda_check.hpp"
#include "framework/gpu/persistent_kernel.cuh"

namespace xf {
namespace kernel_detail {

// ---- the host side of one fused kernel -----------------------------------------------------------------

template <class List>
struct type_table;
template <class... Ops>
struct type_table<gpu_operator_list<Ops...>> {
  static std::optional<std::uint32_t> index_of(std::type_index t) {
    const std::type_index types[] = {std::type_index(typeid(Ops))...};
    for (std::uint32_t i = 0; i < sizeof...(Ops); ++i)
      if (types[i] == t) return i;
    return std::nullopt;
  }
};

template <class List>
class fused_kernel_program final : public kernel_program {
 public:
  std::optional<std::uint32_t> index_of(std::type_index op) const override {
    return type_table<List>::index_of(op);
  }

  int blocks_per_sm(int threads) const override {
    // The fewer of the two kernels': the plan sizes the grid before it knows which one runs.
    int blocks = 0, with_readers = 0;
    XF_CUDA_TRY(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, persistent_for(threads, false), threads, 0));
    XF_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&with_readers, persistent_for(threads, true),
                                                              threads, 0));
    return blocks < with_readers ? blocks : with_readers;
  }

  void launch(const kernel_args& args, std::uint32_t blocks, std::uint32_t threads,
              stream_handle stream) const override {
    kernel_args copy = args;
    void* params[] = {&copy};
    const auto kernel = persistent_for(static_cast<int>(threads), args.readers != nullptr);
    XF_CUDA_TRY(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), dim3(blocks),
                                            dim3(threads), params, 0, stream));
  }

  int frame_blocks_per_sm(int threads) const override {
    int blocks = 0;
    XF_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, frame_kernel<List>, threads, 0));
    return blocks;
  }

  void launch_frame(const frame_launch& f, std::uint32_t blocks, std::uint32_t threads,
                    stream_handle stream) const override {
    frame_kernel<List><<<blocks, threads, 0, stream>>>(f);
    XF_CUDA_TRY(cudaGetLastError());
  }

 private:
  /// The persistent kernel compiled for blocks of `threads`, with the file readers' phases when the run
  /// has readers (and the list any).
  static auto persistent_for(int threads, bool readers) {
    if constexpr (reads_any_files<List>::value) {
      if (readers)
        return threads <= narrow_block_threads ? &persistent_kernel<List, narrow_block_threads, true>
                                               : &persistent_kernel<List, 1024, true>;
    }
    return threads <= narrow_block_threads ? &persistent_kernel<List, narrow_block_threads, false>
                                           : &persistent_kernel<List, 1024, false>;
  }
};

}  // namespace kernel_detail

/// The fused kernel of the given GPU operators (types or gpu_operator_lists), one instance per program.
template <class... Ops>
const kernel_program* fused_kernel() {
  static const kernel_detail::fused_kernel_program<flatten<Ops...>> program;
  return &program;
}

}  // namespace xf

#endif  // __CUDACC__
