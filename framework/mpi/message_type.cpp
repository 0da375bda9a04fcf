// The message type's caches: the plan, overlaps per count, the device copy on first use.
#include "framework/mpi/message_type.hpp"

#include "framework/core/errors.hpp"
#include "framework/datatype/pack.hpp"
#if XF_HAVE_CUDA
#include "framework/datatype/device_type.hpp"
#endif

namespace xf::mpi {

message_type::message_type(const dt::datatype& t)
    : type_(t), committed_(dt::commit(t)), plan_(dt::plan_packing(committed_)) {}

std::optional<std::int64_t> message_type::overlap(std::int64_t count) const {
  const auto found = overlaps_.find(count);
  if (found != overlaps_.end()) return found->second;
  const std::optional<std::int64_t> at = dt::first_overlap(committed_, count);
  overlaps_.emplace(count, at);
  return at;
}

const dt::device_type& message_type::device() const {
#if XF_HAVE_CUDA
  if (!device_) device_ = std::make_shared<const dt::device_type>(committed_);
  return *device_;
#else
  throw precondition_error("message_type::device: this build has no CUDA");
#endif
}

}  // namespace xf::mpi
