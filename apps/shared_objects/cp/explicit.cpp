// cp, explicit copies: each chunk staged on the host and copied to its device twin; the grid copied back.
#include <algorithm>

#include "apps/shared_objects/cp/cp.hpp"
#include "apps/shared_objects/host_memory.hpp"
#include "framework/core/cuda_buffer.hpp"

namespace xf::shared_bench {

void cp_explicit(run_context& ctx, const cp_problem& p, output& out) {
  const std::size_t points = p.points();
  host_array<cp_atom> atoms(p.chunk, ctx.pinned_host());
  host_array<float> energy(points, ctx.pinned_host());
  device_buffer<cp_atom> atoms_gpu(p.chunk);
  device_buffer<float> energy_gpu(points);
  out.values.resize(points);

  ctx.start();
  for (std::size_t first = 0; first < p.atoms; first += p.chunk) {
    const std::size_t count = std::min(p.chunk, p.atoms - first);
    // The CPU stages the chunk while the previous one's kernel runs; the copy waits for that kernel.
    for (std::size_t i = 0; i < count; ++i) atoms[i] = p.atom(first + i);
    ctx.mark(phase::write);
    ctx.copy_to_gpu(atoms_gpu.get(), atoms.data(), count);
    ctx.mark(phase::to_gpu);
    ctx.kernel_begin();
    launch_coulombic_potential(atoms_gpu.get(), count, energy_gpu.get(), p.grid_x, p.grid_y, p.spacing,
                               first > 0);
    ctx.kernel_end();
  }
  XF_CUDA_TRY(cudaDeviceSynchronize());
  ctx.mark(phase::gpu);
  ctx.copy_to_host(energy.data(), energy_gpu.get(), points);
  ctx.mark(phase::to_host);
  std::copy_n(energy.data(), points, out.values.data());
  ctx.mark(phase::read);
  ctx.stop();
}

}  // namespace xf::shared_bench
