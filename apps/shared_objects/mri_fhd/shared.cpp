// mri-fhd, shared objects: the CPU reads ρφ where the first kernel left it and packs the samples in place.
#include <algorithm>
#include <initializer_list>

#include "apps/shared_objects/mri_fhd/mri_fhd.hpp"

namespace xf::shared_bench {

void mri_fhd_shared(run_context& ctx, const mri_fhd_problem& p, output& out) {
  const std::size_t nk = p.samples, nx = p.voxels;
  shared::object_space& space = ctx.space();
  float* phi_r = space.allocate_array<float>(nk);
  float* phi_i = space.allocate_array<float>(nk);
  float* d_r = space.allocate_array<float>(nk);
  float* d_i = space.allocate_array<float>(nk);
  float* rho_phi_r = space.allocate_array<float>(nk);
  float* rho_phi_i = space.allocate_array<float>(nk);
  mri_fhd_sample* samples = space.allocate_array<mri_fhd_sample>(nk);
  float* x = space.allocate_array<float>(nx);
  float* y = space.allocate_array<float>(nx);
  float* z = space.allocate_array<float>(nx);
  float* fh_r = space.allocate_array<float>(nx);
  float* fh_i = space.allocate_array<float>(nx);
  out.values.resize(2 * nx);

  ctx.start();
  std::copy_n(p.phi_r.data(), nk, phi_r);
  std::copy_n(p.phi_i.data(), nk, phi_i);
  std::copy_n(p.d_r.data(), nk, d_r);
  std::copy_n(p.d_i.data(), nk, d_i);
  std::copy_n(p.x.data(), nx, x);
  std::copy_n(p.y.data(), nx, y);
  std::copy_n(p.z.data(), nx, z);
  ctx.mark(phase::write);
  space.call([&] {
    ctx.kernel_begin();
    launch_rho_phi(phi_r, phi_i, d_r, d_i, rho_phi_r, rho_phi_i, nk);
    ctx.kernel_end();
  });
  ctx.mark(phase::to_gpu);
  space.sync();
  ctx.mark(phase::gpu);
  for (std::size_t k = 0; k < nk; ++k) samples[k] = {p.kx[k], p.ky[k], p.kz[k], rho_phi_r[k], rho_phi_i[k]};
  ctx.mark(phase::write);
  space.call([&] {
    ctx.kernel_begin();
    for (std::size_t first = 0; first < nk; first += p.chunk)
      launch_compute_fh(samples, first, std::min(p.chunk, nk - first), x, y, z, nx, fh_r, fh_i, first > 0);
    ctx.kernel_end();
  });
  ctx.mark(phase::to_gpu);
  space.sync();
  ctx.mark(phase::gpu);
  std::copy_n(fh_r, nx, out.values.data());
  std::copy_n(fh_i, nx, out.values.data() + nx);
  ctx.mark(phase::read);
  ctx.stop();
  for (void* object : std::initializer_list<void*>{phi_r, phi_i, d_r, d_i, rho_phi_r, rho_phi_i, samples, x,
                                                   y, z, fh_r, fh_i})
    space.release(object);
}

}  // namespace xf::shared_bench
