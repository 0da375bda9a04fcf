// Vector addition's inputs and its check (vecadd.hpp).
#include "apps/shared_objects/vecadd/vecadd.hpp"

#include "apps/shared_objects/inputs.hpp"

namespace xf::shared_bench {

check_result vecadd_problem::check(const output& out, bool) const {
  if (out.values.size() != n)
    return {false, "the output has " + std::to_string(out.values.size()) + " values"};
  error_tally tally;
  for (std::size_t i = 0; i < n; ++i) tally.add(out.values[i], a[i] + b[i], 0.0);
  return tally.result("sums");
}

std::unique_ptr<workload> make_vecadd(std::size_t n) {
  vecadd_problem p;
  p.n = n;
  p.a = uniform_floats(n, 0x5eed0001, -1.0f, 1.0f);
  p.b = uniform_floats(n, 0x5eed0002, -1.0f, 1.0f);
  return std::make_unique<workload_over<vecadd_problem>>(
      std::move(p),
      host_sides<vecadd_problem>{vecadd_explicit, vecadd_shared, vecadd_managed, vecadd_managed_prefetch});
}

}  // namespace xf::shared_bench
