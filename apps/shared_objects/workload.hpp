// workload: one of the paper's programs at one size, as xeflow-shared-bench runs it — its inputs made once,
// its host side in every variant (the same kernels in each), and its check against a CPU reference.
//
// Checking. Every variant's output must equal the first variant's bit for bit (the same kernels with the
// same launch shapes and inputs, no floating-point atomics: any difference is data that moved wrongly), and
// the outputs are checked against a CPU reference in double precision: whole at the self-check's small
// sizes, sampled (or by invariants) at the measured ones. A float result passes where its error is within
// a bound derived for its computation (each workload states it; float_sum_bound for long sums):
// error_tally below.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "apps/shared_objects/run_context.hpp"
#include "apps/shared_objects/variant.hpp"

namespace xf::shared_bench {

/// What a run's CPU read back: float results, or counts (tpacf's histograms).
struct output {
  std::vector<float> values;
  std::vector<std::uint64_t> counts;
};

/// "" where `a` and `b` hold the same bits, else where they first differ.
std::string first_difference(const output& a, const output& b);

struct check_result {
  bool ok = true;
  std::string detail;  ///< what was checked, and the worst error against its bound
};

/// The unit roundoff of float (round to nearest): a correctly rounded operation errs by at most this
/// relative amount.
inline constexpr double float_roundoff = 0x1p-24;

/// Float results against a reference, each with its own error bound; fails on NaN, infinity or any bound
/// exceeded.
class error_tally {
 public:
  void add(double got, double want, double bound) {
    const double error = std::fabs(got - want);
    const bool ok = std::isfinite(got) && error <= bound;
    ++count_;
    if (!ok && failures_++ == 0) {
      char text[160];
      std::snprintf(text, sizeof text, "value %zu: %.9g, the reference %.9g (error %.3g > bound %.3g)",
                    count_ - 1, got, want, error, bound);
      first_failure_ = text;
    }
    if (bound > 0 && error / bound > worst_ratio_) worst_ratio_ = error / bound;
    if (error > max_error_) max_error_ = error;
  }
  check_result result(std::string_view what) const {
    char text[200];
    std::snprintf(text, sizeof text, "%zu %.*s: max |error| %.3g, at most %.3g of its bound", count_,
                  static_cast<int>(what.size()), what.data(), max_error_, worst_ratio_);
    if (failures_ == 0) return {true, text};
    return {false, std::to_string(failures_) + " of " + std::to_string(count_) + " " + std::string(what) +
                       " beyond their bounds; first " + first_failure_};
  }

 private:
  std::size_t count_ = 0, failures_ = 0;
  double worst_ratio_ = 0, max_error_ = 0;
  std::string first_failure_;
};

/// The error allowed a float sum that a kernel computes term by term, against its reference in double.
/// Under the standard model of rounding, each operation's relative error is an independent value within
/// ±u: a long sum's error is then a random walk of about u·√(Σ partial²) over its running partial sums
/// (the worst case, u·Σ|partial|, grows with the count and would hide real errors of one value in a
/// hundred), and the terms' own errors (their roundings, their functions' ulps, an argument's rounding
/// moving a cosine) add as √(Σ error²). Allowed: ten times both (about seventeen standard deviations of
/// either), plus 4u of every term's magnitude for errors that do not average out (a function that leans
/// one way by its 2 ulp, a constant rounded once for all terms).
class float_sum_bound {
 public:
  /// A term of value `value` whose own float error may be up to `own_error`.
  void term(double value, double own_error) {
    own_squares_ += own_error * own_error;
    magnitude_ += std::fabs(value);
  }
  /// The running sum after an addition, as the kernel's order makes it.
  void partial(double running) { partial_squares_ += running * running; }
  double bound() const {
    return 10 * (float_roundoff * std::sqrt(partial_squares_) + std::sqrt(own_squares_)) +
           4 * float_roundoff * magnitude_;
  }

 private:
  double partial_squares_ = 0, own_squares_ = 0, magnitude_ = 0;
};

class workload {
 public:
  virtual ~workload() = default;
  virtual std::string_view name() const = 0;
  /// The size, as named parameters (the table and the JSON).
  virtual std::vector<std::pair<std::string, std::uint64_t>> size() const = 0;
  /// GPU memory one run needs (every array its kernels use) and the number of those arrays (the library
  /// rounds each object up to the driver's granularity).
  virtual std::uint64_t device_bytes() const = 0;
  virtual std::size_t device_arrays() const = 0;
  /// Host memory the workload keeps for its lifetime (its inputs as read from "the file", references).
  virtual std::uint64_t source_bytes() const = 0;
  /// One run of the host side of `v`: allocates, start()s, writes inputs, runs the kernels, reads the
  /// outputs into `out`, stop()s, frees.
  virtual void run(variant v, run_context& ctx, output& out) const = 0;
  /// `out` against the CPU reference: whole where `thorough` (small sizes), else what is cheap.
  virtual check_result check(const output& out, bool thorough) const = 0;
};

/// A workload's four host sides: the explicit one (both host memories), the library one (every protocol:
/// the space's default protocol decides), managed memory without and with hints.
template <class Problem>
struct host_sides {
  using side = void (*)(run_context&, const Problem&, output&);
  side explicit_copies;
  side shared;
  side managed;
  side managed_prefetch;
};

/// Problem: the inputs and parameters, with `name`, size(), device_bytes(), device_arrays(),
/// source_bytes() and check(output, thorough).
template <class Problem>
class workload_over final : public workload {
 public:
  workload_over(Problem problem, host_sides<Problem> sides) : problem_(std::move(problem)), sides_(sides) {}

  std::string_view name() const override { return Problem::name; }
  std::vector<std::pair<std::string, std::uint64_t>> size() const override { return problem_.size(); }
  std::uint64_t device_bytes() const override { return problem_.device_bytes(); }
  std::size_t device_arrays() const override { return problem_.device_arrays(); }
  std::uint64_t source_bytes() const override { return problem_.source_bytes(); }
  void run(variant v, run_context& ctx, output& out) const override {
    switch (v) {
      case variant::explicit_copies:
      case variant::explicit_pinned:
        return sides_.explicit_copies(ctx, problem_, out);
      case variant::batch:
      case variant::lazy:
      case variant::rolling:
        return sides_.shared(ctx, problem_, out);
      case variant::managed:
        return sides_.managed(ctx, problem_, out);
      case variant::managed_prefetch:
        return sides_.managed_prefetch(ctx, problem_, out);
    }
  }
  check_result check(const output& out, bool thorough) const override {
    return problem_.check(out, thorough);
  }

 private:
  Problem problem_;
  host_sides<Problem> sides_;
};

}  // namespace xf::shared_bench
