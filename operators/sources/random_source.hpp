// random_source: a stream of counter-based pseudo-random elements (splitmix64 of seed and global element
// index, operators/frame_content.hpp), so any thread can produce any frame and a verify sink can replay it.
#pragma once

#include "framework/model/operator_schema.hpp"
#include "operators/sources/generated_source.hpp"

namespace xf {

class random_source final : public generated_source {
 public:
  using params = generated_stream_params;

  static void describe(operator_schema<params>& s) {
    s.describe(
        "pseudo-random stream: element i is splitmix64(seed, i); integers take its low bits, f32/f64 are "
        "uniform in [0, 1)");
    s.bytes(&params::total_bytes, "total_bytes",
            "stream length in bytes; a multiple of the element size; the last frame may be short",
            params{}.total_bytes);
    s.param(&params::seed, "seed", "generator seed", params{}.seed);
  }

  explicit random_source(const params& p) : generated_source(content::generator::random, p) {}
};

}  // namespace xf
