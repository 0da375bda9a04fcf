// Vector addition, shared objects: one pointer per array, call and sync.
#include <algorithm>

#include "apps/shared_objects/vecadd/vecadd.hpp"

namespace xf::shared_bench {

void vecadd_shared(run_context& ctx, const vecadd_problem& p, output& out) {
  const std::size_t n = p.n;
  shared::object_space& space = ctx.space();
  float* a = space.allocate_array<float>(n);
  float* b = space.allocate_array<float>(n);
  float* c = space.allocate_array<float>(n);
  out.values.resize(n);

  ctx.start();
  std::copy_n(p.a.data(), n, a);
  std::copy_n(p.b.data(), n, b);
  ctx.mark(phase::write);
  space.call([&] {
    ctx.kernel_begin();
    launch_vector_add(a, b, c, n);
    ctx.kernel_end();
  });
  ctx.mark(phase::to_gpu);
  space.sync();
  ctx.mark(phase::gpu);
  std::copy_n(c, n, out.values.data());
  ctx.mark(phase::read);
  ctx.stop();
  space.release(a);
  space.release(b);
  space.release(c);
}

}  // namespace xf::shared_bench
