// coherence: the ADSM/GMAC paper's three coherence protocols (its Fig. 6) as one transition table, so that
// the library's fault handler, its call and sync points and the tests read the same rules. Everything is
// from the CPU's side: the accelerator never takes part, it only reads and writes its own copy.
//
// A range — a whole object under batch and lazy update, a fixed-size block of one under rolling update —
// is in one of three states:
//   invalid    only the accelerator's copy is current: the CPU must fetch it before any access;
//   read_only  both copies are equal: the CPU may read, and a write makes the range dirty;
//   dirty      the CPU's copy is newer: it must reach the accelerator before the next kernel call.
#pragma once

#include <cstdint>
#include <string_view>

namespace xf::shared {

enum class protocol : std::uint8_t {
  batch,    ///< every object to the accelerator at each call, every object back at each sync; no faults
  lazy,     ///< objects move at call only if the CPU wrote them, and back only when the CPU touches them
  rolling,  ///< lazy over fixed-size blocks, dirty blocks flushed early once more than the rolling size
};

enum class range_state : std::uint8_t { invalid, read_only, dirty };

/// What the CPU may do with a range's host pages in a state (mprotect's PROT_NONE / READ / READ|WRITE).
/// Batch update never protects: its ranges are always fully accessible on the host.
enum class host_access : std::uint8_t { none, read, read_write };

/// The data movement a transition needs before its new state holds.
enum class transfer : std::uint8_t {
  none,
  to_accelerator,  ///< the host copy to the accelerator (a call's flush, or rolling update's eviction)
  to_host,         ///< the accelerator's copy to the host (a sync under batch, a fault under lazy/rolling)
};

/// The events that move a range.
enum class coherence_event : std::uint8_t {
  call,       ///< a kernel is launched (the release point)
  sync,       ///< the kernel has returned and the CPU waits for it (the acquire point)
  cpu_read,   ///< the CPU reads the range (a fault, where the range is protected)
  cpu_write,  ///< the CPU writes the range
  evict,      ///< rolling update: the range is the oldest dirty one when the rolling size is exceeded
};

struct transition {
  range_state next;
  transfer move;
  /// False where the event cannot happen in that state (a read fault on a readable range): the handler
  /// then passes the fault on, for it is not the protocol's.
  bool valid = true;
};

/// The state a newly allocated range starts in: read_only under lazy and rolling update (the paper's
/// adsmAlloc: reads need no fault), dirty under batch update (everything goes at the first call).
constexpr range_state initial_state(protocol p) {
  return p == protocol::batch ? range_state::dirty : range_state::read_only;
}

/// What the host pages of a range in state `s` allow under protocol `p`.
constexpr host_access access_of(protocol p, range_state s) {
  if (p == protocol::batch) return host_access::read_write;
  switch (s) {
    case range_state::invalid:
      return host_access::none;
    case range_state::read_only:
      return host_access::read;
    case range_state::dirty:
      return host_access::read_write;
  }
  return host_access::none;
}

/// Fig. 6: the transition of a range in state `s` on event `e` under protocol `p`.
constexpr transition next_state(protocol p, range_state s, coherence_event e) {
  using st = range_state;
  using ev = coherence_event;
  if (p == protocol::batch) {
    // (a) Write-invalidate at every boundary: a call sends every object and invalidates the host's copy,
    // a sync brings every object back and the host's copy is the one that counts (dirty) until the next
    // call. The CPU's accesses are not watched.
    switch (e) {
      case ev::call:
        return {st::invalid, s == st::invalid ? transfer::none : transfer::to_accelerator};
      case ev::sync:
        return {st::dirty, s == st::invalid ? transfer::to_host : transfer::none};
      default:
        return {s, transfer::none, false};
    }
  }
  // (b) Lazy and rolling update.
  switch (e) {
    case ev::call:  // release: what the CPU wrote goes; the host's copy is stale from now on
      return {st::invalid, s == st::dirty ? transfer::to_accelerator : transfer::none};
    case ev::sync:  // acquire: nothing moves until the CPU touches a range
      return {s, transfer::none};
    case ev::cpu_read:
      if (s == st::invalid) return {st::read_only, transfer::to_host};
      return {s, transfer::none, false};  // readable already: not a protocol fault
    case ev::cpu_write:
      if (s == st::invalid) return {st::dirty, transfer::to_host};
      if (s == st::read_only) return {st::dirty, transfer::none};
      return {s, transfer::none, false};
    case ev::evict:
      if (p == protocol::rolling && s == st::dirty) return {st::read_only, transfer::to_accelerator};
      return {s, transfer::none, false};
  }
  return {s, transfer::none, false};
}

constexpr std::string_view name_of(protocol p) {
  return p == protocol::batch ? "batch" : p == protocol::lazy ? "lazy" : "rolling";
}
constexpr std::string_view name_of(range_state s) {
  return s == range_state::invalid ? "invalid" : s == range_state::read_only ? "read_only" : "dirty";
}

}  // namespace xf::shared
