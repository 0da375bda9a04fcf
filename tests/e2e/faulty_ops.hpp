// Operators that misbehave on purpose, for end-to-end tests of fault reporting.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"

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
  static constexpr char class_name[] = "corrupt_at";
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
      task.out[i] = (i == 0 && task.thread_count > 1 && task.offset == static_cast<std::uint64_t>(p.at))
                        ? static_cast<T>(task.in[i] + 1)
                        : task.in[i];
  }
};

/// A GPU map that copies frames and fails the frame at offset `at` with `code` (frame_task::fail): the
/// run must end cleanly naming the operator, topic, offset and code, on either executor.
struct fail_at_op {
  static constexpr char class_name[] = "fail_at";
  struct params {
    std::int64_t at = 0;
    std::int64_t code = 7;
  };
  static void describe(operator_schema<params>& s) {
    s.describe("copies frames; fails the frame at offset `at` with `code` (tests)");
    s.param(&params::at, "at", "offset whose frame fails", std::int64_t{0}, 0);
    s.param(&params::code, "code", "the failure code", std::int64_t{7}, 0, 0xffffffff);
  }
  template <class T>
  XF_HOST_DEVICE static void compute(const params& p, const frame_task<T>& task) {
    if (task.offset == static_cast<std::uint64_t>(p.at) && task.thread_id == 0)
      task.fail(static_cast<std::uint32_t>(p.code));
    for (std::uint64_t i = task.thread_id; i < task.count; i += task.thread_count) task.out[i] = task.in[i];
  }
};

/// A GPU map that never returns from the frame at offset `at`: the device executor's watchdog must end
/// the run with a per-block dump. Device tests only (on the host executor it would hang a block thread).
struct hang_at_op {
  static constexpr char class_name[] = "hang_at";
  struct params {
    std::int64_t at = 0;
  };
  static void describe(operator_schema<params>& s) {
    s.describe("copies frames; never finishes the frame at offset `at` (GPU watchdog tests)");
    s.param(&params::at, "at", "offset whose frame hangs", std::int64_t{0}, 0);
  }
  template <class T>
  XF_HOST_DEVICE static void compute(const params& p, const frame_task<T>& task) {
#if XF_DEVICE_PASS
    if (task.offset == static_cast<std::uint64_t>(p.at))
      for (;;) __nanosleep(1000);  // an asm side effect: the loop cannot be optimised away
#else
    (void)p;
#endif
    for (std::uint64_t i = task.thread_id; i < task.count; i += task.thread_count) task.out[i] = task.in[i];
  }
};

/// A GPU map that stores through a wild pointer at offset `at`: an illegal-address fault that the device
/// executor must report and exit on. Device tests only.
struct wild_write_at_op {
  static constexpr char class_name[] = "wild_write_at";
  struct params {
    std::int64_t at = 0;
  };
  static void describe(operator_schema<params>& s) {
    s.describe("copies frames; writes through a wild pointer at offset `at` (GPU fault tests)");
    s.param(&params::at, "at", "offset whose frame faults", std::int64_t{0}, 0);
  }
  template <class T>
  XF_HOST_DEVICE static void compute(const params& p, const frame_task<T>& task) {
#if XF_DEVICE_PASS
    if (task.offset == static_cast<std::uint64_t>(p.at) && task.thread_id == 0)
      *reinterpret_cast<volatile T*>(task.out - (std::uint64_t{1} << 40)) = T{};
#else
    (void)p;
#endif
    for (std::uint64_t i = task.thread_id; i < task.count; i += task.thread_count) task.out[i] = task.in[i];
  }
};

}  // namespace xf::test
