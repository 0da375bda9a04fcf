// The hand-off of transfer_agent.hpp: a request in four fields and a futex word, idle → posted (the
// faulting thread) → done (the agent) → idle (the faulting thread, which then lets the next one in).
#include "framework/shared/transfer_agent.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <stdexcept>

#include "framework/shared/spin_wait.hpp"

namespace xf::shared {
namespace {

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr,
            nullptr, 0);
}

void futex_wake(std::atomic<std::uint32_t>& word) {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr,
            0);
}

/// Waits until done(word's value): spinning for `spin_for` first, since the other side usually answers
/// within microseconds (a page's copy) and waking a sleeping thread costs more than that; then on the
/// futex. clock_gettime, which steady_clock reads, is async-signal-safe.
template <class Done>
void await(std::atomic<std::uint32_t>& word, std::chrono::microseconds spin_for, Done&& done) {
  const auto until = std::chrono::steady_clock::now() + spin_for;
  for (unsigned n = 0; spin_for.count() > 0; ++n) {
    if (done(word.load(std::memory_order_acquire))) return;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (n % 64 == 63 && std::chrono::steady_clock::now() > until) break;
  }
  for (std::uint32_t s; !done(s = word.load(std::memory_order_acquire));) futex_wait(word, s);
}

}  // namespace

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
                  std::atomic<std::uint32_t>::is_always_lock_free,
              "the futex word is the atomic's own bytes");

transfer_agent::transfer_agent(accelerator& device)
    : device_(device),
      // Spinning pays where the faulting threads and the agent each have a core; with a few cores it
      // takes them from the threads the agent serves (a 2-core machine ran 6x slower).
      spin_(std::thread::hardware_concurrency() >= 8 ? std::chrono::microseconds(50)
                                                     : std::chrono::microseconds(0)) {
  thread_ = std::thread([this] { loop(); });
}

transfer_agent::~transfer_agent() {
  spin_lock(busy_);
  state_.store(stopping, std::memory_order_release);
  futex_wake(state_);
  thread_.join();
}

void transfer_agent::to_accelerator(void* accelerator_copy, const void* host, std::size_t bytes) {
  submit(kind::to_accelerator, accelerator_copy, host, bytes);
}

void transfer_agent::finish_to_accelerator() {
  submit(kind::finish, nullptr, nullptr, 0);
}

void transfer_agent::to_host(void* host, const void* accelerator_copy, std::size_t bytes) {
  submit(kind::to_host, host, accelerator_copy, bytes);
}

void transfer_agent::submit(kind k, void* destination, const void* source, std::size_t bytes) {
  spin_lock(busy_);
  kind_ = k;
  destination_ = destination;
  source_ = source;
  bytes_ = bytes;
  state_.store(posted, std::memory_order_release);
  futex_wake(state_);
  await(state_, spin_, [](std::uint32_t s) { return s == done; });
  const bool failed = failed_;
  state_.store(idle, std::memory_order_relaxed);
  busy_.clear(std::memory_order_release);
  // A fault handler cannot report an error to the code that touched the page: the process ends, as it
  // would have on the fault itself.
  if (failed) std::abort();
}

void transfer_agent::loop() {
  try {
    device_.bind_thread();
  } catch (...) {
    failed_ = true;  // every request then fails
  }
  const bool unbound = failed_;
  for (;;) {
    await(state_, spin_, [](std::uint32_t s) { return s == posted || s == stopping; });
    if (state_.load(std::memory_order_acquire) == stopping) return;
    try {
      if (unbound) throw std::runtime_error("the transfer thread could not use the accelerator");
      switch (kind_) {
        case kind::to_accelerator:
          device_.to_accelerator(destination_, source_, bytes_);
          break;
        case kind::finish:
          device_.finish_to_accelerator();
          break;
        case kind::to_host:
          device_.to_host(destination_, source_, bytes_);
          break;
      }
      failed_ = false;
    } catch (...) {
      failed_ = true;
    }
    state_.store(done, std::memory_order_release);
    futex_wake(state_);
  }
}

}  // namespace xf::shared
