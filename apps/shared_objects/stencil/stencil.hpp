// The paper's 3D stencil (its Fig. 9): a 7-point stencil iterated over an edge³ volume of floats, two
// volumes in turn. After every time step the CPU introduces the source: it writes the volume's first plane
// (z = 0, edge² floats), a small part of an object the GPU owns otherwise. That is where lazy update,
// which must fetch the whole volume before the CPU may write any of it, and rolling update, which fetches
// only the blocks written, part ways.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "apps/shared_objects/stencil/stencil_kernels.hpp"
#include "apps/shared_objects/workload.hpp"

namespace xf::shared_bench {

struct stencil_problem {
  static constexpr std::string_view name = "stencil";
  std::size_t edge = 0;
  std::size_t iterations = 0;
  std::vector<float> initial;    ///< edge³: the volume at time 0
  std::vector<float> pattern;    ///< edge²: the source plane's shape
  std::vector<float> amplitude;  ///< per step: the source's strength

  std::size_t cells() const { return edge * edge * edge; }
  std::size_t plane() const { return edge * edge; }
  /// The source plane's cell i after step t, as the CPU writes it.
  float source(std::size_t t, std::size_t i) const { return pattern[i] * amplitude[t]; }

  std::vector<std::pair<std::string, std::uint64_t>> size() const {
    return {{"edge", edge}, {"iterations", iterations}};
  }
  std::uint64_t device_bytes() const { return 2 * cells() * sizeof(float); }
  std::size_t device_arrays() const { return 2; }
  std::uint64_t source_bytes() const { return (sizeof(float) + 2 * sizeof(double)) * cells(); }
  /// Every cell against a double-precision run of the same steps (on every CPU core, once per problem). The
  /// float steps are an average with positive weights, so a step adds at most about 8 roundings of the
  /// largest value M (the inputs' largest magnitude bounds every value) and passes earlier errors on without
  /// growing them: after T steps |error| ≤ 8·T·u·M. Passes within twice that, 16·T·u·M.
  check_result check(const output& out, bool thorough) const;

 private:
  /// The double-precision result, computed by the first check (the benchmark's thread only).
  mutable std::vector<double> reference_;
};

void stencil_explicit(run_context& ctx, const stencil_problem& p, output& out);
void stencil_shared(run_context& ctx, const stencil_problem& p, output& out);
void stencil_managed(run_context& ctx, const stencil_problem& p, output& out);
void stencil_managed_prefetch(run_context& ctx, const stencil_problem& p, output& out);

std::unique_ptr<workload> make_stencil(std::size_t edge, std::size_t iterations);

}  // namespace xf::shared_bench
