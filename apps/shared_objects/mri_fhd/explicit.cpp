// mri-fhd, explicit copies: φ and d to the GPU and ρφ back, the packed samples and the voxels to the GPU,
// F^H·d back.
#include <algorithm>

#include "apps/shared_objects/host_memory.hpp"
#include "apps/shared_objects/mri_fhd/mri_fhd.hpp"
#include "framework/core/cuda_buffer.hpp"

namespace xf::shared_bench {

void mri_fhd_explicit(run_context& ctx, const mri_fhd_problem& p, output& out) {
  const std::size_t nk = p.samples, nx = p.voxels;
  const bool pinned = ctx.pinned_host();
  host_array<float> phi_r(nk, pinned), phi_i(nk, pinned), d_r(nk, pinned), d_i(nk, pinned);
  host_array<float> rho_phi_r(nk, pinned), rho_phi_i(nk, pinned);
  host_array<mri_fhd_sample> samples(nk, pinned);
  host_array<float> x(nx, pinned), y(nx, pinned), z(nx, pinned), fh_r(nx, pinned), fh_i(nx, pinned);
  device_buffer<float> phi_r_gpu(nk), phi_i_gpu(nk), d_r_gpu(nk), d_i_gpu(nk);
  device_buffer<float> rho_phi_r_gpu(nk), rho_phi_i_gpu(nk);
  device_buffer<mri_fhd_sample> samples_gpu(nk);
  device_buffer<float> x_gpu(nx), y_gpu(nx), z_gpu(nx), fh_r_gpu(nx), fh_i_gpu(nx);
  out.values.resize(2 * nx);

  ctx.start();
  std::copy_n(p.phi_r.data(), nk, phi_r.data());
  std::copy_n(p.phi_i.data(), nk, phi_i.data());
  std::copy_n(p.d_r.data(), nk, d_r.data());
  std::copy_n(p.d_i.data(), nk, d_i.data());
  std::copy_n(p.x.data(), nx, x.data());
  std::copy_n(p.y.data(), nx, y.data());
  std::copy_n(p.z.data(), nx, z.data());
  ctx.mark(phase::write);
  ctx.copy_to_gpu(phi_r_gpu.get(), phi_r.data(), nk);
  ctx.copy_to_gpu(phi_i_gpu.get(), phi_i.data(), nk);
  ctx.copy_to_gpu(d_r_gpu.get(), d_r.data(), nk);
  ctx.copy_to_gpu(d_i_gpu.get(), d_i.data(), nk);
  ctx.mark(phase::to_gpu);
  ctx.kernel_begin();
  launch_rho_phi(phi_r_gpu.get(), phi_i_gpu.get(), d_r_gpu.get(), d_i_gpu.get(), rho_phi_r_gpu.get(),
                 rho_phi_i_gpu.get(), nk);
  ctx.kernel_end();
  XF_CUDA_TRY(cudaDeviceSynchronize());
  ctx.mark(phase::gpu);
  ctx.copy_to_host(rho_phi_r.data(), rho_phi_r_gpu.get(), nk);
  ctx.copy_to_host(rho_phi_i.data(), rho_phi_i_gpu.get(), nk);
  ctx.mark(phase::to_host);
  for (std::size_t k = 0; k < nk; ++k) samples[k] = {p.kx[k], p.ky[k], p.kz[k], rho_phi_r[k], rho_phi_i[k]};
  ctx.mark(phase::write);
  ctx.copy_to_gpu(samples_gpu.get(), samples.data(), nk);
  ctx.copy_to_gpu(x_gpu.get(), x.data(), nx);
  ctx.copy_to_gpu(y_gpu.get(), y.data(), nx);
  ctx.copy_to_gpu(z_gpu.get(), z.data(), nx);
  ctx.mark(phase::to_gpu);
  ctx.kernel_begin();
  for (std::size_t first = 0; first < nk; first += p.chunk)
    launch_compute_fh(samples_gpu.get(), first, std::min(p.chunk, nk - first), x_gpu.get(), y_gpu.get(),
                      z_gpu.get(), nx, fh_r_gpu.get(), fh_i_gpu.get(), first > 0);
  ctx.kernel_end();
  XF_CUDA_TRY(cudaDeviceSynchronize());
  ctx.mark(phase::gpu);
  ctx.copy_to_host(fh_r.data(), fh_r_gpu.get(), nx);
  ctx.copy_to_host(fh_i.data(), fh_i_gpu.get(), nx);
  ctx.mark(phase::to_host);
  std::copy_n(fh_r.data(), nx, out.values.data());
  std::copy_n(fh_i.data(), nx, out.values.data() + nx);
  ctx.mark(phase::read);
  ctx.stop();
}

}  // namespace xf::shared_bench
