// Where a topic's layers live. The host executor uses plain page-aligned host memory; the GPU executor
// supplies managed memory with a coherence policy per layer (catalog, offset index, frames).
#pragma once

#include <cstddef>
#include <string_view>

namespace xf {

enum class topic_layer : unsigned char { catalog, index, frames };

/// Allocates zero-filled, 4 KiB-aligned memory for one layer of a topic. Implementations state whether
/// the device can touch what they return.
class topic_memory {
 public:
  virtual ~topic_memory() = default;
  virtual void* allocate(std::size_t bytes, topic_layer layer) = 0;
  virtual void deallocate(void* p, std::size_t bytes, topic_layer layer) noexcept = 0;
  virtual bool device_accessible() const noexcept = 0;
  virtual std::string_view name() const noexcept = 0;
};

/// Page-aligned host memory: what the host executor runs on.
class host_topic_memory final : public topic_memory {
 public:
  void* allocate(std::size_t bytes, topic_layer layer) override;
  void deallocate(void* p, std::size_t bytes, topic_layer layer) noexcept override;
  bool device_accessible() const noexcept override { return false; }
  std::string_view name() const noexcept override { return "host"; }
};

}  // namespace xf
