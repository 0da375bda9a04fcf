// An example CPU sink written outside the framework: sums every byte it receives and reports the frames,
// bytes and sum as its end-of-run counters. With `threads: N` its on_frame runs on N threads at once, so
// its totals are atomics; on_start and on_stop bracket the run.
#pragma once

#include <atomic>
#include <cstdint>
#include <xeflow/operator.hpp>

namespace example {

class byte_sum_op final : public xf::cpu_sink {
 public:
  struct params {
    std::int64_t expect_frames = 0;
  };

  static void describe(xf::operator_schema<params>& s) {
    s.describe("sums the bytes of every frame; counters frames, bytes, sum (example CPU sink from apps/)");
    s.param(&params::expect_frames, "expect_frames",
            "frames the stream must hold: a different count fails the run at its end (0: any)",
            std::int64_t{0}, 0);
  }

  explicit byte_sum_op(const params& p) : expect_(static_cast<std::uint64_t>(p.expect_frames)) {}

  void on_start(const xf::operator_setup& setup) override { interrupted_ = setup.interrupted; }

  void on_frame(std::uint64_t, const xf::frame_in& in) override {
    std::uint64_t sum = 0;
    for (std::uint64_t i = 0; i < in.bytes; ++i) sum += static_cast<std::uint8_t>(in.data[i]);
    frames_.fetch_add(1, std::memory_order_relaxed);
    bytes_.fetch_add(in.bytes, std::memory_order_relaxed);
    sum_.fetch_add(sum, std::memory_order_relaxed);
  }

  // Throwing from on_stop fails the run with the operator named; an interrupted run ends early by design.
  void on_stop() override {
    const bool interrupted = interrupted_ != nullptr && interrupted_->load();
    if (expect_ != 0 && !interrupted && frames_.load() != expect_)
      throw std::runtime_error("received " + std::to_string(frames_.load()) + " frames, expected " +
                               std::to_string(expect_));
  }

  xf::operator_counters counters() const override {
    return {{"frames", frames_.load()}, {"bytes", bytes_.load()}, {"sum", sum_.load()}};
  }

 private:
  std::uint64_t expect_;
  const std::atomic<bool>* interrupted_ = nullptr;
  std::atomic<std::uint64_t> frames_{0}, bytes_{0}, sum_{0};
};

}  // namespace example
