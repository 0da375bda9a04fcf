// accelerator: where a shared object's accelerator copy lives and how its bytes move, as the coherence
// protocols see it. The library's CUDA implementation moves them with the copy engines; host_accelerator
// (below) keeps the "accelerator" copies in host memory, for tests and for machines without a GPU.
#pragma once

#include <cstddef>
#include <cstring>
#include <new>

namespace xf::shared {

class accelerator {
 public:
  virtual ~accelerator() = default;

  /// Room for an object's accelerator copy, and its address there.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void release(void* accelerator_copy) noexcept = 0;
  /// Host bytes to the accelerator copy. May return before the bytes have moved: `host` stays unchanged
  /// until finish_to_accelerator() returns (the library writes no range it has sent until then).
  virtual void to_accelerator(void* accelerator_copy, const void* host, std::size_t bytes) = 0;
  /// Returns once every to_accelerator() issued so far has completed.
  virtual void finish_to_accelerator() = 0;
  /// The accelerator copy's bytes to the host; returns once they are there.
  virtual void to_host(void* host, const void* accelerator_copy, std::size_t bytes) = 0;
  /// Whether to_host and to_accelerator may be called in a signal handler (async-signal-safe): true for a
  /// memcpy, false for a driver call, which the library then makes from a thread of its own.
  virtual bool transfers_signal_safe() const = 0;

  /// Whether the host may map an object's pages at the address allocate() returned (MAP_FIXED over the
  /// accelerator's reservation there): then one pointer names the accelerator copy in kernels and the host
  /// pages on the CPU. Where it does, release() must find the reservation's placeholder back in place.
  virtual bool single_address() const { return false; }
  /// The library's own view of an object's host pages, the host side of every transfer, after it is mapped
  /// and before it is unmapped (an accelerator may pin it for its copy engines).
  virtual void host_view_created(void* /*view*/, std::size_t /*bytes*/) {}
  virtual void host_view_released(void* /*view*/, std::size_t /*bytes*/) noexcept {}
  /// Called first on a thread of the library's own that will make transfers (transfer_agent).
  virtual void bind_thread() {}
  /// Waits for the kernels launched so far: the sync point's first step.
  virtual void wait_for_kernels() {}
};

/// The accelerator's copies in host memory, moved by memcpy: the protocols without a GPU.
class host_accelerator final : public accelerator {
 public:
  void* allocate(std::size_t bytes) override { return ::operator new (bytes, std::align_val_t{4096}); }
  void release(void* copy) noexcept override { ::operator delete (copy, std::align_val_t{4096}); }
  void to_accelerator(void* copy, const void* host, std::size_t bytes) override {
    std::memcpy(copy, host, bytes);
  }
  void finish_to_accelerator() override {}
  void to_host(void* host, const void* copy, std::size_t bytes) override { std::memcpy(host, copy, bytes); }
  bool transfers_signal_safe() const override { return true; }
};

}  // namespace xf::shared
