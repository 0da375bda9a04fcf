// tpacf (Parboil): the two-point angular correlation function, how likely two astronomical bodies are to
// lie a given angle apart, from histograms of pair separations: data × data (DD), and for each random set
// data × random (DR) and random × random (RR). As Parboil's reads its files, the CPU writes each set in
// two passes (the angles, then each point turned into a unit vector in place: the paper's Fig. 12 is about
// those passes under rolling update), then calls the set's kernels; it reads the histograms at the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "apps/shared_objects/tpacf/tpacf_kernels.hpp"
#include "apps/shared_objects/workload.hpp"

namespace xf::shared_bench {

struct tpacf_problem {
  static constexpr std::string_view name = "tpacf";
  std::size_t points = 0;  ///< per set
  std::size_t random_sets = 0;
  std::size_t bins = 0;
  std::vector<float> ra, dec;  ///< degrees; set s's points at [s·points, (s + 1)·points), set 0 the data
  tpacf_edges edges{};

  std::size_t sets() const { return 1 + random_sets; }
  std::size_t set_floats() const { return 3 * points; }
  /// Counters per histogram (bins + underflow + overflow).
  std::size_t slots() const { return bins + 2; }
  /// DD, then DR and RR of each random set in turn.
  std::size_t histograms() const { return 1 + 2 * random_sets; }
  std::size_t dd() const { return 0; }
  std::size_t dr(std::size_t r) const { return (1 + 2 * r) * slots(); }
  std::size_t rr(std::size_t r) const { return (2 + 2 * r) * slots(); }
  /// Set s into `set` (set_floats() floats) in Parboil's two passes: right ascension and declination into
  /// x and y, then each point in place to its unit vector (x, y, z).
  void write_set(std::size_t s, float* set) const;

  std::vector<std::pair<std::string, std::uint64_t>> size() const {
    return {{"points", points}, {"random_sets", random_sets}, {"bins", bins}};
  }
  std::uint64_t device_bytes() const {
    return sets() * set_floats() * sizeof(float) + histograms() * slots() * sizeof(std::uint64_t);
  }
  std::size_t device_arrays() const { return sets() + 1; }
  std::uint64_t source_bytes() const { return 2 * sets() * points * sizeof(float); }
  /// Where `thorough`, every histogram against the CPU's count of every pair with the kernel's own
  /// arithmetic (binning.hpp: exact, so the counts must be equal); else the invariants, every histogram
  /// holding all its pairs (n(n − 1)/2 within a set, n² across two).
  check_result check(const output& out, bool thorough) const;
};

void tpacf_explicit(run_context& ctx, const tpacf_problem& p, output& out);
void tpacf_shared(run_context& ctx, const tpacf_problem& p, output& out);
void tpacf_managed(run_context& ctx, const tpacf_problem& p, output& out);
void tpacf_managed_prefetch(run_context& ctx, const tpacf_problem& p, output& out);

/// Bins logarithmic in angle from 1 to 10 000 arcminutes, as Parboil's.
std::unique_ptr<workload> make_tpacf(std::size_t points, std::size_t random_sets, std::size_t bins);

}  // namespace xf::shared_bench
