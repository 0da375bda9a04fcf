// An example CPU operator written outside the framework: XORs every byte with a mask derived from the
// frame's offset, so each frame changes differently (and a verify sink downstream still replays it).
#pragma once

#include <cstdint>
#include <xeflow/operator.hpp>

namespace example {

class xor_mask_op final : public xf::cpu_map {
 public:
  struct params {
    std::int64_t mask = 0x5a;
  };

  static void describe(xf::operator_schema<params>& s) {
    s.describe("XORs every byte with (mask + offset) mod 256 (example CPU operator from apps/)");
    s.param(&params::mask, "mask", "base of the byte mask", std::int64_t{0x5a}, 0, 255);
  }

  explicit xor_mask_op(const params& p) : mask_(static_cast<std::uint8_t>(p.mask)) {}

  void on_frame(std::uint64_t offset, const xf::frame_in& in, xf::frame_out& out) override {
    const auto mask = static_cast<std::byte>((mask_ + offset) & 0xff);
    for (std::uint64_t i = 0; i < in.bytes; ++i) out.data[i] = in.data[i] ^ mask;
    out.bytes = in.bytes;
  }

 private:
  std::uint8_t mask_;
};

}  // namespace example
