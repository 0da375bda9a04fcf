// tpacf, explicit copies: each set written on the host and copied to its device twin before its kernels;
// the histograms copied back at the end.
#include <algorithm>
#include <vector>

#include "apps/shared_objects/host_memory.hpp"
#include "apps/shared_objects/tpacf/tpacf.hpp"
#include "framework/core/cuda_buffer.hpp"

namespace xf::shared_bench {

void tpacf_explicit(run_context& ctx, const tpacf_problem& p, output& out) {
  const std::size_t n = p.points, counts = p.histograms() * p.slots();
  std::vector<host_array<float>> sets;
  std::vector<device_buffer<float>> sets_gpu;
  for (std::size_t s = 0; s < p.sets(); ++s) {
    sets.emplace_back(p.set_floats(), ctx.pinned_host());
    sets_gpu.emplace_back(p.set_floats());
  }
  host_array<std::uint64_t> histograms(counts, ctx.pinned_host());
  device_buffer<std::uint64_t> histograms_gpu(counts);
  out.counts.resize(counts);

  ctx.start();
  p.write_set(0, sets[0].data());
  ctx.mark(phase::write);
  ctx.copy_to_gpu(sets_gpu[0].get(), sets[0].data(), p.set_floats());
  ctx.mark(phase::to_gpu);
  ctx.kernel_begin();
  launch_tpacf_clear(histograms_gpu.get(), counts);
  launch_tpacf_pairs(sets_gpu[0].get(), sets_gpu[0].get(), n, true, p.edges, histograms_gpu.get() + p.dd());
  ctx.kernel_end();
  for (std::size_t r = 0; r < p.random_sets; ++r) {
    // The CPU writes the next set while the previous kernels run.
    p.write_set(1 + r, sets[1 + r].data());
    ctx.mark(phase::write);
    ctx.copy_to_gpu(sets_gpu[1 + r].get(), sets[1 + r].data(), p.set_floats());
    ctx.mark(phase::to_gpu);
    ctx.kernel_begin();
    launch_tpacf_pairs(sets_gpu[0].get(), sets_gpu[1 + r].get(), n, false, p.edges,
                       histograms_gpu.get() + p.dr(r));
    launch_tpacf_pairs(sets_gpu[1 + r].get(), sets_gpu[1 + r].get(), n, true, p.edges,
                       histograms_gpu.get() + p.rr(r));
    ctx.kernel_end();
  }
  XF_CUDA_TRY(cudaDeviceSynchronize());
  ctx.mark(phase::gpu);
  ctx.copy_to_host(histograms.data(), histograms_gpu.get(), counts);
  ctx.mark(phase::to_host);
  std::copy_n(histograms.data(), counts, out.counts.data());
  ctx.mark(phase::read);
  ctx.stop();
}

}  // namespace xf::shared_bench
