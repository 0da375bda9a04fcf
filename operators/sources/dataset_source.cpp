// dataset_source: resolving the dataset's period, and the in-place check that lets a publish skip the write.
#include "operators/sources/dataset_source.hpp"

#include <string>

#include "framework/core/errors.hpp"
#include "framework/core/single_writer.hpp"

namespace xf {

dataset_source::dataset_source(const params& p)
    : generated_source(content::generator::sequence, generated_stream_params{p.total_bytes, p.seed}),
      dataset_frames_param_(p.dataset_frames) {}

void dataset_source::on_start(const operator_setup& setup) {
  generated_source::on_start(setup);
  const topic_info& out = setup.outputs.front();  // generated_source::on_start checked it exists
  if (dataset_frames_param_ < 0) {
    throw run_error({setup.name, out.name, std::nullopt},
                    "dataset_frames " + std::to_string(dataset_frames_param_) + " is negative");
  }
  period_ = dataset_frames_param_ > 0 ? static_cast<std::uint64_t>(dataset_frames_param_) : out.capacity;
  if (period_ == 0) {
    throw run_error({setup.name, out.name, std::nullopt},
                    "dataset_frames is 0 (the output topic's capacity) but the topic has no capacity");
  }
  // The heap has `capacity` frames (topic.cpp); an index past it is never a topic frame and is written.
  held_count_ = out.capacity;
  held_ = std::make_unique<held_frame[]>(held_count_);
}

bool dataset_source::produce(std::uint64_t offset, frame_out& out) {
  frame_span span;
  if (!geometry().frame_at(offset, span)) return false;
  const std::uint64_t dataset_frame = offset % period_;
  publish_counts& counts = counts_.local();
  if (out.frame_index >= held_count_) {
    fill_content(dataset_frame, span.bytes, out);
    add_single_writer(counts.filled, 1);
    return true;
  }
  // Relaxed suffices: the heap frame passed from its previous publisher to us through the topic protocol
  // (subscribers' release, slot_free's acquire, the heap bitmap's acq_rel), which orders both the frame's
  // bytes and these stores before our loads. The atomics are for a misbehaving caller and for TSan.
  held_frame& held = held_[out.frame_index];
  // A longer prefix of the same dataset frame serves a short frame too (the last one of the stream).
  if (held.dataset_frame.load(std::memory_order_relaxed) == dataset_frame &&
      held.bytes.load(std::memory_order_relaxed) >= span.bytes) {
    XF_EXPECTS(out.capacity >= span.bytes, "a source's output frame must hold the topic's frame size");
    out.bytes = span.bytes;
    add_single_writer(counts.in_place, 1);
    return true;
  }
  // Forget the old content first: should the fill not complete, the frame holds nothing we would trust.
  held.dataset_frame.store(held_frame::nothing, std::memory_order_relaxed);
  fill_content(dataset_frame, span.bytes, out);
  held.bytes.store(span.bytes, std::memory_order_relaxed);
  held.dataset_frame.store(dataset_frame, std::memory_order_relaxed);
  add_single_writer(counts.filled, 1);
  return true;
}

bool dataset_source::expected(std::uint64_t offset, frame_out& out) const {
  out.bytes = 0;
  frame_span span;
  if (!geometry().frame_at(offset, span)) return false;
  fill_content(offset % period_, span.bytes, out);
  return true;
}

operator_counters dataset_source::counters() const {
  operator_counters c{{"frames_filled", 0}, {"frames_in_place", 0}};
  counts_.for_each([&](const publish_counts& s) {
    c["frames_filled"] += s.filled.load(std::memory_order_relaxed);
    c["frames_in_place"] += s.in_place.load(std::memory_order_relaxed);
  });
  return c;
}

}  // namespace xf
