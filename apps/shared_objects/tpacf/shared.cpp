// tpacf, shared objects: each set written into its object, then a call for its kernels and a sync.
#include <algorithm>
#include <vector>

#include "apps/shared_objects/tpacf/tpacf.hpp"

namespace xf::shared_bench {

void tpacf_shared(run_context& ctx, const tpacf_problem& p, output& out) {
  const std::size_t n = p.points, counts = p.histograms() * p.slots();
  shared::object_space& space = ctx.space();
  std::vector<float*> sets;
  for (std::size_t s = 0; s < p.sets(); ++s) sets.push_back(space.allocate_array<float>(p.set_floats()));
  std::uint64_t* histograms = space.allocate_array<std::uint64_t>(counts);
  out.counts.resize(counts);

  ctx.start();
  p.write_set(0, sets[0]);
  ctx.mark(phase::write);
  space.call([&] {
    ctx.kernel_begin();
    launch_tpacf_clear(histograms, counts);
    launch_tpacf_pairs(sets[0], sets[0], n, true, p.edges, histograms + p.dd());
    ctx.kernel_end();
  });
  ctx.mark(phase::to_gpu);
  space.sync();
  ctx.mark(phase::gpu);
  for (std::size_t r = 0; r < p.random_sets; ++r) {
    p.write_set(1 + r, sets[1 + r]);
    ctx.mark(phase::write);
    space.call([&] {
      ctx.kernel_begin();
      launch_tpacf_pairs(sets[0], sets[1 + r], n, false, p.edges, histograms + p.dr(r));
      launch_tpacf_pairs(sets[1 + r], sets[1 + r], n, true, p.edges, histograms + p.rr(r));
      ctx.kernel_end();
    });
    ctx.mark(phase::to_gpu);
    space.sync();
    ctx.mark(phase::gpu);
  }
  std::copy_n(histograms, counts, out.counts.data());
  ctx.mark(phase::read);
  ctx.stop();
  for (float* set : sets) space.release(set);
  space.release(histograms);
}

}  // namespace xf::shared_bench
