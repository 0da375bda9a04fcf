// cp, managed memory with hints: each chunk of atoms prefetched to the GPU once written, the grid on the GPU
// (its preferred location) until the end.
#include <algorithm>

#include "apps/shared_objects/cp/cp.hpp"
#include "apps/shared_objects/host_memory.hpp"

namespace xf::shared_bench {

void cp_managed_prefetch(run_context& ctx, const cp_problem& p, output& out) {
  const std::size_t points = p.points();
  const cudaMemLocation gpu = gpu_location(ctx.device());
  managed_array<cp_atom> atoms(p.chunk);
  managed_array<float> energy(points);
  XF_CUDA_TRY(cudaMemAdvise(energy.get(), energy.bytes(), cudaMemAdviseSetPreferredLocation, gpu));
  out.values.resize(points);

  ctx.start();
  XF_CUDA_TRY(cudaMemPrefetchAsync(energy.get(), energy.bytes(), gpu, 0, nullptr));
  for (std::size_t first = 0; first < p.atoms; first += p.chunk) {
    const std::size_t count = std::min(p.chunk, p.atoms - first);
    for (std::size_t i = 0; i < count; ++i) atoms.get()[i] = p.atom(first + i);
    ctx.mark(phase::write);
    XF_CUDA_TRY(cudaMemPrefetchAsync(atoms.get(), count * sizeof(cp_atom), gpu, 0, nullptr));
    ctx.mark(phase::to_gpu);
    ctx.kernel_begin();
    launch_coulombic_potential(atoms.get(), count, energy.get(), p.grid_x, p.grid_y, p.spacing, first > 0);
    ctx.kernel_end();
    XF_CUDA_TRY(cudaDeviceSynchronize());
    ctx.mark(phase::gpu);
  }
  XF_CUDA_TRY(cudaMemPrefetchAsync(energy.get(), energy.bytes(), cpu_location(), 0, nullptr));
  XF_CUDA_TRY(cudaDeviceSynchronize());
  ctx.mark(phase::to_host);
  std::copy_n(energy.get(), points, out.values.data());
  ctx.mark(phase::read);
  ctx.stop();
}

}  // namespace xf::shared_bench
