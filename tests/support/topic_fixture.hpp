// Shared pieces of the topic tests: frame patterns that prove a frame was not overwritten, per-offset
// ledgers (every offset exactly once), a failure log that worker threads write instead of asserting,
// and a team of worker threads joined under a deadline that turns a hang into a failed test.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "framework/core/errors.hpp"
#include "tests/support/sanitizer.hpp"
#include "topics/topic.hpp"

namespace xf::test {

/// The stress tests' sizes: a quarter of `normal` by default, which still crosses every slot of every
/// topic many times and keeps each case to seconds, and `normal` itself in the long run (XF_LONG=1, as
/// `tools/check.sh --long` sets it) outside the sanitizers.
inline bool long_stress() {
  const char* long_run = std::getenv("XF_LONG");
  return long_run != nullptr && std::string_view(long_run) == "1" && !under_sanitizer;
}
inline std::uint64_t stress_frames(std::uint64_t normal) {
  return long_stress() ? normal : normal / 4;
}

// ---- frame contents ---------------------------------------------------------------------------------

inline std::uint64_t mix64(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// The per-offset pattern of a topic (`salt` tells topics of one test apart).
inline std::uint64_t pattern(std::uint64_t offset, std::uint64_t salt) {
  return mix64(offset * 0x100000001b3ull ^ salt);
}

/// Valid bytes published at an offset: varies so the slot's `bytes` field is checked too.
inline std::uint64_t pattern_bytes(std::uint64_t offset, std::uint64_t frame_bytes) {
  return 64 + pattern(offset, 7) % (frame_bytes - 64);
}

namespace detail {
inline void put(std::byte* data, std::uint64_t word, std::uint64_t value) {
  std::memcpy(data + word * 8, &value, 8);
}
inline std::uint64_t get(const std::byte* data, std::uint64_t word) {
  std::uint64_t value;
  std::memcpy(&value, data + word * 8, 8);
  return value;
}
}  // namespace detail

/// Writes a few words of a frame: its offset, the pattern, and two derived words at the middle and end
/// (a frame is 4 KiB; touching all of it would measure memcpy, not the protocol).
inline void write_frame(std::byte* data, std::uint64_t frame_bytes, std::uint64_t offset,
                        std::uint64_t salt) {
  const std::uint64_t p = pattern(offset, salt), words = frame_bytes / 8;
  detail::put(data, 0, offset);
  detail::put(data, 1, p);
  detail::put(data, words / 2, p ^ 0x5555555555555555ull);
  detail::put(data, words - 1, ~p);
}

/// True when the frame holds what write_frame(offset, salt) wrote.
inline bool frame_matches(const std::byte* data, std::uint64_t frame_bytes, std::uint64_t offset,
                          std::uint64_t salt) {
  const std::uint64_t p = pattern(offset, salt), words = frame_bytes / 8;
  return detail::get(data, 0) == offset && detail::get(data, 1) == p &&
         detail::get(data, words / 2) == (p ^ 0x5555555555555555ull) && detail::get(data, words - 1) == ~p;
}

// ---- bookkeeping ------------------------------------------------------------------------------------

/// Failures seen by worker threads (doctest assertions stay on the test's thread). Thread-safe.
class failure_log {
 public:
  void add(std::string what) {
    count_.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(mutex_);
    if (messages_.size() < 10) messages_.push_back(std::move(what));
  }
  std::uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  /// The first few failures, one per line.
  std::string str() const {
    std::lock_guard lock(mutex_);
    std::string s;
    for (const auto& m : messages_) s += m + "\n";
    return s;
  }

 private:
  std::atomic<std::uint64_t> count_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> messages_;
};

/// One counter per offset: how often something happened to it (delivered to a group, released by it).
class offset_ledger {
 public:
  explicit offset_ledger(std::uint64_t offsets)
      : size_(offsets), counts_(std::make_unique<std::atomic<std::uint8_t>[]>(offsets)) {}

  /// Counts `offset`; returns the count before (0 the first time). Out of range counts as a duplicate.
  std::uint8_t mark(std::uint64_t offset) {
    if (offset >= size_) return 0xff;
    return counts_[offset].fetch_add(1, std::memory_order_acq_rel);
  }
  bool marked(std::uint64_t offset) const {
    return offset < size_ && counts_[offset].load(std::memory_order_acquire) != 0;
  }
  /// Empty when offsets [0, n) were each counted exactly once and none beyond; else the first problems.
  std::string exactly_once(std::uint64_t n) const {
    std::string problems;
    int shown = 0;
    for (std::uint64_t o = 0; o < size_ && shown < 5; ++o) {
      const unsigned c = counts_[o].load(std::memory_order_relaxed);
      const unsigned want = o < n ? 1 : 0;
      if (c != want) {
        problems += "offset " + std::to_string(o) + " seen " + std::to_string(c) + "x; ";
        ++shown;
      }
    }
    return problems;
  }

 private:
  std::uint64_t size_;
  std::unique_ptr<std::atomic<std::uint8_t>[]> counts_;
};

/// A tiny per-thread generator for random yields and sizes.
class rng {
 public:
  explicit rng(std::uint64_t seed) : state_(mix64(seed)) {}
  std::uint64_t next() { return state_ = mix64(state_); }
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }
  /// Yields the processor now and then, so threads interleave at many different points.
  void maybe_yield(unsigned one_in = 8) {
    if (below(one_in) == 0) std::this_thread::yield();
  }

 private:
  std::uint64_t state_;
};

/// Worker threads of one test. Each body runs under a catch-all that records what escaped it;
/// join() waits up to a deadline, then sets the abort flag so every blocking step unwinds (a hang
/// becomes a failure, not a stuck test suite) and reports it.
class worker_team {
 public:
  worker_team(std::atomic<bool>& abort, failure_log& failures) : abort_(abort), failures_(failures) {}
  worker_team(const worker_team&) = delete;
  worker_team& operator=(const worker_team&) = delete;
  ~worker_team() {
    if (!joined_) {
      abort_.store(true);
      join_all();
    }
  }

