// Where a topic's layers live. The host executor uses plain page-aligned host memory; the GPU executor
// supplies managed memory with a coherence policy per layer (catalog, offset index, frames).
#pragma once

#include <cstddef>
#include <string_view>

namespace xf {

enum class topic_layer : unsigned char { catalog, index, frames };

/// Which processor a region of a topic belongs with: the side that writes it when the other side only
/// reads it, the side that read-modify-writes it, or the device when nothing on the host touches it.
///
/// `pinned_host`: frames the copy engines move (copy_bridge.hpp): page-locked host memory, which the copy
/// engines read and write at full speed; the host uses it directly and the GPU only through the copies.
enum class memory_side : unsigned char { host, device, pinned_host };

/// Allocates zero-filled, 4 KiB-aligned memory for one layer of a topic. `side` says where the region
/// belongs (topic.cpp decides it from who writes and reads); an implementation with a coherence policy
/// for the layer places it there, and one without (plain host memory, or the `naive` policy) ignores it.
/// Implementations state whether the device can touch what they return.
class topic_memory {
 public:
  virtual ~topic_memory() = default;
  virtual void* allocate(std::size_t bytes, topic_layer layer, memory_side side) = 0;
  virtual void deallocate(void* p, std::size_t bytes, topic_layer layer) noexcept = 0;
  /// Moves a 4 KiB-aligned part of an allocation to `side` (a region that differs from its neighbours).
  virtual void place(void* p, std::size_t bytes, topic_layer layer, memory_side side) = 0;
  virtual bool device_accessible() const noexcept = 0;
  virtual std::string_view name() const noexcept = 0;
};

/// Page-aligned host memory: what the host executor runs on.
class host_topic_memory final : public topic_memory {
 public:
  void* allocate(std::size_t bytes, topic_layer layer, memory_side side) override;
  void deallocate(void* p, std::size_t bytes, topic_layer layer) noexcept override;
  void place(void*, std::size_t, topic_layer, memory_side) override {}
  bool device_accessible() const noexcept override { return false; }
  std::string_view name() const noexcept override { return "host"; }
};

}  // namespace xf
