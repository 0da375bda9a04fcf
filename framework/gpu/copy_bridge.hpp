// The copy engines' path across PCIe for topics the plan marks `dma` (transfer: dma, or auto with large
// frames). Zero-copy — the kernel reading and writing host memory in one pass — tops out near 40 GB/s on
// the H100 machine, while its two copy engines move ~47 GB/s both ways at once (both measured).
//
// A bridged topic keeps its host replica exactly as before (CPU publishers and subscribers use it
// unchanged) and gets a replica in device memory of its frames and of the words the kernel polls, so the
// kernel never polls host memory while it streams. (Measured on the H100: with the kernel still polling
// host words, its PCIe reads throttled the copy engines to 2–5 GB/s at 264 blocks; 16 blocks streamed
// 33 GB/s.) The offset index's slots are not copied: the kernel reads an input slot's fields, and writes
// an output slot's, in the host index itself — one access per frame, not a poll — because each copy costs
// the engines a few µs besides its bytes (copy-engines both ways, one stream each: 48 GB/s in 4 MiB
// chunks, 42 in 1 MiB, 28 in 256 KiB), and a slot copy per run was a third of the bridge's copies
// (64 KiB frames both ways: 36.2 → 39.2 GB/s without them, H100, 2026-11-23). One host thread moves data
// between the replicas with cudaMemcpyAsync, streams per topic so both directions run at once, and
// carries each publish and release across without a kernel launch:
//  - to the device (CPU publishers, GPU subscribers): a run of consecutive published frames is copied in
//    one go, then its seq words from pinned staging, on one stream: the stream orders the flag after the
//    data (BigKernel's trick). The end of stream follows the last seq word. The kernel's releases go
//    straight to the host's release words (remote stores, never read back).
//  - to the host (GPU publishers, CPU subscribers): the kernel writes frames in device memory and the
//    slots' fields in the host index, and publishes into pinned seq words; the thread copies each run's
//    frames out — their published bytes, read from those slots: a map that publishes part of its frame
//    sends that part — and stores the host seq words once the copy's event has completed. The CPU groups'
//    releases are copied into the device's release words, which the kernel checks before it reuses a slot.
// A columnar topic whose GPU subscribers say which pages they read (frame_selector) is carried by parts:
// each frame's index pages and the data pages some subscriber may need, so what the index rules out never
// crosses PCIe — but for gaps of at most part_gap_bytes between two such parts, which cross with them
// (cheaper than another copy); the rest of the device replica keeps stale bytes no subscriber touches.
// A run is every published offset in a row whose heap frames are consecutive (to the host: always, the
// kernel's frame is its slot), up to max_run_bytes (a selecting route: of the bytes it expects to copy,
// from the share of its frames the last run kept): the more the bridge falls behind, the larger its
// copies, so per-copy costs never set the pace. The topic's slot protocol already guarantees that no
// replica is overwritten while anyone still reads it: a slot is reused only after every group released
// its previous frame, and a group can only release what the bridge delivered.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "framework/core/cuda_buffer.hpp"
#include "framework/core/errors.hpp"
#include "framework/core/frame.hpp"
#include "topics/topic.hpp"

namespace xf {

/// What one bridged topic moved (relaxed: read for stats).
struct bridge_counters {
  std::uint64_t copies = 0;  ///< copy calls for frames (a batch of a selecting run's parts is one)
  std::uint64_t bytes = 0;   ///< frame bytes copied
  std::uint64_t frames = 0;  ///< offsets carried across (void ones included)
  /// Every CUDA call the thread made for this topic (copies of frames, seq and release words, events and
  /// their polls): with `busy_ns`, what each batch costs the thread.
  std::uint64_t cuda_calls = 0;
  /// Time the thread spent on looks at this topic that moved something (issued copies, published frames,
  /// mirrored releases): next to the stream's duration it says whether the one thread sets the pace.
  std::uint64_t busy_ns = 0;
  /// Bytes of frames left behind: the pages no GPU subscriber reads (a columnar topic's skip transfer).
  std::uint64_t bytes_skipped = 0;
  /// A selecting route: time the thread waited for its runs' parts to be chosen (part of busy_ns).
  std::uint64_t choice_wait_ns = 0;
};

class copy_bridge {
 public:
  /// The largest gap between two parts a selecting route reads that is copied rather than left behind:
  /// a part costs the copy engines about as much as 15 KB at the link's rate (H200: 4 KiB pages that
  /// bloom filters picked, 79 000 parts and 323 MB a pass, crossed at 12 GB/s, whole columns of 64 KiB
  /// runs at 55 GB/s).
  static constexpr std::uint64_t part_gap_bytes = 16 * 1024;
  struct route {
    std::size_t topic;  ///< index into the topics given to the constructor
    bool to_device;     ///< CPU publishers → GPU subscribers; else GPU publishers → CPU subscribers
    /// To the device: copy only these parts of each frame (empty: whole frames, as published); called on
    /// the bridge's threads.
    frame_selector select = {};
  };

  /// Allocates each routed topic's device replica (cudaMalloc: capacity × frame bytes), seq or release
  /// words and streams on GPU `device` (a CUDA ordinal), which must be the calling thread's current
  /// device; the bridge's thread makes it its own. `topics` must outlive the bridge. Throws cuda_error.
  copy_bridge(const std::vector<topic>& topics, std::vector<route> routes, int device);
  ~copy_bridge();
  copy_bridge(const copy_bridge&) = delete;
  copy_bridge& operator=(const copy_bridge&) = delete;

  /// Device memory the bridge needs for these topics (their replicas), to budget before allocating.
  static std::uint64_t device_bytes(const topic_config& config) {
    return config.frame_bytes * config.capacity;
  }

  /// The view the kernel gets of `topic`: frames in the device replica, seq words the bridge's, slots the
  /// host index's.
  /// `topic` must be routed.
  topic_view kernel_view(std::size_t topic) const;
  bool routes(std::size_t topic) const;

  /// Starts the thread. It ends by itself once every routed topic's stream ended and was carried across.
  void start();
  /// Ends the thread now (a failed or aborted run) and joins it.
  void stop() noexcept;
  /// True once the thread ended, by itself or by stop(), or failed.
  bool finished() const noexcept { return finished_.load(std::memory_order_acquire); }
  /// A CUDA call of the thread failed: which topic, which offset, what CUDA said.
  std::optional<run_error> error() const;
  /// Copies and bytes per route, in route order.
  std::vector<bridge_counters> counters() const;
  const std::vector<route>& routes() const noexcept { return routes_; }
  /// Gives the device memory and streams up without freeing them (a wedged context).
  void leak() noexcept;

 private:
  struct lane;
  void loop();
  bool step_to_device(lane& l);
  bool step_to_host(lane& l);
  bool mirror_releases(lane& l);
  void choose_ahead(lane& l);

  const std::vector<topic>& topics_;
  std::vector<route> routes_;
  int device_;
  std::vector<std::unique_ptr<lane>> lanes_;
  /// Threads that choose the parts of a selecting route's frames as they are published, ahead of the
  /// bridge's thread (the index is read frame by frame on the CPU, which one thread cannot do at the link's
  /// rate); none without a selecting route. They make no CUDA call.
  std::vector<std::thread> choosers_;
  std::atomic<bool> choice_failed_{false};
  std::exception_ptr choice_error_;  ///< the first choice that threw (under error_mutex_)
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> finished_{false};
  mutable std::mutex error_mutex_;
  std::optional<run_error> error_;
};

}  // namespace xf
