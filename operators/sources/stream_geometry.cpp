// Checks shared by the sources: the output topic they frame their stream by.
#include "operators/sources/stream_geometry.hpp"

#include <string>

#include "framework/core/errors.hpp"

namespace xf {

const topic_info& source_output_topic(const operator_setup& setup) {
  if (setup.outputs.empty())
    throw run_error({setup.name, "", std::nullopt}, "a source needs an output topic");
  const topic_info& out = setup.outputs.front();
  const std::uint64_t element_bytes = size_of(out.element);
  if (out.frame_bytes == 0 || out.frame_bytes % element_bytes != 0) {
    throw run_error({setup.name, out.name, std::nullopt},
                    "frame size " + std::to_string(out.frame_bytes) + " is not a positive multiple of the " +
                        std::string(name_of(out.element)) + " element size (" +
                        std::to_string(element_bytes) + " bytes)");
  }
  return out;
}

}  // namespace xf
