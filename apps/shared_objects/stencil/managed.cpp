// The 3D stencil, managed memory without hints: the pages the CPU writes migrate to it and back.
#include <algorithm>
#include <utility>

#include "apps/shared_objects/host_memory.hpp"
#include "apps/shared_objects/stencil/stencil.hpp"

namespace xf::shared_bench {

void stencil_managed(run_context& ctx, const stencil_problem& p, output& out) {
  const std::size_t cells = p.cells(), plane = p.plane();
  managed_array<float> u(cells), v(cells);
  out.values.resize(cells);

  ctx.start();
  std::copy_n(p.initial.data(), cells, u.get());
  ctx.mark(phase::write);
  float* current = u.get();
  float* next = v.get();
  for (std::size_t t = 0; t < p.iterations; ++t) {
    ctx.kernel_begin();
    launch_stencil_step(current, next, p.edge);
    ctx.kernel_end();
    XF_CUDA_TRY(cudaDeviceSynchronize());
    ctx.mark(phase::gpu);
    for (std::size_t i = 0; i < plane; ++i) next[i] = p.source(t, i);
    ctx.mark(phase::write);
    std::swap(current, next);
  }
  std::copy_n(current, cells, out.values.data());
  ctx.mark(phase::read);
  ctx.stop();
}

}  // namespace xf::shared_bench
