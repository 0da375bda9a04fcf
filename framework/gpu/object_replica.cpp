// Version buffers in device memory: allocation, pinning, the publish's copies.
#include "framework/gpu/object_replica.hpp"

namespace xf {
namespace {

/// Makes `device` the calling thread's current device. A writer's thread that never chose one has GPU 0
/// current, and its first call would create GPU 0's primary context: memory on a GPU this process may not
/// run on (another rank's, perhaps).
void use_device(int device) {
  int current = -1;
  XF_CUDA_TRY(cudaGetDevice(&current));
  if (current != device) XF_CUDA_TRY(cudaSetDevice(device));
}

}  // namespace

cuda_version_replica::cuda_version_replica(shared::versioned_object& object, shared::version_words* words,
                                           int device)
    : device_(device), buffers_(object.host_buffers().size()) {
  const std::span<std::byte> host = object.host_buffers();
  XF_CUDA_TRY(cudaHostRegister(host.data(), host.size(), cudaHostRegisterDefault));
  pinned_buffers_ = host.data();
  XF_CUDA_TRY(cudaHostRegister(words, 4096, cudaHostRegisterMapped));
  pinned_words_ = words;
  void* on_device = nullptr;
  XF_CUDA_TRY(cudaHostGetDevicePointer(&on_device, words, 0));
  device_words_ = static_cast<shared::version_words*>(on_device);
}

cuda_version_replica::~cuda_version_replica() {
  if (pinned_words_ != nullptr) cuda_ok(cudaHostUnregister(pinned_words_));
  if (pinned_buffers_ != nullptr) cuda_ok(cudaHostUnregister(pinned_buffers_));
}

void cuda_version_replica::copy(std::uint64_t at, const std::byte* host, std::uint64_t bytes) {
  use_device(device_);
  XF_CUDA_TRY(cudaMemcpyAsync(buffers_.get() + at, host, bytes, cudaMemcpyHostToDevice, stream_.get()));
}

void cuda_version_replica::finish() {
  // The writer spins on the copies' event rather than sleeping in cudaStreamSynchronize: a version's
  // copies take microseconds, and a publish is how long readers of the next frames wait.
  use_device(device_);
  XF_CUDA_TRY(cudaEventRecord(copied_.get(), stream_.get()));
  for (;;) {
    const cudaError_t e = cudaEventQuery(copied_.get());
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) XF_CUDA_TRY(e);
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

void cuda_version_replica::leak() noexcept {
  buffers_.leak();
  stream_.leak();
  pinned_buffers_ = pinned_words_ = nullptr;
}

}  // namespace xf
