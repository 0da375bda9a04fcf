// Topics in CUDA unified memory with a coherence policy per layer (the XeFlow paper's §4.2): what the GPU
// executor runs on. The `placed` policies put each region with the side topic.cpp names (cudaMemAdvise
// preferred location + accessed-by for the other side, so the other side's accesses are remote loads and
// stores that never migrate pages); `naive` leaves plain managed memory, whose pages migrate on faults — the
// baseline of the paper's ablation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

#include "topics/coherence_spec.hpp"
#include "topics/topic_memory.hpp"

namespace xf {

class managed_topic_memory final : public topic_memory {
 public:
  /// `budget_bytes` bounds the managed memory this object hands out (the caller derives it from the
  /// device's free memory, so nothing can oversubscribe the card); `device` is the CUDA ordinal.
  managed_topic_memory(coherence_spec policy, int device, std::uint64_t budget_bytes);

  void* allocate(std::size_t bytes, topic_layer layer, memory_side side) override;
  void deallocate(void* p, std::size_t bytes, topic_layer layer) noexcept override;
  void place(void* p, std::size_t bytes, topic_layer layer, memory_side side) override;
  bool device_accessible() const noexcept override { return true; }
  std::string_view name() const noexcept override { return "managed"; }

  /// Moves every region placed on the device there before the run starts (the host zero-filled them),
  /// so the kernel's first touches do not fault. Synchronous.
  void settle();

  std::uint64_t bytes_in_use() const noexcept { return in_use_; }
  const coherence_spec& policy() const noexcept { return policy_; }

 private:
  bool placed(topic_layer layer) const noexcept;

  struct region {
    void* p;
    std::size_t bytes;
  };

  coherence_spec policy_;
  int device_;
  std::vector<region> device_regions_;  ///< placed on the device: prefetched there by settle()
  std::vector<void*> pinned_regions_;   ///< memory_side::pinned_host: page-locked, not managed
  std::uint64_t budget_;
  std::uint64_t in_use_ = 0;
  std::mutex mutex_;
};

}  // namespace xf
