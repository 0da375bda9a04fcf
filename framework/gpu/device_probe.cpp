// GPU detection through the CUDA runtime; host-only builds report that they have none.
#include "framework/plan/device_probe.hpp"

#include <cstdio>

#include <cuda_runtime_api.h>

namespace xf {
namespace {

std::string describe(cudaError_t err) {
  std::string text = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
  cudaGetLastError();  // clear it: the host executor runs on
  return text;
}

/// CUDA's version number (1000 × major + 10 × minor) as "major.minor".
std::string version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace

cuda_versions probe_cuda_versions() noexcept {
  cuda_versions versions;
  int version = 0;
  if (cudaRuntimeGetVersion(&version) == cudaSuccess && version > 0)
    versions.runtime = version_text(version);
  else
    cudaGetLastError();
  // 0 (with success) where no driver is installed; an error where the runtime cannot load it.
  version = 0;
  if (cudaDriverGetVersion(&version) == cudaSuccess && version > 0)
    versions.driver = version_text(version);
  else
    cudaGetLastError();
  return versions;
}

bool select_device(std::uint32_t ordinal) noexcept {
  if (cudaSetDevice(static_cast<int>(ordinal)) == cudaSuccess) return true;
  cudaGetLastError();
  return false;
}

std::uint32_t device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return static_cast<std::uint32_t>(count);
}

device_status probe_device(std::uint32_t ordinal) noexcept {
  device_status status;
  status.ordinal = ordinal;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    status.reason = describe(err);
    return status;
  }
  if (count == 0) {
    status.reason = "no CUDA-capable device";
    return status;
  }
  if (ordinal >= static_cast<std::uint32_t>(count)) {
    status.reason = "no GPU " + std::to_string(ordinal) + ": this machine has " + std::to_string(count) +
                    (count == 1 ? " GPU (0)" : " GPUs (0-" + std::to_string(count - 1) + ")");
    return status;
  }
  cudaDeviceProp prop{};
  err = cudaGetDeviceProperties(&prop, static_cast<int>(ordinal));
  if (err != cudaSuccess) {
    status.reason = describe(err);
    return status;
  }
  status.name = prop.name;
  // The GPU executor's topics need CPU and GPU to touch managed memory at once, and its persistent
  // kernel needs a cooperative launch (all blocks resident).
  if (!prop.concurrentManagedAccess) {
    status.reason =
        std::string(prop.name) + " has no concurrent managed access (concurrentManagedAccess = 0)";
    return status;
  }
  if (!prop.cooperativeLaunch) {
    status.reason = std::string(prop.name) + " has no cooperative launch";
    return status;
  }
  status.sm_count = static_cast<std::uint32_t>(prop.multiProcessorCount);
  int mps = 0;
  if (cudaDeviceGetAttribute(&mps, cudaDevAttrMpsEnabled, static_cast<int>(ordinal)) == cudaSuccess)
    status.mps = mps != 0;
  else
    cudaGetLastError();
  char memory[32];
  std::snprintf(memory, sizeof memory, "%.1f GiB",
                static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024 * 1024));
  status.usable = true;
  status.description = std::string(prop.name) + " (sm_" + std::to_string(prop.major) +
                       std::to_string(prop.minor) + ", " + std::to_string(prop.multiProcessorCount) +
                       " SMs, " + memory + ")";
  return status;
}

}  // namespace xf
