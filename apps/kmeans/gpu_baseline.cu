// The K-means assignment pass as users write it without a prefetch source (see gpu_baseline.hpp).
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/dataset_support/parallel.hpp"
#include "apps/kmeans/gpu_baseline.hpp"
#include "framework/core/cuda_buffer.hpp"
#include "operators/transforms/kmeans_assign.hpp"

namespace xf::apps::kmeans {
namespace {

struct centre_table {
  float xyz[3 * kmeans_assign_op::max_centres];
  std::uint32_t k;
};

__global__ void assign_records(const particle* records, std::uint64_t n, centre_table centres,
                               std::uint32_t* ids) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride)
    ids[i] = nearest_centre(records[i].x, records[i].y, records[i].z, centres.xyz, centres.k);
}

/// One chunk's buffers and the stream its work is ordered on.
struct chunk_slot {
  particle* staged = nullptr;     // host side of the records (pinned, or managed)
  particle* on_device = nullptr;  // where the kernel reads them (device memory, or the same managed buffer)
  std::uint32_t* ids_device = nullptr;
  std::uint32_t* ids_host = nullptr;
  std::uint64_t first = 0, count = 0;  // the chunk in flight (count 0: none)
};

cudaMemLocation location(cudaMemLocationType type, int id) {
  cudaMemLocation l{};
  l.type = type;
  l.id = id;
  return l;
}

/// Managed memory owned for the pass (cudaMallocManaged; the project's rule: never more than is free).
class managed_block {
 public:
  explicit managed_block(std::size_t bytes) {
    XF_CUDA_TRY(cudaMallocManaged(&p_, bytes, cudaMemAttachGlobal));
  }
  ~managed_block() { cuda_ok(cudaFree(p_)); }
  managed_block(const managed_block&) = delete;
  managed_block& operator=(const managed_block&) = delete;
  void* get() const noexcept { return p_; }

 private:
  void* p_ = nullptr;
};

}  // namespace

const char* name_of(transfer_mode m) {
  switch (m) {
    case transfer_mode::single:
      return "single";
    case transfer_mode::double_buffer:
      return "double";
    case transfer_mode::managed:
      return "managed";
  }
  return "?";
}

