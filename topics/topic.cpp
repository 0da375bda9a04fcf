// Allocation and layout of a topic's layers.
#include "topics/topic.hpp"

#include <algorithm>
#include <bit>

#include "framework/core/errors.hpp"

namespace xf {

namespace {
// slots, released, publisher words, end word, cursors, bitmap, frames.
constexpr std::size_t kMaxAllocations = 8;
}  // namespace

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
  // Validation refuses frames no machine holds; a spec that skipped it must not wrap the heap's size.
  std::uint64_t heap_bytes = 0;
  XF_EXPECTS(!__builtin_mul_overflow(config_.frame_bytes, std::uint64_t{config_.capacity}, &heap_bytes),
             "topic '" + config_.name + "': frame size x capacity is past 64 bits");
  try {
    const std::uint32_t heap_frames = config_.capacity;
    const std::uint32_t heap_words = (heap_frames + 63) / 64;
    view_.frame_bytes = config_.frame_bytes;
    view_.capacity = config_.capacity;
    view_.groups = config_.groups;
    view_.publishers = config_.publishers;
    view_.heap_frames = heap_frames;
    view_.heap_words = heap_words;
    // Where each region lives (one writer side per line across PCIe, and no word that both
    // sides read-modify-write):
    //  - what the publisher writes and subscribers read (slots, end word, frames), and what subscribers
    //    write and publishers read (released): on the device only when every party is on the GPU, else on
    //    the host, where CPU accesses are local and the GPU's are remote loads/stores (never migrations);
    //  - what one side alone read-modify-writes (claim/close words and heap bitmap: the publishers; each
    //    group's cursor: that group's workers): with that side.
    bool all_gpu = config_.publishers_on_gpu;
    for (std::uint32_t g = 0; g < config_.groups; ++g) all_gpu = all_gpu && group_on_gpu(g);
    const memory_side shared = all_gpu ? memory_side::device : memory_side::host;
    const memory_side publisher = config_.publishers_on_gpu ? memory_side::device : memory_side::host;

    view_.slots =
        static_cast<index_slot*>(take(sizeof(index_slot) * config_.capacity, topic_layer::index, shared));
    view_.released = static_cast<std::uint64_t*>(
        take(sizeof(std::uint64_t) * std::uint64_t{config_.groups} * config_.capacity, topic_layer::index,
             shared));
    auto* control = static_cast<padded_word*>(take(sizeof(padded_word) * 3, topic_layer::index, publisher));
    view_.claim = control + 0;
    view_.closed = control + 1;
    view_.end_max = control + 2;
    view_.end_offset = static_cast<padded_word*>(take(sizeof(padded_word), topic_layer::index, shared));
    view_.end_offset->value = no_offset;
    // Each group's cursor on a page of its own, so a GPU group's cursor can live on the device next to a
    // CPU group's on the host.
    view_.cursor_stride = static_cast<std::uint32_t>(frame_alignment_bytes / sizeof(padded_word));
    view_.group_cursor = static_cast<padded_word*>(
        take(frame_alignment_bytes * config_.groups, topic_layer::index, memory_side::host));
    view_.heap_bitmap =
        static_cast<std::uint64_t*>(take(sizeof(std::uint64_t) * heap_words, topic_layer::frames, publisher));
    view_.frames = static_cast<std::byte*>(
        take(heap_bytes, topic_layer::frames, config_.copy_engines ? memory_side::pinned_host : shared));
    start_at(config_.first_offset);
    for (std::uint32_t g = 0; g < config_.groups; ++g)
      if (group_on_gpu(g))
        memory_->place(view_.group_cursor + std::uint64_t{g} * view_.cursor_stride, frame_alignment_bytes,
                       topic_layer::index, memory_side::device);
  } catch (...) {
    for (std::size_t i = 0; i < allocation_count_; ++i)
      memory_->deallocate(allocations_[i].p, allocations_[i].bytes, allocations_[i].layer);
    throw;
  }
}

void topic::start_at(std::uint64_t first) {
  if (first == 0) return;  // freshly zeroed memory is the start at 0
  // Written before any worker or kernel exists (the memory's regions are not yet placed on the device),
  // so plain stores suffice: the threads' creation and the kernel's launch order them before every use.
  view_.claim->value = first;
  view_.end_max->value = first;
  for (std::uint32_t g = 0; g < config_.groups; ++g) {
    const std::uint64_t items =
        g < config_.group_items_per_offset.size() ? config_.group_items_per_offset[g] : std::uint64_t{1};
    view_.group_cursor[std::uint64_t{g} * view_.cursor_stride].value = first * items;
  }
  // slot_free(o) wants the release word of o's slot at o - capacity + 1: the offsets of the capacity below
  // `first` were, as far as the protocol can tell, published and released by every group. Their seq words
  // stay 0 (no frame to reclaim, and never mistaken for a later offset: o + 1 > first ≥ 1).
  const std::uint64_t lowest = first > config_.capacity ? first - config_.capacity : 0;
  for (std::uint64_t o = lowest; o < first; ++o)
    for (std::uint32_t g = 0; g < config_.groups; ++g)
      view_.released[std::uint64_t{g} * config_.capacity + view_.slot_of(o)] = o + 1;
}

void* topic::take(std::size_t bytes, topic_layer layer, memory_side side) {
  void* p = memory_->allocate(bytes, layer, side);
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

std::uint64_t topic::published_mark() const noexcept {
  std::uint64_t mark = config_.first_offset;
  for (std::uint32_t s = 0; s < view_.capacity; ++s) mark = std::max(mark, load_relaxed(view_.slots[s].seq));
  return mark;
}

std::uint64_t topic::released_mark(std::uint32_t g) const noexcept {
  std::uint64_t mark = 0;
  std::uint64_t* words = view_.released + std::uint64_t{g} * view_.capacity;
  for (std::uint32_t s = 0; s < view_.capacity; ++s) mark = std::max(mark, load_relaxed(words[s]));
  return mark;
}

}  // namespace xf
