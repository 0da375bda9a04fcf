// An example GPU operator written outside the framework: clamps every element into [low, high].
// It is a plain struct with trivially copyable params and a __host__ __device__ compute over one frame
// with virtual thread ids, so the same code runs in the GPU kernel and on the host executor.
#pragma once

#include "framework/exec_space.hpp"
#include "framework/operator.hpp"
#include "framework/operator_schema.hpp"

namespace example {

struct clamp_op {
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
    for (std::uint64_t i = task.thread_id; i < task.count; i += task.thread_count) {
      const T v = task.in[i];
      task.out[i] = v < low ? low : (v > high ? high : v);
    }
  }
};

}  // namespace example
