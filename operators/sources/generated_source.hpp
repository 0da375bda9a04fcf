// The base of the generator sources (sequence_, random_, dataset_source): a stream of `total_bytes` whose
// element values come from operators/frame_content.hpp, framed by the output topic's frame size.
#pragma once

#include <cstdint>
#include <string>

#include "framework/model/operator.hpp"
#include "operators/frame_content.hpp"
#include "operators/sources/stream_geometry.hpp"

namespace xf {

/// Parameters shared by the generator sources.
struct generated_stream_params {
  std::uint64_t total_bytes = std::uint64_t{1} << 30;  ///< default 1 GiB
  std::int64_t seed = 0;
};

/// Produces frame o = elements [o·E, o·E + n) of the generator's stream, E = elements per frame, n the
/// frame's element count (the last frame may be short). produce is const in effect after on_start and
/// safe to call from any number of threads at once.
class generated_source : public cpu_source {
 public:
  generated_source(content::generator generator, const generated_stream_params& p)
      : generator_(generator), params_(p) {}

  /// Reads the frame size and element type of outputs[0]. Throws run_error naming the operator when
  /// total_bytes is not a multiple of the element size (a stream of whole elements only).
  void on_start(const operator_setup& setup) override;
  bool produce(std::uint64_t offset, frame_out& out) override;

  const stream_geometry& geometry() const noexcept { return geometry_; }

 protected:
  /// Writes the first `bytes` bytes of the stream's frame `content_frame` (elements from
  /// content_frame·E on) at out.data and sets out.bytes. Does not check the stream's end: a derived
  /// source may put another frame's content at an offset (dataset_source repeats frames). Thread-safe.
  void fill_content(std::uint64_t content_frame, std::uint64_t bytes, frame_out& out) const;

 private:
  content::generator generator_;
  generated_stream_params params_;
  std::string name_;
  element_type element_ = element_type::u8;
  stream_geometry geometry_;
};

}  // namespace xf
