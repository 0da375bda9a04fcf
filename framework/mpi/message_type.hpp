// A datatype made ready for messages: committed once, its overlap check done once per count, and in CUDA
// builds its device copy uploaded on the first send or receive of device memory.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>

#include "framework/datatype/committed_type.hpp"
#include "framework/datatype/datatype.hpp"
#include "framework/datatype/pack_plan.hpp"

namespace xf::dt {
class device_type;
}

namespace xf::mpi {

/// What a messenger sends and receives by. Make one per datatype and keep it: commit, the overlap check of
/// a receive and the device upload are each paid once. Not thread-safe (the caches fill on first use); use
/// one per thread, or fill them first.
class message_type {
 public:
  explicit message_type(const dt::datatype& t);

  const dt::datatype& type() const noexcept { return type_; }
  const dt::committed_type& committed() const noexcept { return committed_; }
  /// The type's packing plan (dt::plan_packing), made once: the host route packs a strided plan by walking
  /// its shape.
  const dt::pack_plan& plan() const noexcept { return plan_; }

  /// dt::first_overlap of `count` instances, computed on the first call for that count: a receive into a
  /// type that names a byte twice is erroneous in MPI, and the messenger refuses it.
  std::optional<std::int64_t> overlap(std::int64_t count) const;

  /// The device copy (CUDA builds), uploaded to the current device on the first call. Throws cuda_error.
  const dt::device_type& device() const;

 private:
  dt::datatype type_;
  dt::committed_type committed_;
  dt::pack_plan plan_;
  mutable std::map<std::int64_t, std::optional<std::int64_t>> overlaps_;
  // shared_ptr: destroyable where device_type is incomplete (builds without CUDA never make one).
  mutable std::shared_ptr<const dt::device_type> device_;
};

}  // namespace xf::mpi
