// The launcher of vector addition's kernel (vecadd_kernels.cu), which every variant's host side calls.
#pragma once

#include <cstddef>

namespace xf::shared_bench {

/// c[i] = a[i] + b[i] for i < n, on the default stream.
void launch_vector_add(const float* a, const float* b, float* c, std::size_t n);

}  // namespace xf::shared_bench
