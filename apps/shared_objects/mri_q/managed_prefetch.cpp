// mri-q, managed memory with hints: what each kernel uses is prefetched to the GPU before it, what the CPU
// reads next prefetched back after it.
#include <algorithm>

#include "apps/shared_objects/host_memory.hpp"
#include "apps/shared_objects/mri_q/mri_q.hpp"

namespace xf::shared_bench {

void mri_q_managed_prefetch(run_context& ctx, const mri_q_problem& p, output& out) {
  const std::size_t nk = p.samples, nx = p.voxels;
  const cudaMemLocation gpu = gpu_location(ctx.device());
  managed_array<float> phi_r(nk), phi_i(nk), phi_magnitude(nk);
  managed_array<mri_q_sample> samples(nk);
  managed_array<float> x(nx), y(nx), z(nx), q_r(nx), q_i(nx);
  out.values.resize(2 * nx);

  ctx.start();
  std::copy_n(p.phi_r.data(), nk, phi_r.get());
  std::copy_n(p.phi_i.data(), nk, phi_i.get());
  std::copy_n(p.x.data(), nx, x.get());
  std::copy_n(p.y.data(), nx, y.get());
  std::copy_n(p.z.data(), nx, z.get());
  ctx.mark(phase::write);
  XF_CUDA_TRY(cudaMemPrefetchAsync(phi_r.get(), phi_r.bytes(), gpu, 0, nullptr));
  XF_CUDA_TRY(cudaMemPrefetchAsync(phi_i.get(), phi_i.bytes(), gpu, 0, nullptr));
  XF_CUDA_TRY(cudaMemPrefetchAsync(phi_magnitude.get(), phi_magnitude.bytes(), gpu, 0, nullptr));
  ctx.mark(phase::to_gpu);
  ctx.kernel_begin();
  launch_phi_magnitude(phi_r.get(), phi_i.get(), phi_magnitude.get(), nk);
  ctx.kernel_end();
  XF_CUDA_TRY(cudaMemPrefetchAsync(phi_magnitude.get(), phi_magnitude.bytes(), cpu_location(), 0, nullptr));
  XF_CUDA_TRY(cudaDeviceSynchronize());
  ctx.mark(phase::gpu);
  for (std::size_t k = 0; k < nk; ++k) samples.get()[k] = {p.kx[k], p.ky[k], p.kz[k], phi_magnitude.get()[k]};
  ctx.mark(phase::write);
  XF_CUDA_TRY(cudaMemPrefetchAsync(samples.get(), samples.bytes(), gpu, 0, nullptr));
  XF_CUDA_TRY(cudaMemPrefetchAsync(x.get(), x.bytes(), gpu, 0, nullptr));
  XF_CUDA_TRY(cudaMemPrefetchAsync(y.get(), y.bytes(), gpu, 0, nullptr));
  XF_CUDA_TRY(cudaMemPrefetchAsync(z.get(), z.bytes(), gpu, 0, nullptr));
  XF_CUDA_TRY(cudaMemPrefetchAsync(q_r.get(), q_r.bytes(), gpu, 0, nullptr));
  XF_CUDA_TRY(cudaMemPrefetchAsync(q_i.get(), q_i.bytes(), gpu, 0, nullptr));
  ctx.mark(phase::to_gpu);
  ctx.kernel_begin();
  for (std::size_t first = 0; first < nk; first += p.chunk)
    launch_compute_q(samples.get(), first, std::min(p.chunk, nk - first), x.get(), y.get(), z.get(), nx,
                     q_r.get(), q_i.get(), first > 0);
  ctx.kernel_end();
  XF_CUDA_TRY(cudaDeviceSynchronize());
  ctx.mark(phase::gpu);
  XF_CUDA_TRY(cudaMemPrefetchAsync(q_r.get(), q_r.bytes(), cpu_location(), 0, nullptr));
  XF_CUDA_TRY(cudaMemPrefetchAsync(q_i.get(), q_i.bytes(), cpu_location(), 0, nullptr));
  XF_CUDA_TRY(cudaDeviceSynchronize());
  ctx.mark(phase::to_host);
  std::copy_n(q_r.get(), nx, out.values.data());
  std::copy_n(q_i.get(), nx, out.values.data() + nx);
  ctx.mark(phase::read);
  ctx.stop();
}

}  // namespace xf::shared_bench
