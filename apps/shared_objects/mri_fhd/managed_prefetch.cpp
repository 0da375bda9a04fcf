// mri-fhd, managed memory with hints: what each kernel uses is prefetched to the GPU before it, what the CPU
// reads next prefetched back after it.
#include <algorithm>

#include "apps/shared_objects/host_memory.hpp"
#include "apps/shared_objects/mri_fhd/mri_fhd.hpp"

namespace xf::shared_bench {

void mri_fhd_managed_prefetch(run_context& ctx, const mri_fhd_problem& p, output& out) {
  const std::size_t nk = p.samples, nx = p.voxels;
  const cudaMemLocation gpu = gpu_location(ctx.device());
  managed_array<float> phi_r(nk), phi_i(nk), d_r(nk), d_i(nk), rho_phi_r(nk), rho_phi_i(nk);
  managed_array<mri_fhd_sample> samples(nk);
  managed_array<float> x(nx), y(nx), z(nx), fh_r(nx), fh_i(nx);
  out.values.resize(2 * nx);

  ctx.start();
  std::copy_n(p.phi_r.data(), nk, phi_r.get());
  std::copy_n(p.phi_i.data(), nk, phi_i.get());
  std::copy_n(p.d_r.data(), nk, d_r.get());
  std::copy_n(p.d_i.data(), nk, d_i.get());
  std::copy_n(p.x.data(), nx, x.get());
  std::copy_n(p.y.data(), nx, y.get());
  std::copy_n(p.z.data(), nx, z.get());
  ctx.mark(phase::write);
  for (const managed_array<float>* array : {&phi_r, &phi_i, &d_r, &d_i, &rho_phi_r, &rho_phi_i})
    XF_CUDA_TRY(cudaMemPrefetchAsync(array->get(), array->bytes(), gpu, 0, nullptr));
  ctx.mark(phase::to_gpu);
  ctx.kernel_begin();
  launch_rho_phi(phi_r.get(), phi_i.get(), d_r.get(), d_i.get(), rho_phi_r.get(), rho_phi_i.get(), nk);
  ctx.kernel_end();
  XF_CUDA_TRY(cudaMemPrefetchAsync(rho_phi_r.get(), rho_phi_r.bytes(), cpu_location(), 0, nullptr));
  XF_CUDA_TRY(cudaMemPrefetchAsync(rho_phi_i.get(), rho_phi_i.bytes(), cpu_location(), 0, nullptr));
  XF_CUDA_TRY(cudaDeviceSynchronize());
  ctx.mark(phase::gpu);
  for (std::size_t k = 0; k < nk; ++k)
    samples.get()[k] = {p.kx[k], p.ky[k], p.kz[k], rho_phi_r.get()[k], rho_phi_i.get()[k]};
  ctx.mark(phase::write);
  XF_CUDA_TRY(cudaMemPrefetchAsync(samples.get(), samples.bytes(), gpu, 0, nullptr));
  for (const managed_array<float>* array : {&x, &y, &z, &fh_r, &fh_i})
    XF_CUDA_TRY(cudaMemPrefetchAsync(array->get(), array->bytes(), gpu, 0, nullptr));
  ctx.mark(phase::to_gpu);
  ctx.kernel_begin();
  for (std::size_t first = 0; first < nk; first += p.chunk)
    launch_compute_fh(samples.get(), first, std::min(p.chunk, nk - first), x.get(), y.get(), z.get(), nx,
                      fh_r.get(), fh_i.get(), first > 0);
  ctx.kernel_end();
  XF_CUDA_TRY(cudaDeviceSynchronize());
  ctx.mark(phase::gpu);
  XF_CUDA_TRY(cudaMemPrefetchAsync(fh_r.get(), fh_r.bytes(), cpu_location(), 0, nullptr));
  XF_CUDA_TRY(cudaMemPrefetchAsync(fh_i.get(), fh_i.bytes(), cpu_location(), 0, nullptr));
  XF_CUDA_TRY(cudaDeviceSynchronize());
  ctx.mark(phase::to_host);
  std::copy_n(fh_r.get(), nx, out.values.data());
  std::copy_n(fh_i.get(), nx, out.values.data() + nx);
  ctx.mark(phase::read);
  ctx.stop();
}

}  // namespace xf::shared_bench
