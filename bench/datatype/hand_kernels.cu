// The benchmark's hand-written kernels (hand_kernels.hpp): one thread per packed element, its place
// computed from the layout written into the kernel, 32-bit indices (the benchmark's sizes fit), blocks of
// 256 threads — the kernel a programmer writes for one shape.
#include <cuda_runtime.h>

#include <cstdint>

#include "bench/datatype/hand_kernels.hpp"
#include "framework/core/cuda_check.hpp"
#include "framework/core/errors.hpp"
#include "framework/datatype/traversal.hpp"

namespace xf::dt::bench {

namespace {

constexpr unsigned block_threads = 256;

unsigned blocks_for(std::int64_t items) {
  XF_EXPECTS(items < (std::int64_t{1} << 31), "the hand-written kernels index with 32 bits");
  return static_cast<unsigned>((items + block_threads - 1) / block_threads);
}

void check_launch(const char* kernel) {
  cuda_check(cudaGetLastError(), kernel, __FILE__, __LINE__);
}

__device__ unsigned element_index() {
  return blockIdx.x * block_threads + threadIdx.x;
}

__global__ void fill_pattern_kernel(std::uint64_t* words, std::size_t word_count, std::byte* tail,
                                    std::size_t tail_bytes, std::uint64_t seed) {
  const auto mix = [](std::uint64_t z) {  // splitmix64's finaliser
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t w = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; w < word_count; w += stride)
    words[w] = mix(seed + w);
  if (blockIdx.x == 0 && threadIdx.x < tail_bytes)
    tail[threadIdx.x] = static_cast<std::byte>(mix(seed + word_count + threadIdx.x));
}

__global__ void hand_vector_kernel(const double* in, double* out, unsigned elements, unsigned blocklength,
                                   unsigned stride) {
  const unsigned i = element_index();
  if (i >= elements) return;
  const unsigned block = i / blocklength;
  out[i] = in[block * stride + (i - block * blocklength)];
}

__global__ void hand_contiguous_kernel(const double* in, double* out, unsigned elements) {
  const unsigned i = element_index();
  if (i < elements) out[i] = in[i];
}

__global__ void hand_indexed_kernel(const double* in, double* out, unsigned elements, unsigned blocklength,
                                    const std::int64_t* displacements) {
  const unsigned i = element_index();
  if (i >= elements) return;
  const unsigned block = i / blocklength;
  out[i] = in[displacements[block] + (i - block * blocklength)];
}

__global__ void hand_indexed_varied_kernel(const double* in, double* out, unsigned elements,
                                           const std::int64_t* prefix, const std::int64_t* displacements,
                                           unsigned blocks) {
  const unsigned i = element_index();
  if (i >= elements) return;
  unsigned low = 0, high = blocks - 1;  // the last block with prefix <= i
  while (low < high) {
    const unsigned mid = (low + high + 1) / 2;
    if (prefix[mid] <= i)
      low = mid;
    else
      high = mid - 1;
  }
  out[i] = in[displacements[low] + (i - prefix[low])];
}

__global__ void hand_struct_kernel(const std::byte* in, std::byte* out, unsigned count) {
  const unsigned i = element_index();
  if (i >= count) return;
  const std::byte* s = in + std::size_t{i} * 24;
  const double d = *reinterpret_cast<const double*>(s);
  const int a = *reinterpret_cast<const int*>(s + 8), b = *reinterpret_cast<const int*>(s + 12);
  const std::byte c = s[16];
  std::byte packed[17];
  memcpy(packed, &d, 8);
  memcpy(packed + 8, &a, 4);
  memcpy(packed + 12, &b, 4);
  packed[16] = c;
  std::byte* o = out + std::size_t{i} * 17;  // 17-byte records: only byte-aligned
  for (int k = 0; k < 17; ++k) o[k] = packed[k];
}

__global__ void hand_gapped_struct_kernel(const std::byte* in, std::byte* out, unsigned count) {
  const unsigned i = element_index();
  if (i >= count) return;
  const std::byte* s = in + std::size_t{i} * 32;
  const double d = *reinterpret_cast<const double*>(s);
  const int a = *reinterpret_cast<const int*>(s + 16);
  const std::byte c = s[24];
  std::byte packed[13];
  memcpy(packed, &d, 8);
  memcpy(packed + 8, &a, 4);
  packed[12] = c;
  std::byte* o = out + std::size_t{i} * 13;
  for (int k = 0; k < 13; ++k) o[k] = packed[k];
}

__global__ void hand_subarray4d_kernel(const double* in, double* out, unsigned n, unsigned size,
                                       unsigned start) {
  const unsigned i = element_index();
  if (i >= n * n * n * n) return;
  const unsigned d = i % n, c = (i / n) % n, b = (i / (n * n)) % n, a = i / (n * n * n);
  out[i] = in[(((std::size_t{a} + start) * size + b + start) * size + c + start) * size + d + start];
}

__global__ void hand_nested_kernel(const double* in, double* out, unsigned elements) {
  const unsigned i = element_index();
  if (i >= elements) return;
  const unsigned outer = i / 6, r = i - outer * 6, block = r / 2;
  out[i] = in[outer * 32 + block * 3 + (r - block * 2)];  // 256-byte outer stride: 32 doubles
}

__global__ void traverse_kernel(serialized_view t, std::int64_t count, std::int64_t elements,
                                unsigned long long* sum) {
  extern __shared__ __align__(16) std::byte records[];
  const unsigned words = t.record_count * static_cast<unsigned>(sizeof(type_record)) / 8;
  for (unsigned w = threadIdx.x; w < words; w += blockDim.x)
    reinterpret_cast<std::uint64_t*>(records)[w] = reinterpret_cast<const std::uint64_t*>(t.records)[w];
  __syncthreads();
  const serialized_view v{records, t.lookaside, t.record_count};
  const std::int64_t total = count * elements, stride = std::int64_t{gridDim.x} * blockDim.x;
  unsigned long long s = 0;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < total; i += stride) {
    const element_place p = locate(v, count, i);
    s += static_cast<unsigned long long>(p.in + p.out);
  }
  for (int offset = 16; offset > 0; offset /= 2) s += __shfl_down_sync(0xffffffffu, s, offset);
  if (threadIdx.x % 32 == 0) atomicAdd(sum, s);
}

__global__ void vector_add_kernel(const float* a, const float* b, float* c, std::int64_t n) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride)
    c[i] = a[i] + b[i];
}

}  // namespace

