// The coherence protocols' transition table against the ADSM/GMAC paper's Fig. 6, transition by transition,
// and what the host pages allow in each state.
#include "framework/shared/coherence.hpp"

#include <doctest/doctest.h>

namespace xf::shared {
namespace {

using st = range_state;
using ev = coherence_event;

void check(protocol p, st from, ev e, st to, transfer move) {
  CAPTURE(name_of(p));
  CAPTURE(name_of(from));
  CAPTURE(static_cast<int>(e));
  const transition t = next_state(p, from, e);
  CHECK(t.valid);
  CHECK(t.next == to);
  CHECK(t.move == move);
}

void check_not_a_fault(protocol p, st from, ev e) {
  CAPTURE(name_of(p));
  CAPTURE(name_of(from));
  CAPTURE(static_cast<int>(e));
  const transition t = next_state(p, from, e);
  CHECK_FALSE(t.valid);
  CHECK(t.next == from);
  CHECK(t.move == transfer::none);
}

TEST_CASE("coherence.batch_update_invalidates_at_every_call_and_brings_everything_back_at_sync") {
  const protocol p = protocol::batch;
  CHECK(initial_state(p) == st::dirty);
  check(p, st::dirty, ev::call, st::invalid, transfer::to_accelerator);
  check(p, st::read_only, ev::call, st::invalid, transfer::to_accelerator);
  check(p, st::invalid, ev::call, st::invalid, transfer::none);  // a second call without a sync between
  check(p, st::invalid, ev::sync, st::dirty, transfer::to_host);
  check(p, st::dirty, ev::sync, st::dirty, transfer::none);  // a sync without a call
  for (st s : {st::invalid, st::read_only, st::dirty}) {
    CHECK(access_of(p, s) == host_access::read_write);  // nothing is watched
    for (ev e : {ev::cpu_read, ev::cpu_write, ev::evict}) check_not_a_fault(p, s, e);
  }
}

TEST_CASE("coherence.lazy_and_rolling_update_move_only_what_the_cpu_touched") {
  for (protocol p : {protocol::lazy, protocol::rolling}) {
    CHECK(initial_state(p) == st::read_only);  // reads after allocation need no fault
    // Call: the dirty ranges go, every range is the accelerator's.
    check(p, st::dirty, ev::call, st::invalid, transfer::to_accelerator);
    check(p, st::read_only, ev::call, st::invalid, transfer::none);
    check(p, st::invalid, ev::call, st::invalid, transfer::none);
    // Sync: nothing moves.
    for (st s : {st::invalid, st::read_only, st::dirty}) check(p, s, ev::sync, s, transfer::none);
    // The CPU's accesses: a fetch on the first touch of an invalid range; a write makes a range dirty.
    check(p, st::invalid, ev::cpu_read, st::read_only, transfer::to_host);
    check(p, st::invalid, ev::cpu_write, st::dirty, transfer::to_host);
    check(p, st::read_only, ev::cpu_write, st::dirty, transfer::none);
    check_not_a_fault(p, st::read_only, ev::cpu_read);
    check_not_a_fault(p, st::dirty, ev::cpu_read);
    check_not_a_fault(p, st::dirty, ev::cpu_write);
    // What the pages allow is what makes exactly those accesses fault.
    CHECK(access_of(p, st::invalid) == host_access::none);
    CHECK(access_of(p, st::read_only) == host_access::read);
    CHECK(access_of(p, st::dirty) == host_access::read_write);
  }
}

TEST_CASE("coherence.rolling_update_evicts_its_oldest_dirty_block_early") {
  check(protocol::rolling, st::dirty, ev::evict, st::read_only, transfer::to_accelerator);
  check_not_a_fault(protocol::rolling, st::read_only, ev::evict);
  check_not_a_fault(protocol::rolling, st::invalid, ev::evict);
  check_not_a_fault(protocol::lazy, st::dirty, ev::evict);  // lazy update keeps its dirty objects to the call
}

}  // namespace
}  // namespace xf::shared
