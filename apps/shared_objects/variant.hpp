// The ways xeflow-shared-bench writes each workload's host side, every one launching the same kernels: the
// ADSM/GMAC paper's baseline (explicit copies), the shared objects under each coherence protocol, and CUDA
// managed memory with and without hints.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "framework/shared/coherence.hpp"

namespace xf::shared_bench {

enum class variant : std::uint8_t {
  explicit_copies,   ///< cudaMalloc, cudaMemcpy in and out, host copies in pageable memory (the paper's CUDA)
  explicit_pinned,   ///< the same host code with its host copies in pinned memory (cudaMallocHost)
  batch,             ///< shared objects, batch update
  lazy,              ///< shared objects, lazy update
  rolling,           ///< shared objects, rolling update
  managed,           ///< cudaMallocManaged, no hints: pages migrate on faults
  managed_prefetch,  ///< cudaMallocManaged with cudaMemAdvise and cudaMemPrefetchAsync
};

inline constexpr std::array all_variants = {
    variant::explicit_copies, variant::explicit_pinned, variant::batch,           variant::lazy,
    variant::rolling,         variant::managed,         variant::managed_prefetch};

constexpr std::string_view name_of(variant v) {
  switch (v) {
    case variant::explicit_copies:
      return "explicit";
    case variant::explicit_pinned:
      return "explicit-pinned";
    case variant::batch:
      return "batch";
    case variant::lazy:
      return "lazy";
    case variant::rolling:
      return "rolling";
    case variant::managed:
      return "managed";
    case variant::managed_prefetch:
      return "managed-prefetch";
  }
  return "?";
}

inline std::optional<variant> variant_named(std::string_view name) {
  for (variant v : all_variants)
    if (name_of(v) == name) return v;
  return std::nullopt;
}

constexpr bool uses_library(variant v) {
  return v == variant::batch || v == variant::lazy || v == variant::rolling;
}

constexpr bool uses_managed(variant v) {
  return v == variant::managed || v == variant::managed_prefetch;
}

/// The protocol of a library variant (batch for the others, never read).
constexpr shared::protocol protocol_of(variant v) {
  return v == variant::lazy      ? shared::protocol::lazy
         : v == variant::rolling ? shared::protocol::rolling
                                 : shared::protocol::batch;
}

}  // namespace xf::shared_bench
