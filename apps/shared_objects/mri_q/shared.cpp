// mri-q, shared objects: the CPU reads |φ|² where the first kernel left it and packs the samples in place.
#include <algorithm>
#include <initializer_list>

#include "apps/shared_objects/mri_q/mri_q.hpp"

namespace xf::shared_bench {

void mri_q_shared(run_context& ctx, const mri_q_problem& p, output& out) {
  const std::size_t nk = p.samples, nx = p.voxels;
  shared::object_space& space = ctx.space();
  float* phi_r = space.allocate_array<float>(nk);
  float* phi_i = space.allocate_array<float>(nk);
  float* phi_magnitude = space.allocate_array<float>(nk);
  mri_q_sample* samples = space.allocate_array<mri_q_sample>(nk);
  float* x = space.allocate_array<float>(nx);
  float* y = space.allocate_array<float>(nx);
  float* z = space.allocate_array<float>(nx);
  float* q_r = space.allocate_array<float>(nx);
  float* q_i = space.allocate_array<float>(nx);
  out.values.resize(2 * nx);

  ctx.start();
  std::copy_n(p.phi_r.data(), nk, phi_r);
  std::copy_n(p.phi_i.data(), nk, phi_i);
  std::copy_n(p.x.data(), nx, x);
  std::copy_n(p.y.data(), nx, y);
  std::copy_n(p.z.data(), nx, z);
  ctx.mark(phase::write);
  space.call([&] {
    ctx.kernel_begin();
    launch_phi_magnitude(phi_r, phi_i, phi_magnitude, nk);
    ctx.kernel_end();
  });
  ctx.mark(phase::to_gpu);
  space.sync();
  ctx.mark(phase::gpu);
  for (std::size_t k = 0; k < nk; ++k) samples[k] = {p.kx[k], p.ky[k], p.kz[k], phi_magnitude[k]};
  ctx.mark(phase::write);
  space.call([&] {
    ctx.kernel_begin();
    for (std::size_t first = 0; first < nk; first += p.chunk)
      launch_compute_q(samples, first, std::min(p.chunk, nk - first), x, y, z, nx, q_r, q_i, first > 0);
    ctx.kernel_end();
  });
  ctx.mark(phase::to_gpu);
  space.sync();
  ctx.mark(phase::gpu);
  std::copy_n(q_r, nx, out.values.data());
  std::copy_n(q_i, nx, out.values.data() + nx);
  ctx.mark(phase::read);
  ctx.stop();
  for (void* object : std::initializer_list<void*>{phi_r, phi_i, phi_magnitude, samples, x, y, z, q_r, q_i})
    space.release(object);
}

}  // namespace xf::shared_bench
