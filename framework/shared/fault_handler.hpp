// fault_handler: the shared-object library's SIGSEGV handler. Ranges of host memory are registered with a
// callback; a fault inside one calls it (in the faulting thread, in signal context), and any other fault
// goes to the handler that was installed before, exactly as if this one were not there.
#pragma once

#include <csignal>
#include <cstddef>
#include <cstdint>

namespace xf::shared {

/// What a fault callback is told. `write` is known on x86-64 (the page-fault error code); elsewhere
/// `write_known` is false and the callback should serve the access as a read (a write then faults again
/// on the read-only page, and is served as a write).
struct fault_access {
  void* address;
  bool write;
  bool write_known;
};

/// Called in signal context for a fault inside the range it was registered with: it must use only
/// async-signal-safe operations (atomics, mprotect, memcpy between memory it owns, futex waits), take no
/// lock that the faulting thread may hold, and return true when the access may be retried (the page's
/// protection now allows it), false to pass the fault on (to the previous handler).
using fault_callback = bool (*)(void* context, const fault_access& access);

/// A registered range; `unregister_range` takes it back. Trivially copyable.
struct range_ticket {
  std::uint32_t slot = ~std::uint32_t{0};
};

/// The ranges and the installed handler. Thread-safe: ranges are registered and unregistered from any
/// thread while others fault. At most max_ranges ranges at once.
class fault_handler {
 public:
  static constexpr std::uint32_t max_ranges = 4096;

  /// The process's one instance; the handler is installed on first use and stays installed (removing it
  /// while another handler chained after it would break that one's chain).
  static fault_handler& instance();

  /// Faults in [begin, begin + bytes) call `callback(context, access)`. Throws std::length_error when
  /// max_ranges ranges are registered, std::invalid_argument on an empty range or one that overlaps a
  /// registered one.
  range_ticket register_range(void* begin, std::size_t bytes, fault_callback callback, void* context);
  /// Stops routing faults of the range to its callback and returns once no handler is inside it. The
  /// ticket is spent.
  void unregister_range(range_ticket ticket);

  /// Faults served by a callback, and faults passed on to the previous handler, since start.
  std::uint64_t served() const;
  std::uint64_t passed_on() const;

  fault_handler(const fault_handler&) = delete;
  fault_handler& operator=(const fault_handler&) = delete;

 private:
  fault_handler();
  static void on_signal(int signal, siginfo_t* info, void* context);
};

}  // namespace xf::shared
