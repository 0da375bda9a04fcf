// Shared state of one run: drain (an interrupt: sources stop, streams finish), abort (a failure or a
// second interrupt: every wait unwinds), and the first failure. Thread-safe; the flag setters are
// async-signal-safe (lock-free atomics), so a SIGINT handler may call request_drain/request_abort.
#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <string>

#include "framework/core/errors.hpp"

namespace xf {

class run_control {
 public:
  static_assert(std::atomic<bool>::is_always_lock_free, "signal handlers set these flags");

  void request_drain() noexcept { drain_.store(true, std::memory_order_relaxed); }
  void request_abort() noexcept { abort_.store(true, std::memory_order_relaxed); }
  bool draining() const noexcept { return drain_.load(std::memory_order_relaxed); }
  bool aborting() const noexcept { return abort_.load(std::memory_order_relaxed); }
  const std::atomic<bool>& abort_flag() const noexcept { return abort_; }
  const std::atomic<bool>& drain_flag() const noexcept { return drain_; }

  /// Records the first failure and aborts the run; later failures are consequences and are dropped.
  void fail(const run_error& error) {
    {
      std::lock_guard lock(mutex_);
      if (!failure_) failure_ = error;
    }
    request_abort();
  }
  std::optional<run_error> failure() const {
    std::lock_guard lock(mutex_);
    return failure_;
  }

 private:
  std::atomic<bool> drain_{false};
  std::atomic<bool> abort_{false};
  mutable std::mutex mutex_;
  std::optional<run_error> failure_;
};

}  // namespace xf
