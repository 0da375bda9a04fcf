// The generator sources' framing: which elements of the stream frame o holds.
#include "operators/sources/generated_source.hpp"

#include "framework/core/errors.hpp"

namespace xf {

void generated_source::on_start(const operator_setup& setup) {
  name_ = setup.name;
  const topic_info& out = source_output_topic(setup);
  element_ = out.element;
  const std::uint64_t element_bytes = size_of(element_);
  if (params_.total_bytes % element_bytes != 0) {
    throw run_error({setup.name, out.name, std::nullopt},
                    "total_bytes " + std::to_string(params_.total_bytes) + " is not a multiple of the " +
                        std::string(name_of(element_)) + " element size (" + std::to_string(element_bytes) +
                        " bytes)");
  }
  geometry_ = {out.frame_bytes, params_.total_bytes};
}

bool generated_source::produce(std::uint64_t offset, frame_out& out) {
  frame_span span;
  if (!geometry_.frame_at(offset, span)) return false;
  fill_content(offset, span.bytes, out);
  return true;
}

void generated_source::fill_content(std::uint64_t content_frame, std::uint64_t bytes, frame_out& out) const {
  XF_EXPECTS(out.capacity >= bytes, "a source's output frame must hold the topic's frame size");
  const std::uint64_t element_bytes = size_of(element_);
  content::fill(generator_, element_, out.data, bytes / element_bytes, params_.seed,
                content_frame * (geometry_.frame_bytes / element_bytes));
  out.bytes = bytes;
}

}  // namespace xf
