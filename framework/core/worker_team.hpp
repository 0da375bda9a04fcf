// worker_team: a team of threads started once that runs one fork-join body after another, so a run costs a
// wake-up rather than a thread start; the first failure (by thread index) is rethrown.
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

namespace xf {

/// For loops that fork and join thousands of times (a baseline staging each chunk with all its threads, the
/// copy bridge choosing the pages of a run of frames): the threads are started once and wait between runs.
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

  /// Runs body(t) for t in [0, size()): t = 0 on the calling thread. When bodies throw, the exception of the
  /// lowest t is rethrown.
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

}  // namespace xf
