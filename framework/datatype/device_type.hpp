// A committed type on the GPU: its serialized bytes and its packing plan's offset tables copied to device
// memory once, which every gpu_pack and gpu_unpack of the type then reads (the kernels load its records
// into shared memory). The host object owns the device copy; kernels get a serialized_view of it.
#pragma once

#include <cstdint>

#include "framework/core/cuda_buffer.hpp"
#include "framework/datatype/committed_type.hpp"
#include "framework/datatype/pack_plan.hpp"

namespace xf::dt {

/// What the packing paths need to know about the device a type was uploaded to, read once.
struct device_limits {
  int device = 0;
  int sm_count = 0;
  int max_threads_per_sm = 0;
  int max_threads_per_block = 0;
  std::int64_t max_pitch = 0;           ///< cudaDevAttrMaxPitch: the copy engine's 2D/3D pitch limit
  bool pageable_memory_access = false;  ///< kernels may read and write pageable host memory
};

/// The device's copy of a committed type, made once per type and kept for as long as the type is packed
/// (a cache of it on the device). Move-only; the destructor frees the device memory and never throws.
/// Immutable once built: any number of threads and streams may pack with it at once.
class device_type {
 public:
  /// Plans the type's packing (plan_packing) and copies its serialized bytes and the plan's offset tables
  /// into device memory of the current device, synchronously: the copy is done when it returns, for kernels
  /// on any stream. It waits for the legacy default stream (not for non-blocking streams). Throws
  /// cuda_error naming the call that failed.
  explicit device_type(committed_type t, const plan_options& plan = {});

  const committed_type& host() const noexcept { return type_; }
  const pack_plan& plan() const noexcept { return plan_; }
  const device_limits& limits() const noexcept { return limits_; }
  /// The records and lookaside in device memory: what a kernel's traversal reads.
  serialized_view device_view() const noexcept { return view_; }
  /// The plan's table dimensions' byte offsets in device memory (pack_plan::tables, same indices).
  const std::int64_t* device_tables() const noexcept { return tables_; }
  /// Bytes of device memory the copy holds.
  std::int64_t device_bytes() const noexcept { return static_cast<std::int64_t>(words_.size() * 8); }
  /// Unique to this upload in the process (a move keeps it): with the object's address, what tells a
  /// plan made for this type from one made for another type later built at the same address.
  std::uint64_t serial() const noexcept { return serial_; }

 private:
  committed_type type_;
  pack_plan plan_;
  device_limits limits_;
  device_buffer<std::int64_t> words_;  // the serialized words, then the tables
  serialized_view view_{};
  const std::int64_t* tables_ = nullptr;
  std::uint64_t serial_ = 0;
};

}  // namespace xf::dt
