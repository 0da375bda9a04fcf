// pass_through: a GPU map that copies its input, the baseline for measuring the framework's own cost.
#pragma once

#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"
#include "operators/transforms/element_map.hpp"

namespace xf {

/// out[i] = in[i].
struct pass_through_op {
  static constexpr char class_name[] = "pass_through";

  struct params {};

  static void describe(operator_schema<params>& s) { s.describe("copies every frame unchanged"); }

  template <class T>
  XF_HOST_DEVICE static void compute(const params&, const frame_task<T>& task) {
    map_elements(task, [](auto&, unsigned) {});
  }
};

}  // namespace xf
