// The managed memory booked against the GPU's free memory (host_memory.hpp).
#include "apps/shared_objects/host_memory.hpp"

#include <atomic>
#include <stdexcept>
#include <string>

#include "framework/core/units.hpp"

namespace xf::shared_bench {
namespace {

std::atomic<std::size_t> booked_managed{0};

/// Left free beside the managed memory: the context, the kernels' own allocations, the library's objects.
constexpr std::size_t managed_headroom = 512 * MiB;

}  // namespace

void book_managed(std::size_t bytes) {
  std::size_t free_bytes = 0, total_bytes = 0;
  XF_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t booked = booked_managed.load();
  if (booked + bytes + managed_headroom > free_bytes)
    throw std::runtime_error("managed memory: " + format_bytes(bytes) + " more (" + format_bytes(booked) +
                             " already allocated, " + format_bytes(managed_headroom) +
                             " kept free) would exceed the GPU's free memory (" + format_bytes(free_bytes) +
                             " of " + format_bytes(total_bytes) + "): choose smaller sizes");
  booked_managed.fetch_add(bytes);
}

void unbook_managed(std::size_t bytes) noexcept {
  booked_managed.fetch_sub(bytes);
}

cudaMemLocation gpu_location(int device) {
  cudaMemLocation l{};
  l.type = cudaMemLocationTypeDevice;
  l.id = device;
  return l;
}

cudaMemLocation cpu_location() {
  cudaMemLocation l{};
  l.type = cudaMemLocationTypeHost;
  l.id = 0;  // ignored for the host type
  return l;
}

}  // namespace xf::shared_bench
