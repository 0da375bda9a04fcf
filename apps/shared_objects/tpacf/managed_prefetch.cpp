// tpacf, managed memory with hints: each set prefetched to the GPU once written; the histograms on the GPU
// (their preferred location) until the end.
#include <algorithm>
#include <vector>

#include "apps/shared_objects/host_memory.hpp"
#include "apps/shared_objects/tpacf/tpacf.hpp"

namespace xf::shared_bench {

void tpacf_managed_prefetch(run_context& ctx, const tpacf_problem& p, output& out) {
  const std::size_t n = p.points, counts = p.histograms() * p.slots();
  const cudaMemLocation gpu = gpu_location(ctx.device());
  std::vector<managed_array<float>> sets;
  for (std::size_t s = 0; s < p.sets(); ++s) sets.emplace_back(p.set_floats());
  managed_array<std::uint64_t> histograms(counts);
  XF_CUDA_TRY(cudaMemAdvise(histograms.get(), histograms.bytes(), cudaMemAdviseSetPreferredLocation, gpu));
  out.counts.resize(counts);

  ctx.start();
  p.write_set(0, sets[0].get());
  ctx.mark(phase::write);
  XF_CUDA_TRY(cudaMemPrefetchAsync(sets[0].get(), sets[0].bytes(), gpu, 0, nullptr));
  XF_CUDA_TRY(cudaMemPrefetchAsync(histograms.get(), histograms.bytes(), gpu, 0, nullptr));
  ctx.mark(phase::to_gpu);
  ctx.kernel_begin();
  launch_tpacf_clear(histograms.get(), counts);
  launch_tpacf_pairs(sets[0].get(), sets[0].get(), n, true, p.edges, histograms.get() + p.dd());
  ctx.kernel_end();
  for (std::size_t r = 0; r < p.random_sets; ++r) {
    p.write_set(1 + r, sets[1 + r].get());
    ctx.mark(phase::write);
    XF_CUDA_TRY(cudaMemPrefetchAsync(sets[1 + r].get(), sets[1 + r].bytes(), gpu, 0, nullptr));
    ctx.mark(phase::to_gpu);
    ctx.kernel_begin();
    launch_tpacf_pairs(sets[0].get(), sets[1 + r].get(), n, false, p.edges, histograms.get() + p.dr(r));
    launch_tpacf_pairs(sets[1 + r].get(), sets[1 + r].get(), n, true, p.edges, histograms.get() + p.rr(r));
    ctx.kernel_end();
  }
  XF_CUDA_TRY(cudaMemPrefetchAsync(histograms.get(), histograms.bytes(), cpu_location(), 0, nullptr));
  XF_CUDA_TRY(cudaDeviceSynchronize());
  ctx.mark(phase::gpu);
  std::copy_n(histograms.get(), counts, out.counts.data());
  ctx.mark(phase::read);
  ctx.stop();
}

}  // namespace xf::shared_bench
