// The 3D stencil's inputs and its CPU reference (stencil.hpp).
#include "apps/shared_objects/stencil/stencil.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

#include "apps/shared_objects/inputs.hpp"

namespace xf::shared_bench {
namespace {

/// One step of the kernel's arithmetic in double, on planes [z_begin, z_end).
void reference_step(const std::vector<double>& in, std::vector<double>& out, std::size_t edge,
                    std::size_t z_begin, std::size_t z_end) {
  const double centre = stencil_centre, neighbour = stencil_neighbour;  // the float coefficients, exactly
  const std::size_t row = edge, plane = edge * edge;
  for (std::size_t z = z_begin; z < z_end; ++z)
    for (std::size_t y = 0; y < edge; ++y)
      for (std::size_t x = 0; x < edge; ++x) {
        const std::size_t c = z * plane + y * row + x;
        if (x == 0 || y == 0 || z == 0 || x + 1 == edge || y + 1 == edge || z + 1 == edge) {
          out[c] = in[c];
          continue;
        }
        const double sum = in[c - 1] + in[c + 1] + in[c - row] + in[c + row] + in[c - plane] + in[c + plane];
        out[c] = centre * in[c] + neighbour * sum;
      }
}

}  // namespace

check_result stencil_problem::check(const output& out, bool) const {
  if (out.values.size() != cells())
    return {false, "the output has " + std::to_string(out.values.size()) + " values"};
  if (reference_.empty()) {
    std::vector<double> current(initial.begin(), initial.end()), next(cells());
    const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, edge);
    for (std::size_t t = 0; t < iterations; ++t) {
      std::vector<std::thread> team;
      for (std::size_t k = 0; k < threads; ++k)
        team.emplace_back(
            [&, k] { reference_step(current, next, edge, edge * k / threads, edge * (k + 1) / threads); });
      for (auto& member : team) member.join();
      for (std::size_t i = 0; i < plane(); ++i) next[i] = source(t, i);
      std::swap(current, next);
    }
    reference_ = std::move(current);
  }
  double largest = 0;
  for (float v : initial) largest = std::max(largest, std::fabs(static_cast<double>(v)));
  for (std::size_t t = 0; t < iterations; ++t)
    for (std::size_t i = 0; i < plane(); ++i)
      largest = std::max(largest, std::fabs(static_cast<double>(source(t, i))));
  const double bound = 16.0 * static_cast<double>(iterations) * float_roundoff * largest;
  error_tally tally;
  for (std::size_t i = 0; i < cells(); ++i) tally.add(out.values[i], reference_[i], bound);
  return tally.result("cells");
}

std::unique_ptr<workload> make_stencil(std::size_t edge, std::size_t iterations) {
  stencil_problem p;
  p.edge = edge;
  p.iterations = iterations;
  p.initial = uniform_floats(p.cells(), 0x5eed0101, 0.0f, 1.0f);
  p.pattern = uniform_floats(p.plane(), 0x5eed0102, 0.5f, 1.0f);
  p.amplitude.resize(iterations);
  // An emitter that oscillates: each step's plane differs from the last.
  for (std::size_t t = 0; t < iterations; ++t)
    p.amplitude[t] = static_cast<float>(1.0 + 0.5 * std::sin(0.3 * static_cast<double>(t)));
  return std::make_unique<workload_over<stencil_problem>>(
      std::move(p), host_sides<stencil_problem>{stencil_explicit, stencil_shared, stencil_managed,
                                                stencil_managed_prefetch});
}

}  // namespace xf::shared_bench