gpu_baseline_result assign_pass_on_gpu(std::span<particle> particles, const gpu_baseline_config& cfg) {
  if (cfg.clusters == 0 || cfg.clusters > kmeans_assign_op::max_centres)
    throw std::invalid_argument("kmeans baseline: clusters must be 1 to " +
                                std::to_string(kmeans_assign_op::max_centres));
  if (cfg.chunk_particles == 0) throw std::invalid_argument("kmeans baseline: chunk_particles must be >= 1");
  if (particles.size() < cfg.clusters)
    throw std::invalid_argument("kmeans baseline: fewer particles than clusters");
  centre_table centres{};
  centres.k = cfg.clusters;
  for (std::uint32_t c = 0; c < cfg.clusters; ++c) {
    centres.xyz[3 * c] = particles[c].x;
    centres.xyz[3 * c + 1] = particles[c].y;
    centres.xyz[3 * c + 2] = particles[c].z;
  }
  int device = 0;
  XF_CUDA_TRY(cudaGetDevice(&device));
  const std::uint64_t chunk = std::min<std::uint64_t>(cfg.chunk_particles, particles.size());
  const int slots = cfg.mode == transfer_mode::single ? 1 : 2;
  const std::size_t record_bytes = chunk * sizeof(particle), id_bytes = chunk * sizeof(std::uint32_t);

  std::size_t free_bytes = 0, total_bytes = 0;
  XF_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (static_cast<std::uint64_t>(slots) * (record_bytes + 2 * id_bytes) > free_bytes / 2)
    throw std::invalid_argument(
        "kmeans baseline: the chunks would take more than half the free device memory");

  std::vector<pinned_buffer<particle>> pinned_records;
  std::vector<device_buffer<particle>> device_records;
  std::vector<std::unique_ptr<managed_block>> managed;
  std::vector<device_buffer<std::uint32_t>> device_ids;
  std::vector<pinned_buffer<std::uint32_t>> pinned_ids;
  std::vector<cuda_stream> streams(slots);
  std::vector<chunk_slot> slot(slots);
  for (int s = 0; s < slots; ++s) {
    if (cfg.mode == transfer_mode::managed) {
      managed.push_back(std::make_unique<managed_block>(record_bytes + id_bytes));
      slot[s].staged = slot[s].on_device = static_cast<particle*>(managed.back()->get());
      slot[s].ids_device = slot[s].ids_host =
          reinterpret_cast<std::uint32_t*>(static_cast<std::byte*>(managed.back()->get()) + record_bytes);
    } else {
      pinned_records.emplace_back(chunk);
      device_records.emplace_back(chunk);
      device_ids.emplace_back(chunk);
      pinned_ids.emplace_back(chunk);
      slot[s].staged = pinned_records.back().get();
      slot[s].on_device = device_records.back().get();
      slot[s].ids_device = device_ids.back().get();
      slot[s].ids_host = pinned_ids.back().get();
    }
  }
  cudaDeviceProp prop{};
  XF_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  const unsigned blocks = static_cast<unsigned>(prop.multiProcessorCount) * 4, threads = 256;

  gpu_baseline_result r;
  r.particles = particles.size();
  std::vector<std::uint32_t> all_ids;  // for the CRC, in particle order
  all_ids.reserve(particles.size());
  // Waits for a slot's chunk and stores its ids into the records (the CPU's half of the write-back).
  worker_team team(cfg.threads);
  const auto finish = [&](chunk_slot& s, cudaStream_t stream) {
    if (s.count == 0) return;
    XF_CUDA_TRY(cudaStreamSynchronize(stream));
    team.run([&](unsigned t) {
      const index_range part = split_range(s.count, team.size(), t);
      for (std::uint64_t i = part.begin; i < part.end; ++i) particles[s.first + i].cluster = s.ids_host[i];
    });
    all_ids.insert(all_ids.end(), s.ids_host, s.ids_host + s.count);
    s.count = 0;
  };
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t next = 0;
  for (int turn = 0; next < particles.size(); turn = (turn + 1) % slots) {
    chunk_slot& s = slot[turn];
    const cudaStream_t stream = streams[turn].get();
    finish(s, stream);  // the slot's previous chunk (double buffering: the other slot's runs meanwhile)
    s.first = next;
    s.count = std::min<std::uint64_t>(chunk, particles.size() - next);
    next += s.count;
    team.run([&](unsigned t) {
      const index_range part = split_range(s.count, team.size(), t);
      std::memcpy(s.staged + part.begin, particles.data() + s.first + part.begin,
                  part.size() * sizeof(particle));
    });
    if (cfg.mode == transfer_mode::managed) {
      XF_CUDA_TRY(cudaMemPrefetchAsync(s.staged, s.count * sizeof(particle),
                                       location(cudaMemLocationTypeDevice, device), 0, stream));
    } else {
      XF_CUDA_TRY(
          cudaMemcpyAsync(s.on_device, s.staged, s.count * sizeof(particle), cudaMemcpyHostToDevice, stream));
    }
    assign_records<<<blocks, threads, 0, stream>>>(s.on_device, s.count, centres, s.ids_device);
    XF_CUDA_TRY(cudaGetLastError());
    if (cfg.mode == transfer_mode::managed) {
      XF_CUDA_TRY(cudaMemPrefetchAsync(s.ids_device, s.count * sizeof(std::uint32_t),
                                       location(cudaMemLocationTypeHost, 0), 0, stream));
    } else {
      XF_CUDA_TRY(cudaMemcpyAsync(s.ids_host, s.ids_device, s.count * sizeof(std::uint32_t),
                                  cudaMemcpyDeviceToHost, stream));
    }
    r.bytes_to_device += s.count * sizeof(particle);
    r.bytes_to_host += s.count * sizeof(std::uint32_t);
  }
  // The chunks still in flight, oldest first.
  for (int k = 0; k < slots; ++k) {
    const int s = (static_cast<int>((particles.size() + chunk - 1) / chunk) + k) % slots;
    finish(slot[s], streams[s].get());
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.ids_crc = static_cast<std::uint32_t>(
      crc32_z(0, reinterpret_cast<const Bytef*>(all_ids.data()), all_ids.size() * sizeof(std::uint32_t)));
  return r;
}

}  // namespace xf::apps::kmeans
