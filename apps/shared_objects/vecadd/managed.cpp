// Vector addition, managed memory without hints: pages migrate where they are touched.
#include <algorithm>

#include "apps/shared_objects/host_memory.hpp"
#include "apps/shared_objects/vecadd/vecadd.hpp"

namespace xf::shared_bench {

void vecadd_managed(run_context& ctx, const vecadd_problem& p, output& out) {
  const std::size_t n = p.n;
  managed_array<float> a(n), b(n), c(n);
  out.values.resize(n);

  ctx.start();
  std::copy_n(p.a.data(), n, a.get());
  std::copy_n(p.b.data(), n, b.get());
  ctx.mark(phase::write);
  ctx.kernel_begin();
  launch_vector_add(a.get(), b.get(), c.get(), n);
  ctx.kernel_end();
  XF_CUDA_TRY(cudaDeviceSynchronize());
  ctx.mark(phase::gpu);
  std::copy_n(c.get(), n, out.values.data());
  ctx.mark(phase::read);
  ctx.stop();
}

}  // namespace xf::shared_bench
