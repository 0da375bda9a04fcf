// Operators that misbehave on purpose, for end-to-end tests of fault reporting.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "framework/operator.hpp"
#include "framework/operator_schema.hpp"

namespace xf::test {

/// A pass-through CPU map that throws when it reaches offset `at`.
class throw_at_op final : public cpu_map {
 public:
  struct params {
    std::int64_t at = 0;
  };
  static void describe(operator_schema<params>& s) {
    s.describe("copies frames; throws at offset `at` (tests)");
    s.param(&params::at, "at", "offset at which to throw", std::int64_t{0}, 0);
  }
  explicit throw_at_op(const params& p) : at_(static_cast<std::uint64_t>(p.at)) {}
  void on_frame(std::uint64_t offset, const frame_in& in, frame_out& out) override {
    if (offset == at_) throw std::runtime_error("deliberate failure at offset " + std::to_string(offset));
    for (std::uint64_t i = 0; i < in.bytes; ++i) out.data[i] = in.data[i];
  }

 private:
  std::uint64_t at_;
};

/// A GPU map that corrupts element 0 of the frame at offset `at` — but only when run by more than one
/// virtual thread, i.e. in the kernel, not in a verify sink's one-thread replay: a corruption "in
/// transit" that the verify sink must catch.
struct corrupt_at_op {
  struct params {
    std::int64_t at = 0;
  };
  static void describe(operator_schema<params>& s) {
    s.describe("copies frames; flips element 0 of the frame at offset `at` (tests)");
    s.param(&params::at, "at", "offset whose frame is corrupted", std::int64_t{0}, 0);
  }
  template <class T>
  XF_HOST_DEVICE static void compute(const params& p, const frame_task<T>& task) {
    for (std::uint64_t i = task.thread_id; i < task.count; i += task.thread_count)
      task.out[i] = (i == 0 && task.thread_count > 1 && task.offset == static_cast<std::uint64_t>(p.at)) ? static_cast<T>(task.in[i] + 1)
                                                                                 : task.in[i];
  }
};

}  // namespace xf::test
