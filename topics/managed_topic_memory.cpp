// Managed memory for topics, placed per layer policy.
#include "topics/managed_topic_memory.hpp"

#include <cuda_runtime_api.h>

#include <cstring>
#include <string>

#include "framework/core/cuda_check.hpp"
#include "framework/core/units.hpp"

namespace xf {
namespace {

constexpr std::size_t page_bytes = 4096;

std::size_t round_up(std::size_t bytes) {
  return (bytes == 0 ? 1 : bytes + page_bytes - 1) / page_bytes * page_bytes;
}

cudaMemLocation location_of(memory_side side, int device) {
  cudaMemLocation where{};
  if (side == memory_side::device) {
    where.type = cudaMemLocationTypeDevice;
    where.id = device;
  } else {
    where.type = cudaMemLocationTypeHost;
    where.id = 0;
  }
  return where;
}

}  // namespace

managed_topic_memory::managed_topic_memory(coherence_spec policy, int device, std::uint64_t budget_bytes)
    : policy_(policy), device_(device), budget_(budget_bytes) {}

bool managed_topic_memory::placed(topic_layer layer) const noexcept {
  switch (layer) {
    case topic_layer::catalog:
      return policy_.catalog == catalog_policy::read_mostly;
    case topic_layer::index:
      return policy_.index == index_policy::placed;
    case topic_layer::frames:
      return policy_.frames == frames_policy::placed;
  }
  return false;
}

void* managed_topic_memory::allocate(std::size_t bytes, topic_layer layer, memory_side side) {
  const std::size_t rounded = round_up(bytes);
  if (side == memory_side::pinned_host) {
    // Not managed memory: no page of it ever moves, so it takes nothing from the device's budget.
    void* p = nullptr;
    XF_CUDA_TRY(cudaHostAlloc(&p, rounded, cudaHostAllocPortable));
    std::memset(p, 0, rounded);
    std::lock_guard lock(mutex_);
    pinned_regions_.push_back(p);
    return p;
  }
  {
    std::lock_guard lock(mutex_);
    if (in_use_ + rounded > budget_)
      throw std::runtime_error("topics need more managed memory than the GPU has free to back them (" +
                               format_bytes(in_use_ + rounded) + " asked, budget " + format_bytes(budget_) +
                               "): lower topic capacities or frame sizes");
    in_use_ += rounded;
  }
  void* p = nullptr;
  try {
    XF_CUDA_TRY(cudaMallocManaged(&p, rounded, cudaMemAttachGlobal));
    place(p, rounded, layer, side);
    std::memset(p, 0, rounded);  // first touch on the host; settle() moves device regions afterwards
  } catch (...) {
    if (p) cuda_ok(cudaFree(p));
    std::lock_guard lock(mutex_);
    in_use_ -= rounded;
    throw;
  }
  return p;
}

void managed_topic_memory::place(void* p, std::size_t bytes, topic_layer layer, memory_side side) {
  if (!placed(layer) || side == memory_side::pinned_host) return;
  const std::size_t rounded = round_up(bytes);
  if (layer == topic_layer::catalog) {
    // Read by both sides, written by the host before the run: a read-only replica on each.
    XF_CUDA_TRY(
        cudaMemAdvise(p, rounded, cudaMemAdviseSetReadMostly, location_of(memory_side::device, device_)));
    std::lock_guard lock(mutex_);
    device_regions_.push_back({p, rounded});  // settle() makes the GPU's replica
    return;
  }
  const memory_side other = side == memory_side::host ? memory_side::device : memory_side::host;
  XF_CUDA_TRY(cudaMemAdvise(p, rounded, cudaMemAdviseSetPreferredLocation, location_of(side, device_)));
  XF_CUDA_TRY(cudaMemAdvise(p, rounded, cudaMemAdviseSetAccessedBy, location_of(other, device_)));
  if (side == memory_side::device) {
    std::lock_guard lock(mutex_);
    device_regions_.push_back({p, rounded});
  }
}

void managed_topic_memory::settle() {
  std::lock_guard lock(mutex_);
  for (const auto& r : device_regions_)
    XF_CUDA_TRY(cudaMemPrefetchAsync(r.p, r.bytes, location_of(memory_side::device, device_), 0, nullptr));
  XF_CUDA_TRY(cudaStreamSynchronize(nullptr));
}

void managed_topic_memory::deallocate(void* p, std::size_t bytes, topic_layer) noexcept {
  const std::size_t rounded = round_up(bytes);
  {
    std::lock_guard lock(mutex_);
    if (std::erase(pinned_regions_, p) != 0) {
      cuda_ok(cudaFreeHost(p));
      return;
    }
  }
  {
    std::lock_guard lock(mutex_);
    std::erase_if(device_regions_, [&](const region& r) {
      return static_cast<std::byte*>(r.p) >= static_cast<std::byte*>(p) &&
             static_cast<std::byte*>(r.p) < static_cast<std::byte*>(p) + rounded;
    });
    in_use_ -= rounded;
  }
  cuda_ok(cudaFree(p));
}

}  // namespace xf
