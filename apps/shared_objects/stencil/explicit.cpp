// The 3D stencil, explicit copies: the volume in once, each step's source plane alone, the volume out.
#include <algorithm>
#include <utility>

#include "apps/shared_objects/host_memory.hpp"
#include "apps/shared_objects/stencil/stencil.hpp"
#include "framework/core/cuda_buffer.hpp"

namespace xf::shared_bench {

void stencil_explicit(run_context& ctx, const stencil_problem& p, output& out) {
  const std::size_t cells = p.cells(), plane = p.plane();
  host_array<float> volume(cells, ctx.pinned_host());
  host_array<float> source(plane, ctx.pinned_host());
  device_buffer<float> u_gpu(cells), v_gpu(cells);
  out.values.resize(cells);

  ctx.start();
  std::copy_n(p.initial.data(), cells, volume.data());
  ctx.mark(phase::write);
  ctx.copy_to_gpu(u_gpu.get(), volume.data(), cells);
  ctx.mark(phase::to_gpu);
  float* current = u_gpu.get();
  float* next = v_gpu.get();
  for (std::size_t t = 0; t < p.iterations; ++t) {
    ctx.kernel_begin();
    launch_stencil_step(current, next, p.edge);
    ctx.kernel_end();
    // The CPU writes the source while the kernel runs; the copy waits for the kernel.
    for (std::size_t i = 0; i < plane; ++i) source[i] = p.source(t, i);
    ctx.mark(phase::write);
    ctx.copy_to_gpu(next, source.data(), plane);  // the plane z = 0 opens the volume
    ctx.mark(phase::to_gpu);
    std::swap(current, next);
  }
  ctx.copy_to_host(volume.data(), current, cells);
  ctx.mark(phase::to_host);
  std::copy_n(volume.data(), cells, out.values.data());
  ctx.mark(phase::read);
  ctx.stop();
}

}  // namespace xf::shared_bench
