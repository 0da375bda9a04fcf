// null_sink: consumes frames and only counts them — the end of a pipeline whose output is not needed,
// and the sink that adds the least cost to a throughput measurement.
#pragma once

#include <atomic>
#include <cstdint>

#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"
#include "operators/sinks/thread_slots.hpp"

namespace xf {

/// Counts frames and bytes. Each thread counts in its own slot (no shared cache line on the hot path).
class null_sink final : public cpu_sink {
 public:
  struct params {};

  static void describe(operator_schema<params>& s) {
    s.describe("discards frames, counting frames and bytes");
    s.resumable();  // a resumed run counts what it received
  }

  explicit null_sink(const params&) {}

  void on_frame(std::uint64_t, const frame_in& in) override {
    slot& s = slots_.local();
    // Only this thread writes its slot: load + store, no read-modify-write; atomics make the reads of
    // counters() during a run race-free.
    s.frames.store(s.frames.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    s.bytes.store(s.bytes.load(std::memory_order_relaxed) + in.bytes, std::memory_order_relaxed);
  }

  /// {frames, bytes}; exact once the frame hooks have returned.
  operator_counters counters() const override {
    operator_counters c{{"frames", 0}, {"bytes", 0}};
    slots_.for_each([&](const slot& s) {
      c["frames"] += s.frames.load(std::memory_order_relaxed);
      c["bytes"] += s.bytes.load(std::memory_order_relaxed);
    });
    return c;
  }

 private:
  struct alignas(cache_line_bytes) slot {
    std::atomic<std::uint64_t> frames{0};
    std::atomic<std::uint64_t> bytes{0};
  };
  thread_slots<slot> slots_;
};

}  // namespace xf