void launch_fill_pattern(std::byte* buffer, std::size_t bytes, std::uint64_t seed, cudaStream_t stream) {
  const std::size_t words = bytes / 8;
  fill_pattern_kernel<<<1024, block_threads, 0, stream>>>(reinterpret_cast<std::uint64_t*>(buffer), words,
                                                          buffer + words * 8, bytes % 8, seed);
  check_launch("fill_pattern_kernel<<<...>>>");
}

void launch_hand_vector(const double* in, double* out, std::int64_t elements, std::int64_t blocklength,
                        std::int64_t stride, cudaStream_t stream) {
  hand_vector_kernel<<<blocks_for(elements), block_threads, 0, stream>>>(
      in, out, static_cast<unsigned>(elements), static_cast<unsigned>(blocklength),
      static_cast<unsigned>(stride));
  check_launch("hand_vector_kernel<<<...>>>");
}

void launch_hand_contiguous(const double* in, double* out, std::int64_t elements, cudaStream_t stream) {
  hand_contiguous_kernel<<<blocks_for(elements), block_threads, 0, stream>>>(in, out,
                                                                             static_cast<unsigned>(elements));
  check_launch("hand_contiguous_kernel<<<...>>>");
}

void launch_hand_indexed(const double* in, double* out, std::int64_t elements, std::int64_t blocklength,
                         const std::int64_t* displacements, cudaStream_t stream) {
  hand_indexed_kernel<<<blocks_for(elements), block_threads, 0, stream>>>(
      in, out, static_cast<unsigned>(elements), static_cast<unsigned>(blocklength), displacements);
  check_launch("hand_indexed_kernel<<<...>>>");
}

void launch_hand_indexed_varied(const double* in, double* out, std::int64_t elements,
                                const std::int64_t* prefix, const std::int64_t* displacements,
                                std::int64_t blocks, cudaStream_t stream) {
  hand_indexed_varied_kernel<<<blocks_for(elements), block_threads, 0, stream>>>(
      in, out, static_cast<unsigned>(elements), prefix, displacements, static_cast<unsigned>(blocks));
  check_launch("hand_indexed_varied_kernel<<<...>>>");
}

void launch_hand_struct(const std::byte* in, std::byte* out, std::int64_t count, cudaStream_t stream) {
  hand_struct_kernel<<<blocks_for(count), block_threads, 0, stream>>>(in, out, static_cast<unsigned>(count));
  check_launch("hand_struct_kernel<<<...>>>");
}

void launch_hand_gapped_struct(const std::byte* in, std::byte* out, std::int64_t count, cudaStream_t stream) {
  hand_gapped_struct_kernel<<<blocks_for(count), block_threads, 0, stream>>>(in, out,
                                                                             static_cast<unsigned>(count));
  check_launch("hand_gapped_struct_kernel<<<...>>>");
}

void launch_hand_subarray4d(const double* in, double* out, int n, int size, int start, cudaStream_t stream) {
  const std::int64_t elements = std::int64_t{n} * n * n * n;
  hand_subarray4d_kernel<<<blocks_for(elements), block_threads, 0, stream>>>(
      in, out, static_cast<unsigned>(n), static_cast<unsigned>(size), static_cast<unsigned>(start));
  check_launch("hand_subarray4d_kernel<<<...>>>");
}

void launch_hand_nested(const double* in, double* out, std::int64_t outer, cudaStream_t stream) {
  hand_nested_kernel<<<blocks_for(outer * 6), block_threads, 0, stream>>>(in, out,
                                                                          static_cast<unsigned>(outer * 6));
  check_launch("hand_nested_kernel<<<...>>>");
}

void launch_traverse(const serialized_view& device_type, std::int64_t count, std::int64_t elements,
                     unsigned long long* sum, cudaStream_t stream) {
  const std::size_t shared = std::size_t{device_type.record_count} * sizeof(type_record);
  XF_EXPECTS(shared <= 48 * 1024, "the traversal kernel keeps the records in shared memory");
  int device = 0, sms = 0;
  XF_CUDA_TRY(cudaGetDevice(&device));
  XF_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  XF_CUDA_TRY(cudaMemsetAsync(sum, 0, sizeof *sum, stream));
  const std::int64_t wanted = (count * elements + block_threads - 1) / block_threads;
  const auto blocks = static_cast<unsigned>(wanted < sms * 8 ? (wanted > 0 ? wanted : 1) : sms * 8);
  traverse_kernel<<<blocks, block_threads, shared, stream>>>(device_type, count, elements, sum);
  check_launch("traverse_kernel<<<...>>>");
}

void launch_vector_add(const float* a, const float* b, float* c, std::int64_t n, int blocks,
                       cudaStream_t stream) {
  vector_add_kernel<<<static_cast<unsigned>(blocks), block_threads, 0, stream>>>(a, b, c, n);
  check_launch("vector_add_kernel<<<...>>>");
}

}  // namespace xf::dt::bench
