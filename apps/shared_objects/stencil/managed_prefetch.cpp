// The 3D stencil, managed memory with hints: both volumes prefer the GPU and go there before the first
// step; each step moves only the source plane to the CPU and back, and the result comes back at the end.
#include <algorithm>
#include <utility>

#include "apps/shared_objects/host_memory.hpp"
#include "apps/shared_objects/stencil/stencil.hpp"

namespace xf::shared_bench {

void stencil_managed_prefetch(run_context& ctx, const stencil_problem& p, output& out) {
  const std::size_t cells = p.cells(), plane = p.plane();
  const cudaMemLocation gpu = gpu_location(ctx.device());
  managed_array<float> u(cells), v(cells);
  XF_CUDA_TRY(cudaMemAdvise(u.get(), u.bytes(), cudaMemAdviseSetPreferredLocation, gpu));
  XF_CUDA_TRY(cudaMemAdvise(v.get(), v.bytes(), cudaMemAdviseSetPreferredLocation, gpu));
  out.values.resize(cells);

  ctx.start();
  std::copy_n(p.initial.data(), cells, u.get());
  ctx.mark(phase::write);
  XF_CUDA_TRY(cudaMemPrefetchAsync(u.get(), u.bytes(), gpu, 0, nullptr));
  XF_CUDA_TRY(cudaMemPrefetchAsync(v.get(), v.bytes(), gpu, 0, nullptr));
  ctx.mark(phase::to_gpu);
  float* current = u.get();
  float* next = v.get();
  for (std::size_t t = 0; t < p.iterations; ++t) {
    ctx.kernel_begin();
    launch_stencil_step(current, next, p.edge);
    ctx.kernel_end();
    XF_CUDA_TRY(cudaMemPrefetchAsync(next, plane * sizeof(float), cpu_location(), 0, nullptr));
    XF_CUDA_TRY(cudaDeviceSynchronize());
    ctx.mark(phase::gpu);
    for (std::size_t i = 0; i < plane; ++i) next[i] = p.source(t, i);
    ctx.mark(phase::write);
    XF_CUDA_TRY(cudaMemPrefetchAsync(next, plane * sizeof(float), gpu, 0, nullptr));
    ctx.mark(phase::to_gpu);
    std::swap(current, next);
  }
  XF_CUDA_TRY(cudaMemPrefetchAsync(current, cells * sizeof(float), cpu_location(), 0, nullptr));
  XF_CUDA_TRY(cudaDeviceSynchronize());
  ctx.mark(phase::to_host);
  std::copy_n(current, cells, out.values.data());
  ctx.mark(phase::read);
  ctx.stop();
}

}  // namespace xf::shared_bench
