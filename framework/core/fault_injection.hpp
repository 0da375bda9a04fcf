// Fault injection for the tests: faults that CI's disks, allocators and threads never produce on their own
// (a read failing with EIO, a write with ENOSPC, a worker thread dying mid-frame), armed by the environment
// variable XEFLOW_INJECT and off by default. A site costs one relaxed atomic load while nothing is armed
// (`armed`); only an armed site takes the slow path (`fires`). docs/fault-injection.md lists the sites.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace xf::inject {

/// Where a fault can be injected. Each site names what its `@N` counts.
enum class site : std::uint8_t {
  cache_read,     ///< the file cache's I/O threads: a read covering byte N of a file
  sink_write,     ///< an output file's writes (file_sink, result files): a write covering byte N
  cpu_frame,      ///< a CPU operator's frame hook at offset N
  gpu_frame,      ///< a kernel operator's frame at offset N (both executors)
  worker,         ///< a CPU worker thread, mid-frame at offset N (after its hook, before it publishes)
  topic_alloc,    ///< the allocation of topic number N (in the topology's order, from 0)
  thread_create,  ///< the creation of the run's N-th thread (CPU workers, then host executor blocks)
  count
};

/// What happens there.
enum class kind : std::uint8_t {
  eio,     ///< the read or write fails with EIO
  enospc,  ///< the write fails with ENOSPC
  short_,  ///< the read returns short: the file seems to end at byte N
  hang,    ///< the read never returns until the run gives up on it (the watchdog) or stops
  throw_,  ///< the hook throws
  fail,    ///< the GPU frame fails (as frame_task::fail would)
  kill,    ///< the worker thread exits (pthread_exit) without finishing its frame
  nomem,   ///< the allocation fails (std::bad_alloc)
  again,   ///< the thread cannot be created (EAGAIN)
};

/// One bit per armed site. Written only while arming (before the run's threads start).
extern std::atomic<std::uint32_t> armed_sites;

/// Whether any fault is armed at `s`: one relaxed load, the only cost of a disarmed site.
inline bool armed(site s) noexcept {
  return (armed_sites.load(std::memory_order_relaxed) >> static_cast<unsigned>(s)) & 1u;
}

/// A fault that fired: what it does, and its N.
struct fired {
  kind what;
  std::uint64_t at;
};

/// The slow path of an armed site: the fault armed at `s` for the event covering [first, end) (bytes or
/// offsets, as the site counts) of operator `op` (a fault restricted to another operator does not fire),
/// once per armed fault: the first event that matches claims it. Thread-safe.
std::optional<fired> fires(site s, std::uint64_t first, std::uint64_t end, std::string_view op = {});

/// The N of the fault armed at `s` for operator `op` (any fault there when several), for sites whose N
/// the caller must know in advance (gpu_frame: the kernel's table carries it to the device).
std::optional<std::uint64_t> armed_at(site s, std::string_view op = {});

/// Arms the faults of a spec: "SITE[/OPERATOR]:KIND@N[,...]". Replaces what was armed. Throws
/// std::invalid_argument naming the malformed part and what is allowed. An empty spec disarms.
void arm(std::string_view spec);
/// Arms XEFLOW_INJECT's spec when the variable is set; returns it ("" when unset).
std::string arm_from_environment();

/// "SITE:KIND@N" of a fault, for the messages of the faults it causes.
std::string describe(site s, kind k, std::uint64_t at);

}  // namespace xf::inject
