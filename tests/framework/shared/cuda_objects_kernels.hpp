// Host launchers of the shared objects' GPU test kernels (cuda_objects_kernels.cu).
#pragma once

#include <cstddef>

namespace xf::shared::test {

/// c[i] = a[i] + b[i] for i < n.
void launch_vector_add(const float* a, const float* b, float* c, std::size_t n);
/// p[i] += delta for i < n.
void launch_add_bytes(unsigned char* p, std::size_t n, unsigned char delta);

}  // namespace xf::shared::test
