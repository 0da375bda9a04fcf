// Vector addition, c = a + b: the paper's micro-benchmark for rolling update's block size (its Fig. 11) and
// the plainest case of moving inputs in and outputs out.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "apps/shared_objects/vecadd/vecadd_kernels.hpp"
#include "apps/shared_objects/workload.hpp"

namespace xf::shared_bench {

struct vecadd_problem {
  static constexpr std::string_view name = "vecadd";
  std::size_t n = 0;
  std::vector<float> a, b;  ///< the inputs as the program reads them

  std::vector<std::pair<std::string, std::uint64_t>> size() const { return {{"elements", n}}; }
  std::uint64_t device_bytes() const { return 3 * n * sizeof(float); }
  std::size_t device_arrays() const { return 3; }
  std::uint64_t source_bytes() const { return 3 * n * sizeof(float); }
  /// Every element: float addition is correctly rounded on both processors, so c must equal a + b exactly.
  check_result check(const output& out, bool thorough) const;
};

void vecadd_explicit(run_context& ctx, const vecadd_problem& p, output& out);
void vecadd_shared(run_context& ctx, const vecadd_problem& p, output& out);
void vecadd_managed(run_context& ctx, const vecadd_problem& p, output& out);
void vecadd_managed_prefetch(run_context& ctx, const vecadd_problem& p, output& out);

std::unique_ptr<workload> make_vecadd(std::size_t n);

}  // namespace xf::shared_bench
