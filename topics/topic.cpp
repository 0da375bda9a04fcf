// Allocation and layout of a topic's layers.
#include "topics/topic.hpp"

#include <bit>

#include "framework/errors.hpp"

namespace xf {

namespace {
constexpr std::size_t kMaxAllocations = 8;
}

topic::topic(topic_config config, topic_memory& memory)
    : config_(std::move(config)),
      memory_(&memory),
      counters_(std::make_unique<topic_counters>()),
      allocations_(std::make_unique<allocation[]>(kMaxAllocations)) {
  XF_EXPECTS(config_.frame_bytes > 0 && config_.frame_bytes % frame_alignment_bytes == 0,
             "topic '" + config_.name + "': frame size must be a positive multiple of 4 KiB");
  XF_EXPECTS(config_.capacity >= 1, "topic '" + config_.name + "': capacity must be at least 1");
  XF_EXPECTS(config_.groups >= 1, "topic '" + config_.name + "': needs at least one subscriber group");
  XF_EXPECTS(config_.publishers >= 1, "topic '" + config_.name + "': needs at least one publisher");
  try {
    const std::uint32_t heap_frames = config_.capacity;
    const std::uint32_t heap_words = (heap_frames + 63) / 64;
    view_.frame_bytes = config_.frame_bytes;
    view_.capacity = config_.capacity;
    view_.groups = config_.groups;
    view_.publishers = config_.publishers;
    view_.heap_frames = heap_frames;
    view_.heap_words = heap_words;
    // Offset index: publish-written slots apart from subscriber-written release words (one writer side
    // per page), and the small control words each on a line of their own.
    view_.slots = static_cast<index_slot*>(take(sizeof(index_slot) * config_.capacity, topic_layer::index));
    view_.released = static_cast<std::uint64_t*>(
        take(sizeof(std::uint64_t) * std::uint64_t{config_.groups} * config_.capacity, topic_layer::index));
    auto* control = static_cast<padded_word*>(take(sizeof(padded_word) * (4 + config_.groups), topic_layer::index));
    view_.claim = control + 0;
    view_.closed = control + 1;
    view_.end_max = control + 2;
    view_.end_offset = control + 3;
    view_.group_cursor = control + 4;
    view_.end_offset->value = no_offset;
    view_.heap_bitmap = static_cast<std::uint64_t*>(take(sizeof(std::uint64_t) * heap_words, topic_layer::frames));
    view_.frames = static_cast<std::byte*>(take(config_.frame_bytes * heap_frames, topic_layer::frames));
  } catch (...) {
    for (std::size_t i = 0; i < allocation_count_; ++i)
      memory_->deallocate(allocations_[i].p, allocations_[i].bytes, allocations_[i].layer);
    throw;
  }
}

void* topic::take(std::size_t bytes, topic_layer layer) {
  void* p = memory_->allocate(bytes, layer);
  allocations_[allocation_count_++] = {p, bytes, layer};
  return p;
}

topic::topic(topic&& other) noexcept
    : config_(std::move(other.config_)),
      memory_(other.memory_),
      view_(other.view_),
      counters_(std::move(other.counters_)),
      allocations_(std::move(other.allocations_)),
      allocation_count_(other.allocation_count_) {
  other.allocation_count_ = 0;
}

topic::~topic() {
  for (std::size_t i = 0; i < allocation_count_; ++i)
    memory_->deallocate(allocations_[i].p, allocations_[i].bytes, allocations_[i].layer);
}

std::uint32_t topic::frames_in_use() const noexcept {
  std::uint32_t used = 0;
  for (std::uint32_t w = 0; w < view_.heap_words; ++w)
    used += static_cast<std::uint32_t>(std::popcount(load_relaxed(view_.heap_bitmap[w])));
  return used;
}

}  // namespace xf
