// An example GPU operator written outside the framework: clamps every element into [low, high].
// It is a plain struct with trivially copyable params and a __host__ __device__ compute over one frame
// with virtual thread ids, so the same code runs in the GPU kernel and on the host executor. Its loop is
// xf::map_elements: each virtual thread keeps several 16-byte loads in flight, which is what makes an
// element-wise map fast with few warps (operators/transforms/element_map.hpp says why).
#pragma once

#include <xeflow/operator.hpp>

namespace example {

struct clamp_op {
  static constexpr char class_name[] = "clamp";

  struct params {
    double low = 0;
    double high = 1e6;
  };

  static void describe(xf::operator_schema<params>& s) {
    s.describe("clamps every element into [low, high] (example GPU operator from apps/)");
    s.param(&params::low, "low", "smallest value kept", 0.0);
    s.param(&params::high, "high", "largest value kept", 1e6);
  }

  template <class T>
  XF_HOST_DEVICE static void compute(const params& p, const xf::frame_task<T>& task) {
    const T low = static_cast<T>(p.low);
    const T high = static_cast<T>(p.high);
    xf::map_elements(task, [low, high](auto& v, unsigned) {
      XF_UNROLL
      for (auto& x : v) x = x < low ? low : (x > high ? high : x);
    });
  }
};

}  // namespace example
