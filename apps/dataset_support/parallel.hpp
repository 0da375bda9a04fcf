// Fork-join helpers of the BigKernel reference applications and baselines: the default thread count, an
// even split of a range into parts, and running one part per thread with the first failure (by part)
// rethrown — once (run_parallel) or many times over one team of threads (worker_team).
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

namespace xf::apps {

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

/// run_parallel for loops that fork and join thousands of times (a baseline staging each chunk with all its
/// threads): the threads are started once and wait between runs, so a run costs a wake-up, not a start.
class worker_team {
 public:
  explicit worker_team(unsigned threads) : failures_(std::max(1u, threads)) {
    for (unsigned t = 1; t < failures_.size(); ++t) workers_.emplace_back([this, t] { serve(t); });
  }
  ~worker_team() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
  }  // jthreads join here
  worker_team(const worker_team&) = delete;
  worker_team& operator=(const worker_team&) = delete;

  unsigned size() const noexcept { return static_cast<unsigned>(failures_.size()); }

  /// Runs body(t) for t in [0, size()): t = 0 on the calling thread. Rethrows like run_parallel.
  void run(const std::function<void(unsigned)>& body) {
    {
      std::lock_guard lock(mutex_);
      body_ = &body;
      pending_ = size() - 1;
      ++generation_;
    }
    wake_.notify_all();
    guarded(0, body);
    {
      std::unique_lock lock(mutex_);
      done_.wait(lock, [&] { return pending_ == 0; });
      body_ = nullptr;
    }
    std::exception_ptr first;
    for (auto& f : failures_)
      if (f && !first)
        first = std::exchange(f, nullptr);
      else
        f = nullptr;
    if (first) std::rethrow_exception(first);
  }

 private:
  void guarded(unsigned t, const std::function<void(unsigned)>& body) {
    try {
      body(t);
    } catch (...) {
      failures_[t] = std::current_exception();
    }
  }
  void serve(unsigned t) {
    std::uint64_t seen = 0;
    for (;;) {
      const std::function<void(unsigned)>* body = nullptr;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
        body = body_;
      }
      guarded(t, *body);
      std::lock_guard lock(mutex_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::vector<std::exception_ptr> failures_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(unsigned)>* body_ = nullptr;
  std::uint64_t generation_ = 0;
  unsigned pending_ = 0;
  bool stopping_ = false;
  std::vector<std::jthread> workers_;  // last: joined before the rest is destroyed
};

}  // namespace xf::apps
