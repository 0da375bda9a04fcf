// The coherence policy of each layer of a managed-memory topic: what the topic's memory does with each
// region (catalog, offset index, frames). Part of the topic, so the topology model refers to it, not the
// other way round.
#pragma once

#include <cstdint>
#include <string_view>

namespace xf {

/// Coherence policy of each layer of the GPU executor's topics (the XeFlow paper's §4.2).
/// Each layer's policy is switchable so the paper's ablation can be run; `naive` is plain managed memory
/// with no advice (pages migrate on faults), the baseline of that ablation.
enum class catalog_policy : std::uint8_t { naive, read_mostly };
enum class index_policy : std::uint8_t { naive, placed };
enum class frames_policy : std::uint8_t { naive, placed };
constexpr std::string_view name_of(catalog_policy p) {
  return p == catalog_policy::naive ? "naive" : "read_mostly";
}
constexpr std::string_view name_of(index_policy p) {
  return p == index_policy::naive ? "naive" : "placed";
}
constexpr std::string_view name_of(frames_policy p) {
  return p == frames_policy::naive ? "naive" : "placed";
}

/// The coherence settings of a run. Defaults: every layer tuned.
/// - catalog read_mostly: topic views, operator table and parameters get a read-only replica on the GPU.
/// - index placed: every offset-index word lives with the side that writes it when the other side only
///   reads it (the reader polls it remotely, no migration), and words both sides read-modify-write never
///   exist (topic_layout.hpp).
/// - frames placed: frames crossing PCIe stay in host memory and the GPU reads/writes them remotely
///   (51 GB/s remotely on the H100, against 6 GB/s when faults migrate the pages); GPU-to-GPU frames live on
///   the device.
struct coherence_spec {
  catalog_policy catalog = catalog_policy::read_mostly;
  index_policy index = index_policy::placed;
  frames_policy frames = frames_policy::placed;
  friend bool operator==(const coherence_spec&, const coherence_spec&) = default;
};

}  // namespace xf
