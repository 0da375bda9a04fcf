// Vector addition, managed memory with hints: everything prefetched to the GPU before the kernel and the
// result back before the CPU reads it. (Marking the inputs read-mostly before the CPU writes them made that
// writing several times slower on the H100: the hints here are the prefetches.)
#include <algorithm>

#include "apps/shared_objects/host_memory.hpp"
#include "apps/shared_objects/vecadd/vecadd.hpp"

namespace xf::shared_bench {

void vecadd_managed_prefetch(run_context& ctx, const vecadd_problem& p, output& out) {
  const std::size_t n = p.n;
  const cudaMemLocation gpu = gpu_location(ctx.device());
  managed_array<float> a(n), b(n), c(n);
  out.values.resize(n);

  ctx.start();
  std::copy_n(p.a.data(), n, a.get());
  std::copy_n(p.b.data(), n, b.get());
  ctx.mark(phase::write);
  XF_CUDA_TRY(cudaMemPrefetchAsync(a.get(), a.bytes(), gpu, 0, nullptr));
  XF_CUDA_TRY(cudaMemPrefetchAsync(b.get(), b.bytes(), gpu, 0, nullptr));
  XF_CUDA_TRY(cudaMemPrefetchAsync(c.get(), c.bytes(), gpu, 0, nullptr));
  ctx.mark(phase::to_gpu);
  ctx.kernel_begin();
  launch_vector_add(a.get(), b.get(), c.get(), n);
  ctx.kernel_end();
  XF_CUDA_TRY(cudaDeviceSynchronize());
  ctx.mark(phase::gpu);
  XF_CUDA_TRY(cudaMemPrefetchAsync(c.get(), c.bytes(), cpu_location(), 0, nullptr));
  XF_CUDA_TRY(cudaDeviceSynchronize());
  ctx.mark(phase::to_host);
  std::copy_n(c.get(), n, out.values.data());
  ctx.mark(phase::read);
  ctx.stop();
}

}  // namespace xf::shared_bench
