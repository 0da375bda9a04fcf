// Fork-join helpers of the BigKernel reference applications and baselines: the default thread count, an
// even split of a range into parts, and running one part per thread with the first failure (by part)
// rethrown — once (run_parallel) or many times over one team of threads (worker_team, from the framework's
// ground floor).
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "framework/core/worker_team.hpp"

namespace xf::apps {

using xf::worker_team;

/// std::thread::hardware_concurrency(), or 1 when the system does not say.
inline unsigned default_threads() noexcept {
  return std::max(1u, std::thread::hardware_concurrency());
}

struct index_range {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t size() const noexcept { return end - begin; }
};

/// Part `part` of [0, n) cut into `parts` contiguous pieces whose sizes differ by at most one (the first
/// n % parts pieces are the longer ones). Parts in order tile [0, n).
inline index_range split_range(std::uint64_t n, std::uint64_t parts, std::uint64_t part) noexcept {
  const std::uint64_t base = n / parts, extra = n % parts;
  const std::uint64_t begin = part * base + std::min(part, extra);
  return {begin, begin + base + (part < extra ? 1 : 0)};
}

/// Runs body(t) for t in [0, threads): t = 0 on the calling thread, the others on their own std::thread, and
/// returns when all are done. When bodies throw, the exception of the lowest t is rethrown (the same one for
/// any timing, so errors are deterministic when parts are ordered by position).
template <class Body>
void run_parallel(unsigned threads, Body&& body) {
  threads = std::max(1u, threads);
  std::vector<std::exception_ptr> failures(threads);
  auto guarded = [&](unsigned t) {
    try {
      body(t);
    } catch (...) {
      failures[t] = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> workers;
    workers.reserve(threads - 1);
    for (unsigned t = 1; t < threads; ++t) workers.emplace_back(guarded, t);
    guarded(0);
  }  // jthreads join here
  for (const auto& f : failures)
    if (f) std::rethrow_exception(f);
}

}  // namespace xf::apps
