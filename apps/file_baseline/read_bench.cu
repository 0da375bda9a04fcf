// xeflow-file-read's work: the file cache in device memory, the kernels reading strides or chains, the
// check.
#include "apps/file_baseline/read_bench.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>

#include "apps/file_baseline/file_checksum.hpp"
#include "apps/file_baseline/read_chain.hpp"
#include "framework/core/cuda_buffer.hpp"
#include "framework/core/cuda_check.hpp"
#include "framework/files/file_cache.hpp"
#include "framework/gpu/block_read.cuh"
#include "framework/gpu/block_readers.cuh"
#include "framework/gpu/device_cache_memory.hpp"

namespace xf::file_baseline {
namespace {

struct read_args {
  file_cache_view view;
  fetch_block* blocks;
  block_reader* readers;
  std::byte* buffers;           ///< [blocks × buffer_stride]
  std::uint64_t buffer_stride;  ///< the request rounded up to 16 bytes, and 16 more (the tail's padding)
  std::uint64_t request;
  std::uint64_t file_size;
  std::uint64_t stride;      ///< stride pattern: the bytes of each block's stride
  std::uint64_t page_bytes;  ///< random pattern: the chains start on pages
  std::uint32_t reads;       ///< random pattern: reads per block
  std::uint32_t room;
  fetch_counters* counters;  ///< [blocks]
  unsigned long long* sum;
  unsigned long long* bytes;  ///< random pattern: the bytes the chains read
  std::uint32_t* failed;      ///< 1 + block_read_status of the first failed read
};

/// One read of the block into `buffer` (padded with zeros to a multiple of 8 bytes), reading ahead no
/// further than `readahead_end`, its words added to the thread's `local` and its first word in
/// `first_word` (every thread's the same); false, with `a.failed` set, where the read failed. Every thread
/// of the block calls it alike.
__device__ bool read_and_sum(const read_args& a, const file_cache_view& view, deferred_moves& moves,
                             fetch_counters& counters, std::byte* buffer, std::uint64_t at, std::uint64_t n,
                             std::uint64_t readahead_end, unsigned long long& local,
                             std::uint64_t& first_word) {
  const block_read_status status = block_read(view, a.blocks[blockIdx.x], a.readers[blockIdx.x], moves,
                                              a.room, counters, 0, at, n, buffer, readahead_end);
  if (status != block_read_status::ok) {
    if (threadIdx.x == 0) atomicCAS(a.failed, 0u, 1u + static_cast<std::uint32_t>(status));
    return false;
  }
  if (threadIdx.x == 0)
    for (std::uint64_t b = n; b % 8 != 0; ++b) buffer[b] = std::byte{0};
  __syncthreads();
  const auto* words = reinterpret_cast<const std::uint64_t*>(buffer);
  for (std::uint64_t w = threadIdx.x; w < (n + 7) / 8; w += blockDim.x) local += words[w];
  first_word = words[0];
  __syncthreads();  // the words are read before the next read overwrites the buffer
  return true;
}

/// Block b reads bytes [b·stride, (b+1)·stride) of the file, request by request, and adds up its 64-bit
/// words (a short tail zero-padded: file_checksum's sum). Its readahead stops at its stride's end: the
/// bytes after it are the next block's.
__global__ void read_strides(read_args a) {
  __shared__ deferred_moves moves;
  if (threadIdx.x == 0) moves.clear();
  __syncthreads();
  const file_cache_view view = a.view;
  fetch_counters counters{};
  std::byte* buffer = a.buffers + std::uint64_t{blockIdx.x} * a.buffer_stride;
  const std::uint64_t begin = std::uint64_t{blockIdx.x} * a.stride;
  const std::uint64_t end = begin + a.stride < a.file_size ? begin + a.stride : a.file_size;
  unsigned long long local = 0;
  std::uint64_t word = 0;
  for (std::uint64_t at = begin; at < end; at += a.request) {
    const std::uint64_t n = a.request < end - at ? a.request : end - at;
    if (!read_and_sum(a, view, moves, counters, buffer, at, n, end, local, word)) break;
  }
  atomicAdd(a.sum, local);
  if (threadIdx.x == 0) a.counters[blockIdx.x] = counters;
}

/// Block b walks its chain (read_chain.hpp): `reads` reads, the first at a page picked by b, each next one
/// where the first word of the bytes just read sends it — data-dependent, so no readahead can know it —
/// adding up the words as read_strides does and counting the bytes.
__global__ void read_chains(read_args a) {
  __shared__ deferred_moves moves;
  if (threadIdx.x == 0) moves.clear();
  __syncthreads();
  const file_cache_view view = a.view;
  fetch_counters counters{};
  std::byte* buffer = a.buffers + std::uint64_t{blockIdx.x} * a.buffer_stride;
  unsigned long long local = 0, bytes = 0;
  std::uint64_t at = chain_first_offset(blockIdx.x, a.file_size, a.page_bytes);
  for (std::uint32_t step = 0; step < a.reads; ++step) {
    const std::uint64_t n = chain_read_bytes(at, a.file_size, a.request);
    std::uint64_t word = 0;
    if (!read_and_sum(a, view, moves, counters, buffer, at, n, no_readahead_end, local, word)) break;
    bytes += n;
    at = chain_next_offset(word, blockIdx.x, step, a.file_size, a.request);
  }
  atomicAdd(a.sum, local);
  if (threadIdx.x == 0) {
    atomicAdd(a.bytes, bytes);
    a.counters[blockIdx.x] = counters;
  }
}

}  // namespace

read_result run_reads(const read_config& c) {
  if (c.blocks == 0 || c.threads == 0 || c.threads % 32 != 0 || c.threads > 1024)
    throw std::invalid_argument("blocks > 0 and 32 to 1024 threads a block, a multiple of 32");
  if (c.request == 0 || c.request % 8 != 0) throw std::invalid_argument("a request of a multiple of 8 bytes");
  const bool random = c.pattern == read_pattern::random;
  if (random && c.reads == 0) throw std::invalid_argument("random reads need at least one read a block");
  const auto site_of = [](std::uint32_t, std::uint64_t offset) {
    return fault_site{"xeflow-file-read", "", offset};
  };
  file_cache cache(c.cache, c.blocks, {cache_file{c.path, fault_site{"xeflow-file-read", "", std::nullopt}}},
                   site_of, std::chrono::milliseconds(30000), std::make_unique<device_cache_memory>());
  int device = 0;
  XF_CUDA_TRY(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  XF_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  read_result r;
  r.device = prop.name;
  r.direct = cache.files().file(0).direct;
  const std::uint64_t size = cache.sizes().at(0);
  if (size == 0) {  // nothing to read: the empty sum is the empty file's
    r.verified = c.verify;
    return r;
  }
  const std::uint64_t page = cache.view().page_bytes();
  const std::uint32_t request_pages = static_cast<std::uint32_t>((c.request + page - 1) / page) + 1;
  if (request_pages > cache.block_room())
    throw std::invalid_argument("a request spans " + std::to_string(request_pages) +
                                " pages, more than a block's " + std::to_string(cache.block_room()) +
                                " of the cache");

  // Each block's reader: its fetch item and entries for one request's pages.
  const block_readers readers(cache, c.request);
  const std::uint64_t buffer_stride = (c.request + 15) / 16 * 16 + 16;
  device_buffer<std::byte> buffers(std::size_t{c.blocks} * buffer_stride);
  device_buffer<fetch_counters> counters(c.blocks);
  device_buffer<unsigned long long> sum(1);
  device_buffer<unsigned long long> chain_bytes(1);
  device_buffer<std::uint32_t> failed(1);

  read_args a{};
  a.view = cache.view();
  a.blocks = cache.blocks();
  a.readers = readers.view().readers;
  a.buffers = buffers.get();
  a.buffer_stride = buffer_stride;
  a.request = c.request;
  a.file_size = size;
  a.stride = (size / c.blocks + c.request - 1) / c.request * c.request;
  if (a.stride == 0) a.stride = c.request;
  a.page_bytes = page;
  a.reads = c.reads;
  a.room = cache.block_room();
  a.counters = counters.get();
  a.sum = sum.get();
  a.bytes = chain_bytes.get();
  a.failed = failed.get();

  cache.start();
  cuda_event start(true), stop(true);
  cuda_stream stream;
  XF_CUDA_TRY(cudaEventRecord(start.get(), stream.get()));
  if (random)
    read_chains<<<c.blocks, c.threads, 0, stream.get()>>>(a);
  else
    read_strides<<<c.blocks, c.threads, 0, stream.get()>>>(a);
  XF_CUDA_TRY(cudaGetLastError());
  XF_CUDA_TRY(cudaEventRecord(stop.get(), stream.get()));
  // A failed or hung read is answered (the I/O watchdog), so the kernel ends; its error is the service's.
  while (cudaStreamQuery(stream.get()) == cudaErrorNotReady)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  XF_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  if (std::optional<run_error> error = cache.poll()) throw *error;
  std::uint32_t failure = 0;
  XF_CUDA_TRY(cudaMemcpy(&failure, failed.get(), sizeof failure, cudaMemcpyDeviceToHost));
  if (failure != 0)
    throw std::runtime_error(failure == 1 + static_cast<std::uint32_t>(block_read_status::too_large)
                                 ? "a read spans more pages than a block may hold"
                                 : "a read failed");
  float ms = 0;
  XF_CUDA_TRY(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  r.seconds = ms / 1e3;
  r.bytes = size;
  if (random) XF_CUDA_TRY(cudaMemcpy(&r.bytes, chain_bytes.get(), sizeof r.bytes, cudaMemcpyDeviceToHost));
  std::vector<fetch_counters> per_block(c.blocks);
  XF_CUDA_TRY(cudaMemcpy(per_block.data(), counters.get(), sizeof(fetch_counters) * c.blocks,
                         cudaMemcpyDeviceToHost));
  for (const fetch_counters& f : per_block) r.fetch += f;
  unsigned long long device_sum = 0;
  XF_CUDA_TRY(cudaMemcpy(&device_sum, sum.get(), sizeof device_sum, cudaMemcpyDeviceToHost));
  cache.stop();
  r.io = cache.io_stats();
  r.device_checksum = device_sum;
  if (c.verify && random) {
    // The host walks the same chains from the file itself: a wrong byte on the device sends its chain
    // elsewhere, and the sums (or the bytes) differ.
    const chain_sum host =
        chain_checksum(cache.files(), 0, size, c.blocks, c.reads, c.request, page,
                       std::min(16u, std::max(1u, std::thread::hardware_concurrency())), "xeflow-file-read");
    r.file_checksum = host.sum;
    r.verified = r.device_checksum == host.sum && r.bytes == host.bytes;
  } else if (c.verify) {
    r.file_checksum =
        file_checksum(cache.files(), 0, size, std::max<std::uint64_t>(c.request / 4096 * 4096, 1 << 20),
                      "xeflow-file-read");
    r.verified = r.device_checksum == r.file_checksum;
  }
  return r;
}

}  // namespace xf::file_baseline
