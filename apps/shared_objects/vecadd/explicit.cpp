// Vector addition, explicit copies: host arrays and their device twins, cudaMemcpy in and out.
#include <algorithm>

#include "apps/shared_objects/host_memory.hpp"
#include "apps/shared_objects/vecadd/vecadd.hpp"
#include "framework/core/cuda_buffer.hpp"

namespace xf::shared_bench {

void vecadd_explicit(run_context& ctx, const vecadd_problem& p, output& out) {
  const std::size_t n = p.n;
  host_array<float> a(n, ctx.pinned_host()), b(n, ctx.pinned_host()), c(n, ctx.pinned_host());
  device_buffer<float> a_gpu(n), b_gpu(n), c_gpu(n);
  out.values.resize(n);

  ctx.start();
  std::copy_n(p.a.data(), n, a.data());
  std::copy_n(p.b.data(), n, b.data());
  ctx.mark(phase::write);
  ctx.copy_to_gpu(a_gpu.get(), a.data(), n);
  ctx.copy_to_gpu(b_gpu.get(), b.data(), n);
  ctx.mark(phase::to_gpu);
  ctx.kernel_begin();
  launch_vector_add(a_gpu.get(), b_gpu.get(), c_gpu.get(), n);
  ctx.kernel_end();
  XF_CUDA_TRY(cudaDeviceSynchronize());
  ctx.mark(phase::gpu);
  ctx.copy_to_host(c.data(), c_gpu.get(), n);
  ctx.mark(phase::to_host);
  std::copy_n(c.data(), n, out.values.data());
  ctx.mark(phase::read);
  ctx.stop();
}

}  // namespace xf::shared_bench
