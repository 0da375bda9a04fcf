// run_context: what one run of a workload's host side gets from xeflow-shared-bench — its variant, the
// object space (library variants), the clock its code marks as it goes (inputs written, transfers, kernels,
// outputs read), kernel time by CUDA events, and the bytes the explicit versions' copies move.
//
// A host side allocates its memory, calls start(), writes its inputs, … reads its outputs, calls stop(),
// and frees its memory: the timed part is start() to stop(), the whole host-side workload from the first
// input written to the last output read on the CPU. Between them it calls mark(p) after each step, which
// books the time since the previous mark to phase p.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "apps/shared_objects/variant.hpp"
#include "framework/core/cuda_check.hpp"
#include "framework/shared/object_space.hpp"

namespace xf::shared_bench {

/// Where a run's time goes, as its host code marks it.
enum class phase : std::uint8_t {
  write,    ///< the CPU writes inputs (library: with its write faults and rolling update's early flushes)
  to_gpu,   ///< explicit: cudaMemcpy to the GPU; library: call (the release's transfers, then the launch)
  gpu,      ///< waiting for kernels (library: sync, batch update's transfers back included)
  to_host,  ///< explicit: cudaMemcpy back; managed with hints: the prefetch back
  read,     ///< the CPU reads outputs (library: with its read faults, each fetching a range)
};
inline constexpr std::size_t phase_count = 5;
constexpr std::string_view name_of(phase p) {
  constexpr std::array<std::string_view, phase_count> names = {"write", "to_gpu", "gpu", "to_host", "read"};
  return names[static_cast<std::size_t>(p)];
}

struct byte_counts {
  std::uint64_t to_gpu = 0;
  std::uint64_t to_host = 0;
};

/// Kernel time from CUDA events recorded on the default stream around each launch group. The events are
/// kept across runs (created as first needed); read total_ms() only after the run has synchronised.
class kernel_timer {
 public:
  kernel_timer() = default;
  ~kernel_timer();
  kernel_timer(const kernel_timer&) = delete;
  kernel_timer& operator=(const kernel_timer&) = delete;

  void reset() { used_ = 0; }
  void begin();
  void end();
  /// The sum of the recorded intervals (waits for the last event first).
  double total_ms() const;

 private:
  std::vector<cudaEvent_t> events_;
  std::size_t used_ = 0;
};

/// What one run measured.
struct run_record {
  double ms = 0;             ///< start() to stop()
  double ms_with_alloc = 0;  ///< the host side's whole call: allocations and frees included
  std::array<double, phase_count> phase_ms{};
  double kernel_ms = 0;
  /// Bytes moved in the timed part: the library's counters, or what the explicit copies moved; absent for
  /// managed memory (the driver migrates pages on its own and says nothing).
  std::optional<byte_counts> bytes;
  std::array<byte_counts, phase_count> phase_bytes{};  ///< the same, by phase (library and explicit)
  std::uint64_t faults = 0;                            ///< the library's faults served in the timed part
  std::uint64_t evictions = 0;                         ///< rolling update's early flushes in the timed part
};

class run_context {
 public:
  /// `space` for library variants (null otherwise); `timer` outlives the context.
  run_context(variant v, shared::object_space* space, kernel_timer& timer, int device);

  variant which() const { return variant_; }
  int device() const { return device_; }
  /// Explicit variants: whether the host copies are pinned.
  bool pinned_host() const { return variant_ == variant::explicit_pinned; }
  /// The object space of a library variant.
  shared::object_space& space() const;

  void start();
  void mark(phase p);
  void stop();
  /// Around a launch group on the default stream: its kernel time.
  void kernel_begin() { timer_.begin(); }
  void kernel_end() { timer_.end(); }

  /// The explicit versions' copies: cudaMemcpy (synchronous, as the paper's CUDA code), counted.
  template <class T>
  void copy_to_gpu(T* device, const T* host, std::size_t count) {
    XF_CUDA_TRY(cudaMemcpy(device, host, count * sizeof(T), cudaMemcpyHostToDevice));
    copied_.to_gpu += count * sizeof(T);
  }
  template <class T>
  void copy_to_host(T* host, const T* device, std::size_t count) {
    XF_CUDA_TRY(cudaMemcpy(host, device, count * sizeof(T), cudaMemcpyDeviceToHost));
    copied_.to_host += count * sizeof(T);
  }

  /// After stop() (and the run's last synchronisation): what it measured, ms_with_alloc left to the caller.
  run_record record() const;

 private:
  struct counter_snapshot {
    byte_counts bytes;
    std::uint64_t faults = 0, evictions = 0;
  };
  counter_snapshot snapshot() const;

  using clock = std::chrono::steady_clock;
  variant variant_;
  shared::object_space* space_;
  kernel_timer& timer_;
  int device_;
  byte_counts copied_;
  bool started_ = false, stopped_ = false;
  clock::time_point begin_, last_, end_;
  counter_snapshot at_start_, at_last_, at_end_;
  std::array<double, phase_count> phase_ms_{};
  std::array<byte_counts, phase_count> phase_bytes_{};
};

}  // namespace xf::shared_bench
