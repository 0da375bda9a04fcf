// What the rule of gpu_pack weighs for a plain strided block: the copy engine moves a cudaMemcpy2D/3D row
// by row, at a cost per row, while a packing kernel pays a launch and then moves bytes. Neither wins
// everywhere: measured across PCIe, a copy of 32-byte rows beats the kernel at 64 KiB (its call costs less
// than a launch) and loses to it 2x at 4 MiB (131 072 rows); device to device the copy wins only small
// blocks of wide rows, by about a microsecond.
#pragma once

#include <algorithm>
#include <cstdint>

namespace xf::dt {

/// Each path's time for `rows` rows of `bytes` bytes in all, in microseconds.
struct pack_costs {
  double copy_call_us = 0;     ///< a copy's time beyond its rows and bytes
  double copy_row_ns = 0;      ///< per row, where the rows rather than the bytes bound the copy
  double copy_gb_per_s = 1;    ///< where the bytes bound it
  double kernel_call_us = 0;   ///< a packing kernel's launch and its first and last wave
  double kernel_gb_per_s = 1;  ///< the kernel's bytes
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
  friend bool operator==(const pack_costs&, const pack_costs&) = default;
};

/// Where one side is host memory. Fitted to xeflow-datatype-bench's fig5 (a vector of doubles to pinned
/// host memory, rows of 8 B to 4 KiB, 64 KiB to 4 MiB packed) on Hopper GPUs over PCIe Gen5: they choose
/// the faster path, or one within 5% of it, at every one of those points. The kernel's bytes cross the link.
inline constexpr pack_costs pcie_pack_costs{6.5, 1.25, 55.3, 10.5, 52.6, 0.05};

/// Where both sides are device memory. Fitted to the same fig5 to device memory on an H100 and an H200:
/// the copy (10.4 µs + rows × 0.6 ns) is chosen for blocks up to a few hundred KiB of rows of 64 B or
/// more, where it measured 0.3-1.3 µs faster than a launch; past that the kernel, which moves bytes at
/// the speed of device memory, wins (4 MiB of 512-byte rows: 18.6 µs by copy, 14.8 by kernel).
inline constexpr pack_costs device_pack_costs{10.4, 0.6, 600, 11.6, 2000, 0.05};

}  // namespace xf::dt