  /// Starts `body` on a thread of its own. `name` appears in failures.
  void spawn(std::string name, std::function<void()> body) {
    threads_.emplace_back([this, name = std::move(name), body = std::move(body)] {
      try {
        body();
      } catch (const run_aborted&) {
        if (!expect_abort_.load()) failures_.add(name + ": aborted");
      } catch (const std::exception& e) {
        failures_.add(name + ": " + e.what());
      }
      finished_.fetch_add(1);
    });
  }

  /// Workers that unwind with run_aborted are fine from now on (abort tests).
  void expect_abort() { expect_abort_.store(true); }
  std::size_t finished() const { return finished_.load(); }

  /// Joins every worker. Returns false (and records a failure) when the deadline passed first.
  bool join(std::chrono::seconds deadline = std::chrono::seconds(60)) {
    const auto until = std::chrono::steady_clock::now() + deadline;
    bool in_time = true;
    while (finished_.load() < threads_.size()) {
      if (std::chrono::steady_clock::now() > until) {
        in_time = false;
        failures_.add("deadline passed: " + std::to_string(threads_.size() - finished_.load()) +
                      " workers still blocked (deadlock or lost wake-up)");
        expect_abort_.store(true);
        abort_.store(true);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    join_all();
    return in_time;
  }

 private:
  void join_all() {
    for (auto& t : threads_)
      if (t.joinable()) t.join();
    joined_ = true;
  }

  std::atomic<bool>& abort_;
  failure_log& failures_;
  std::vector<std::thread> threads_;
  std::atomic<std::size_t> finished_{0};
  std::atomic<bool> expect_abort_{false};
  bool joined_ = false;
};

/// Busy-waits (yielding) until `done()`, the abort flag, or the deadline; false unless `done()`.
template <class Done>
bool wait_for(Done&& done, const std::atomic<bool>& abort,
              std::chrono::seconds deadline = std::chrono::seconds(60)) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (!done()) {
    if (abort.load() || std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

/// A 4 KiB-frame topic on host memory for tests.
inline topic_config test_topic(std::string name, std::uint32_t capacity, std::uint32_t groups,
                               std::uint32_t publishers, std::uint64_t frame_bytes = 4096) {
  topic_config config;
  config.name = std::move(name);
  config.frame_bytes = frame_bytes;
  config.capacity = capacity;
  config.groups = groups;
  config.publishers = publishers;
  return config;
}

}  // namespace xf::test
