// transfer_agent: moves a shared object's bytes for a fault handler whose accelerator may not be called in
// signal context. A CUDA transfer takes driver locks that the faulting thread may hold, and no driver
// promises async-signal safety, so the faulting thread hands the transfer to a thread of the agent's own
// and waits on a futex: posting, waking and waiting are a few atomics and futex system calls, all
// async-signal-safe. One request at a time (a transfer is bound by the link, not by the hand-off); faulting
// threads queue on a spin flag that no thread holds while it could fault.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>

#include "framework/shared/accelerator.hpp"

namespace xf::shared {

class transfer_agent {
 public:
  /// Starts the agent's thread; `device` must outlive the agent.
  explicit transfer_agent(accelerator& device);
  ~transfer_agent();
  transfer_agent(const transfer_agent&) = delete;
  transfer_agent& operator=(const transfer_agent&) = delete;

  /// The accelerator's calls, made by the agent's thread; each returns once the call has returned there.
  /// Async-signal-safe.
  void to_accelerator(void* accelerator_copy, const void* host, std::size_t bytes);
  void finish_to_accelerator();
  void to_host(void* host, const void* accelerator_copy, std::size_t bytes);

 private:
  enum class kind : std::uint32_t { to_accelerator, finish, to_host };
  enum : std::uint32_t { idle = 0, posted = 1, done = 2, stopping = 3 };

  void submit(kind k, void* destination, const void* source, std::size_t bytes);
  void loop();

  accelerator& device_;
  const std::chrono::microseconds spin_;      ///< how long a waiting side spins before it sleeps
  std::atomic_flag busy_ = ATOMIC_FLAG_INIT;  ///< held by the thread whose request is in `state_`
  std::atomic<std::uint32_t> state_{idle};    ///< the futex word
  kind kind_ = kind::finish;
  void* destination_ = nullptr;
  const void* source_ = nullptr;
  std::size_t bytes_ = 0;
  bool failed_ = false;  ///< the accelerator threw: the faulting thread aborts (a fault cannot throw)
  std::thread thread_;
};

}  // namespace xf::shared
