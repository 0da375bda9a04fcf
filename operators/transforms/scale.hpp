// scale: the simplest data-bound GPU map, out = in · factor, for every element type.
#pragma once

#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"
#include "operators/transforms/element_map.hpp"
#include "operators/transforms/element_math.hpp"

namespace xf {

/// out[i] = in[i] · T(factor), computed in the element type T. Integer topics: T(factor) is the factor
/// truncated toward zero and reduced modulo 2^bits (element_math::element_from_real: 2.5 → 2, -1 → all
/// ones), and the product wraps around — use integral factors there. Floating topics: one rounding in T.
struct scale_op {
  static constexpr char class_name[] = "scale";

  struct params {
    double factor = 2.0;
  };

  static void describe(operator_schema<params>& s) {
    s.describe(
        "multiplies every element by a constant in the element type (integer topics: the factor truncated to "
        "an integer, wrap-around product)");
    s.param(&params::factor, "factor", "multiplier applied to every element", params{}.factor);
  }

  template <class T>
  XF_HOST_DEVICE static void compute(const params& p, const frame_task<T>& task) {
    const T factor = element_math::element_from_real<T>(p.factor);
    map_elements(task, [factor](auto& v, unsigned) {
      XF_UNROLL
      for (auto& x : v) x = element_math::mul(x, factor);
    });
  }
};

}  // namespace xf
