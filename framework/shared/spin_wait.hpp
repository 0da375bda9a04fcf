// Spin waits of the fault path: a thread that waits for a range's lock or for the transfer agent may be
// waiting for a thread that is not running (the agent's, on a machine with fewer cores than faulting
// threads), so after a short spin it gives its core away. sched_yield is a plain system call that takes no
// lock of the process: safe in a signal handler.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace xf::shared {

class spin_wait {
 public:
  void pause() {
    if (++spins_ < 64) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      ::syscall(SYS_sched_yield);
    }
  }

 private:
  unsigned spins_ = 0;
};

/// Takes `flag` (test_and_set until it was clear), waiting as above.
inline void spin_lock(std::atomic_flag& flag) {
  spin_wait w;
  while (flag.test_and_set(std::memory_order_acquire)) w.pause();
}

}  // namespace xf::shared
