// What the rule of gpu_pack weighs for a strided block that crosses PCIe: the copy engine moves a
// cudaMemcpy2D/3D row by row, at a cost per row, while a packing kernel pays a launch and the link's
// bandwidth. Neither wins everywhere: measured, a copy of 32-byte rows beats the kernel at 64 KiB (its call
// costs less than a launch) and loses to it 2x at 4 MiB (131 072 rows).
#pragma once

#include <algorithm>
#include <cstdint>

namespace xf::dt {

/// Each path's time for `rows` rows of `bytes` bytes in all, in microseconds. The defaults are fitted to
/// xeflow-datatype-bench's fig5 (a vector of doubles to pinned host memory, rows of 8 B to 4 KiB, 64 KiB and
/// 4 MiB packed) on a Hopper GPU over PCIe Gen5: they choose the faster path, or one within 5% of it, at
/// every one of those points. bench/datatype prints, for each point, whether the rule chose well.
struct pcie_pack_costs {
  double copy_call_us = 6.5;      ///< a copy's time beyond its rows and bytes
  double copy_row_ns = 1.25;      ///< per row, where the rows rather than the bytes bound the copy
  double copy_gb_per_s = 55.3;    ///< where the bytes bound it
  double kernel_call_us = 10.5;   ///< a packing kernel's launch and its first and last wave
  double kernel_gb_per_s = 52.6;  ///< a kernel reading or writing host memory across the link
  /// The copy engine is chosen when its time is below the kernel's by at least this fraction: near the
  /// crossing, a copy bound by rows and bytes at once measured slower than the larger of the two.
  double copy_margin = 0.05;

  double copy_us(std::int64_t rows, std::int64_t bytes) const {
    return copy_call_us + std::max(static_cast<double>(rows) * copy_row_ns * 1e-3,
                                   static_cast<double>(bytes) / (copy_gb_per_s * 1e3));
  }
  double kernel_us(std::int64_t bytes) const {
    return kernel_call_us + static_cast<double>(bytes) / (kernel_gb_per_s * 1e3);
  }
  bool copy_engine_faster(std::int64_t rows, std::int64_t bytes) const {
    return copy_us(rows, bytes) * (1 + copy_margin) <= kernel_us(bytes);
  }
  friend bool operator==(const pcie_pack_costs&, const pcie_pack_costs&) = default;
};

}  // namespace xf::dt
