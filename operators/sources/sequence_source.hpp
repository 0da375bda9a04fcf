// sequence_source: a stream whose element at global index i is seed + i (operators/frame_content.hpp),
// so a corrupt, lost or misplaced frame is visible by eye as well as to a verify sink.
#pragma once

#include "framework/model/operator_schema.hpp"
#include "operators/sources/generated_source.hpp"

namespace xf {

class sequence_source final : public generated_source {
 public:
  using params = generated_stream_params;

  static void describe(operator_schema<params>& s) {
    s.describe(
        "counting stream: element i of the whole stream is seed + i in the topic's element type (integers "
        "wrap "
        "around; floats hold the integer value, exact up to 2^24 for f32 and 2^53 for f64)");
    s.bytes(&params::total_bytes, "total_bytes",
            "stream length in bytes; a multiple of the element size; the last frame may be short",
            params{}.total_bytes);
    s.param(&params::seed, "seed", "value of the stream's first element", params{}.seed);
  }

  explicit sequence_source(const params& p) : generated_source(content::generator::sequence, p) {}
};

}  // namespace xf
