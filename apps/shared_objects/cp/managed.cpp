// cp, managed memory without hints: the CPU writes each chunk where the previous kernel read it.
#include <algorithm>

#include "apps/shared_objects/cp/cp.hpp"
#include "apps/shared_objects/host_memory.hpp"

namespace xf::shared_bench {

void cp_managed(run_context& ctx, const cp_problem& p, output& out) {
  const std::size_t points = p.points();
  managed_array<cp_atom> atoms(p.chunk);
  managed_array<float> energy(points);
  out.values.resize(points);

  ctx.start();
  for (std::size_t first = 0; first < p.atoms; first += p.chunk) {
    const std::size_t count = std::min(p.chunk, p.atoms - first);
    for (std::size_t i = 0; i < count; ++i) atoms.get()[i] = p.atom(first + i);
    ctx.mark(phase::write);
    ctx.kernel_begin();
    launch_coulombic_potential(atoms.get(), count, energy.get(), p.grid_x, p.grid_y, p.spacing, first > 0);
    ctx.kernel_end();
    XF_CUDA_TRY(cudaDeviceSynchronize());
    ctx.mark(phase::gpu);
  }
  std::copy_n(energy.get(), points, out.values.data());
  ctx.mark(phase::read);
  ctx.stop();
}

}  // namespace xf::shared_bench
