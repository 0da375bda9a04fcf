// This launcher's GPU operators: the built-in ones plus its own, one list. main.cpp registers them by it
// and custom_kernel.cu fuses them by it into the launcher's kernel.
#pragma once

#include <xeflow/launcher.hpp>

#include "clamp_op.hpp"
#include "golden_diff_op.hpp"

namespace example {
using custom_gpu_operators = xf::gpu_operator_list<xf::builtin_gpu_operators, clamp_op, golden_diff_op>;
}  // namespace example
