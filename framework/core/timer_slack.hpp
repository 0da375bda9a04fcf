// How late the kernel may wake a sleeping thread of a run: Linux batches wake-ups by delaying each sleep
// up to the thread's timer slack, 50 µs by default. The framework's waits sleep 1–50 µs once they stop
// spinning (backoff.hpp), so under the default slack each of those sleeps ends up to 50 µs late — a sink
// waiting for the next frame, a source waiting for a free slot, the copy bridge waiting for work — and an
// unloaded stream's per-frame latency is mostly that. A run sets its threads' slack for its duration
// (threads inherit it from the thread that creates them) and gives the caller's back afterwards.
#pragma once

#include <cstdint>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace xf {

class scoped_timer_slack {
 public:
  /// `ns` 0 leaves the calling thread's slack as it is.
  explicit scoped_timer_slack(std::uint64_t ns) {
#if defined(__linux__)
    if (ns == 0) return;
    const int before = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    if (before > 0 && prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(ns), 0, 0, 0) == 0)
      restore_ = static_cast<unsigned long>(before);
#else
    (void)ns;
#endif
  }
  ~scoped_timer_slack() {
#if defined(__linux__)
    if (restore_ != 0) prctl(PR_SET_TIMERSLACK, restore_, 0, 0, 0);
#endif
  }
  scoped_timer_slack(const scoped_timer_slack&) = delete;
  scoped_timer_slack& operator=(const scoped_timer_slack&) = delete;

  /// The calling thread's slack in nanoseconds (0 where the platform has none to report).
  static std::uint64_t current_ns() {
#if defined(__linux__)
    const int ns = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    return ns > 0 ? static_cast<std::uint64_t>(ns) : 0;
#else
    return 0;
#endif
  }

 private:
  unsigned long restore_ = 0;
};

}  // namespace xf
