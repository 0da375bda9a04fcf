// cp, shared objects: the CPU writes each chunk into the atoms object, then calls and syncs.
#include <algorithm>

#include "apps/shared_objects/cp/cp.hpp"

namespace xf::shared_bench {

void cp_shared(run_context& ctx, const cp_problem& p, output& out) {
  const std::size_t points = p.points();
  shared::object_space& space = ctx.space();
  cp_atom* atoms = space.allocate_array<cp_atom>(p.chunk);
  float* energy = space.allocate_array<float>(points);
  out.values.resize(points);

  ctx.start();
  for (std::size_t first = 0; first < p.atoms; first += p.chunk) {
    const std::size_t count = std::min(p.chunk, p.atoms - first);
    for (std::size_t i = 0; i < count; ++i) atoms[i] = p.atom(first + i);
    ctx.mark(phase::write);
    space.call([&] {
      ctx.kernel_begin();
      launch_coulombic_potential(atoms, count, energy, p.grid_x, p.grid_y, p.spacing, first > 0);
      ctx.kernel_end();
    });
    ctx.mark(phase::to_gpu);
    space.sync();
    ctx.mark(phase::gpu);
  }
  std::copy_n(energy, points, out.values.data());
  ctx.mark(phase::read);
  ctx.stop();
  space.release(atoms);
  space.release(energy);
}

}  // namespace xf::shared_bench
