// The fault handler's registry and signal path. Everything the handler touches is a static array of atomics:
// no allocation, no lock, no CUDA call in signal context.
#include "framework/shared/fault_handler.hpp"

#include <ucontext.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

namespace xf::shared {
namespace {

/// One registered range. A slot is free while `end` is 0. Registration writes callback and context,
/// then begin, then end (each seq_cst); the handler reads them in the opposite order, so it never sees a
/// range whose callback is not yet set.
struct range_slot {
  std::atomic<std::uintptr_t> begin{0};
  std::atomic<std::uintptr_t> end{0};
  std::atomic<fault_callback> callback{nullptr};
  std::atomic<void*> context{nullptr};
  /// Handlers between their check of this slot and the callback's return. unregister_range clears `end`
  /// and then waits for 0; the handler counts itself in before reading `end`: with both seq_cst, either
  /// the handler sees the range gone or the unregistering thread sees the handler inside (Dekker).
  std::atomic<std::uint32_t> inside{0};
};

range_slot slots[fault_handler::max_ranges];
/// Slots at or above this index have never been used: the handler scans below it.
std::atomic<std::uint32_t> used_slots{0};
std::atomic<std::uint64_t> served_count{0};
std::atomic<std::uint64_t> passed_count{0};
/// The SIGSEGV action that was installed before ours: where every fault we do not serve goes.
struct sigaction previous_action;
/// Serializes registrations (never taken in signal context).
std::mutex registry_mutex;

/// Whether the faulting access was a write: bit 1 of x86-64's page-fault error code.
fault_access access_of(siginfo_t* info, void* context) {
  fault_access a{info->si_addr, false, false};
#if defined(__x86_64__) && defined(REG_ERR)
  const auto* uc = static_cast<const ucontext_t*>(context);
  a.write = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
  a.write_known = true;
#else
  (void)context;
#endif
  return a;
}

/// The fault as the previous handler would have taken it. A default (or ignored: the kernel does not
/// ignore a synchronous SIGSEGV) action is restored and the access retried, so the process ends exactly as
/// it would have without us.
void pass_on(int signal, siginfo_t* info, void* context) {
  passed_count.fetch_add(1, std::memory_order_relaxed);
  if ((previous_action.sa_flags & SA_SIGINFO) != 0 && previous_action.sa_sigaction != nullptr) {
    previous_action.sa_sigaction(signal, info, context);
    return;
  }
  if (previous_action.sa_handler == SIG_DFL || previous_action.sa_handler == SIG_IGN) {
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(signal, &fallback, nullptr);
    return;
  }
  previous_action.sa_handler(signal);
}

}  // namespace

fault_handler::fault_handler() {
  struct sigaction ours {};
  ours.sa_sigaction = &fault_handler::on_signal;
  sigemptyset(&ours.sa_mask);
  // SA_NODEFER: a callback serving one range may itself fault on another's (bulk copies between objects).
  ours.sa_flags = SA_SIGINFO | SA_NODEFER;
  if (sigaction(SIGSEGV, &ours, &previous_action) != 0)
    throw std::system_error(errno, std::generic_category(), "installing the shared objects' SIGSEGV handler");
}

fault_handler& fault_handler::instance() {
  static fault_handler handler;
  return handler;
}

void fault_handler::on_signal(int signal, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  const std::uint32_t used = used_slots.load(std::memory_order_acquire);
  for (std::uint32_t i = 0; i < used; ++i) {
    range_slot& s = slots[i];
    if (s.end.load(std::memory_order_relaxed) == 0) continue;  // free: a cheap first look
    s.inside.fetch_add(1);
    const std::uintptr_t end = s.end.load(), begin = s.begin.load();
    if (end != 0 && address >= begin && address < end) {
      const bool served = s.callback.load()(s.context.load(), access_of(info, context));
      s.inside.fetch_sub(1);
      if (served) {
        served_count.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      break;
    }
    s.inside.fetch_sub(1);
  }
  pass_on(signal, info, context);
}

range_ticket fault_handler::register_range(void* begin, std::size_t bytes, fault_callback callback,
                                           void* context) {
  if (bytes == 0 || callback == nullptr)
    throw std::invalid_argument("fault_handler: a range needs bytes and a callback");
  const auto b = reinterpret_cast<std::uintptr_t>(begin), e = b + bytes;
  std::lock_guard lock(registry_mutex);
  const std::uint32_t used = used_slots.load();
  std::uint32_t free_slot = used;
  for (std::uint32_t i = 0; i < used; ++i) {
    const std::uintptr_t other_end = slots[i].end.load();
    if (other_end == 0) {
      if (free_slot == used && slots[i].inside.load() == 0) free_slot = i;
      continue;
    }
    if (b < other_end && slots[i].begin.load() < e)
      throw std::invalid_argument("fault_handler: the range overlaps one already registered");
  }
  if (free_slot == max_ranges)
    throw std::length_error("fault_handler: " + std::to_string(max_ranges) + " ranges are registered");
  range_slot& s = slots[free_slot];
  s.callback.store(callback);
  s.context.store(context);
  s.begin.store(b);
  s.end.store(e);
  if (free_slot == used) used_slots.store(used + 1, std::memory_order_release);
  return range_ticket{free_slot};
}

void fault_handler::unregister_range(range_ticket ticket) {
  if (ticket.slot >= max_ranges) throw std::invalid_argument("fault_handler: not a registered range");
  range_slot& s = slots[ticket.slot];
  {
    std::lock_guard lock(registry_mutex);
    if (s.end.load() == 0) throw std::invalid_argument("fault_handler: the range is not registered");
    s.end.store(0);
  }
  // A handler that saw the range before it went finishes its callback first: the context stays valid.
  while (s.inside.load() != 0) std::this_thread::yield();
}

std::uint64_t fault_handler::served() const {
  return served_count.load(std::memory_order_relaxed);
}
std::uint64_t fault_handler::passed_on() const {
  return passed_count.load(std::memory_order_relaxed);
}

}  // namespace xf::shared
