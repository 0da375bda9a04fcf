// A shared object's version buffers in device memory, for the GPU operators that read it inside the
// kernel (framework/shared/versioned_object.hpp): each publish copies the blocks that changed from the
// host's buffer of that version, on a stream of the replica's own, and waits for them before the version's
// entry is stored. The host buffers are pinned for the copy engines; the version table's words are pinned
// and mapped, since the kernel reads the horizon and the entries where the writer stores them. The writer
// publishes on a thread of its own (a CPU operator's worker), which the replica makes use its GPU.
#pragma once

#include <memory>

#include "framework/core/cuda_buffer.hpp"
#include "framework/shared/versioned_object.hpp"

namespace xf {

class cuda_version_replica final : public shared::version_replica {
 public:
  /// For `object`, whose table is `words` (page-aligned host memory the caller owns), on GPU `device` (a
  /// CUDA ordinal; the buffers are allocated on the calling thread's current device, which must be it).
  /// Throws cuda_error.
  cuda_version_replica(shared::versioned_object& object, shared::version_words* words, int device);
  ~cuda_version_replica() override;
  cuda_version_replica(const cuda_version_replica&) = delete;
  cuda_version_replica& operator=(const cuda_version_replica&) = delete;

  const std::byte* buffers() const override { return buffers_.get(); }
  /// Called by the object's writer, on its own thread: each first makes `device` that thread's current
  /// device (only a cudaGetDevice when it already is).
  void copy(std::uint64_t at, const std::byte* host, std::uint64_t bytes) override;
  void finish() override;
  /// The words as kernels address them.
  shared::version_words* device_words() const noexcept { return device_words_; }
  /// Gives the device memory and stream up without freeing them (a wedged context).
  void leak() noexcept;

 private:
  int device_;
  device_buffer<std::byte> buffers_;
  cuda_stream stream_;
  cuda_event copied_;
  void* pinned_buffers_ = nullptr;
  void* pinned_words_ = nullptr;
  shared::version_words* device_words_ = nullptr;
};

}  // namespace xf
