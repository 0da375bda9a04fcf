// The 3D stencil, shared objects: two volumes, each step a call and a sync, the CPU writing the source plane
// straight into the volume the step produced.
#include <algorithm>
#include <utility>

#include "apps/shared_objects/stencil/stencil.hpp"

namespace xf::shared_bench {

void stencil_shared(run_context& ctx, const stencil_problem& p, output& out) {
  const std::size_t cells = p.cells(), plane = p.plane();
  shared::object_space& space = ctx.space();
  float* u = space.allocate_array<float>(cells);
  float* v = space.allocate_array<float>(cells);
  out.values.resize(cells);

  ctx.start();
  std::copy_n(p.initial.data(), cells, u);
  ctx.mark(phase::write);
  float* current = u;
  float* next = v;
  for (std::size_t t = 0; t < p.iterations; ++t) {
    space.call([&] {
      ctx.kernel_begin();
      launch_stencil_step(current, next, p.edge);
      ctx.kernel_end();
    });
    ctx.mark(phase::to_gpu);
    space.sync();
    ctx.mark(phase::gpu);
    for (std::size_t i = 0; i < plane; ++i) next[i] = p.source(t, i);
    ctx.mark(phase::write);
    std::swap(current, next);
  }
  std::copy_n(current, cells, out.values.data());
  ctx.mark(phase::read);
  ctx.stop();
  space.release(u);
  space.release(v);
}

}  // namespace xf::shared_bench
