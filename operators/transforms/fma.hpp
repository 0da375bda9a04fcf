// fma: FMA-x from the XeFlow paper, the knob between data-bound and compute-bound maps: each element goes
// through `iterations` dependent multiply-adds.
#pragma once

#include <cstdint>
#include <limits>

#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"
#include "operators/transforms/element_map.hpp"
#include "operators/transforms/element_math.hpp"

namespace xf {

/// v = in[i]; repeat `iterations` times: v = v·a + b; out[i] = v. Floating types use one fused rounding
/// per step (std::fma on the host, ::fma/::fmaf on the device: bit-identical). Integer types compute
/// v·A + B with wrap-around in the element type, A and B being a and b truncated to integers
/// (element_math::element_from_real) — so the defaults (a = 1.0001, b = 0.5) leave integer frames unchanged;
/// give integral a and b for integer topics.
struct fma_op {
  static constexpr char class_name[] = "fma";

  /// Bounds of `iterations`: at least one step; at most what keeps one frame's work per warp bounded.
  static constexpr std::uint32_t min_iterations = 1;
  static constexpr std::uint32_t max_iterations = 4096;

  struct params {
    std::uint32_t iterations = 16;
    double a = 1.0001;
    double b = 0.5;
    /// From this frame offset on, `iterations_after` steps instead (0: never): an operator whose cost
    /// changes mid-stream, for the online re-tuning benchmark and tests.
    std::int64_t switch_offset = 0;
    std::uint32_t iterations_after = 64;
  };

  static void describe(operator_schema<params>& s) {
    s.describe(
        "FMA-x: v = v*a + b repeated `iterations` times per element (fused for floats, wrap-around "
        "with a and b truncated for integers)");
    s.param(&params::iterations, "iterations", "multiply-adds per element (arithmetic intensity)",
            params{}.iterations, min_iterations, max_iterations);
    s.param(&params::a, "a", "multiplier of each step", params{}.a);
    s.param(&params::b, "b", "addend of each step", params{}.b);
    s.param(&params::switch_offset, "switch_offset",
            "frame offset from which iterations_after applies (0: never; a cost that changes mid-stream)",
            params{}.switch_offset, 0);
    s.param(&params::iterations_after, "iterations_after", "multiply-adds per element from switch_offset on",
            params{}.iterations_after, min_iterations, max_iterations);
  }

  /// Two phases when the cost switches: frames before switch_offset and from it on (verify sinks cache
  /// each phase's checksums apart).
  static map_phases phases(const params& p) {
    if (p.switch_offset <= 0) return {};
    const auto from = static_cast<std::uint64_t>(p.switch_offset);
    return {2, [from](std::uint64_t offset) { return offset >= from ? 1u : 0u; }};
  }

  template <class T>
  XF_HOST_DEVICE static void compute(const params& p, const frame_task<T>& task) {
    const T a = element_math::element_from_real<T>(p.a);
    const T b = element_math::element_from_real<T>(p.b);
    const std::uint32_t iterations =
        p.switch_offset > 0 && task.offset >= static_cast<std::uint64_t>(p.switch_offset) ? p.iterations_after
                                                                                          : p.iterations;
    // The steps outside, the elements inside: a thread's elements are independent chains that the
    // scheduler interleaves, so FMA-x costs its arithmetic rather than x times the FMA latency.
    map_elements(task, [a, b, iterations](auto& v, unsigned) {
      for (std::uint32_t k = 0; k < iterations; ++k) {
        XF_UNROLL
        for (auto& x : v) x = element_math::mul_add(x, a, b);
      }
    });
  }
};

}  // namespace xf
