// The packing kernels. Four ways to find what to copy, one per pack_method:
// - strided: a flat index over the copy units splits into a segment and its digits (fast division by
//   counts that stay fixed for the launch); no traversal, the type-specific fast path;
// - run_list: the same units, each unit's run found by a binary search of the runs' packed offsets,
//   listed at commit;
// - runs: the same units, each segment's offset from locate() over the records in shared memory;
// - elements: locate() per element, the packed bytes of a tile staged in shared memory so that the packed
//   side (device memory, or pinned host memory across PCIe) is read and written in whole 16-byte words.
// Every kernel walks tiles of threads × its items per thread (pack_kernels.hpp), grid-stride, each thread
// loading all its items before storing any. Unpacking is the same walk with the two sides swapped.
#include <cuda_runtime.h>

#include <cstdint>

#include "framework/core/cuda_check.hpp"
#include "framework/datatype/fast_divmod.hpp"
#include "framework/datatype/pack_kernels.hpp"
#include "framework/datatype/traversal.hpp"

namespace xf::dt::detail {

// Dynamic shared memory: the type's records (runs, elements), then the element kernel's staging area.
extern __shared__ __align__(16) std::byte pack_shared[];

namespace {

template <int Bytes>
struct unit_of;
template <>
struct unit_of<16> {
  using type = uint4;
};
template <>
struct unit_of<8> {
  using type = std::uint64_t;
};
template <>
struct unit_of<4> {
  using type = std::uint32_t;
};
template <>
struct unit_of<2> {
  using type = std::uint16_t;
};
template <>
struct unit_of<1> {
  using type = std::uint8_t;
};

/// The records the block's traversal reads: copied into shared memory once per block when they fit.
__device__ serialized_view block_view(const kernel_launch& a) {
  if (!a.records_in_shared) return a.type;
  const unsigned words = a.type.record_count * static_cast<unsigned>(sizeof(type_record)) / 8;
  const auto* from = reinterpret_cast<const std::uint64_t*>(a.type.records);
  auto* to = reinterpret_cast<std::uint64_t*>(pack_shared);
  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) to[i] = from[i];
  __syncthreads();
  return serialized_view{pack_shared, a.type.lookaside, a.type.record_count};
}

/// Segment s's byte offset from MPI's buf: its digits, innermost dimension last, each by its stride or
/// its table. The outermost digit is what is left, so it needs no division. `Dims` is the shape's number
/// of dimensions where the launch knows it (0-3, most shapes): the loop unrolls, and each dimension's
/// divisor, stride and table are read from the kernel's parameters at fixed places, as operands of the
/// instructions that use them; -1 reads `dims` and indexes the parameters at run time (measured 17-32%
/// slower than hand-written kernels at 16-64 MiB, bench/results/datatype).
template <class Divider, int Dims = -1>
struct strided_offsets {
  std::int64_t base = 0;
  int dims = 0;
  Divider by_count[max_strided_dims];
  std::int64_t strides[max_strided_dims];
  const std::int64_t* tables[max_strided_dims];

  template <class Index>
  __device__ XF_FORCE_INLINE std::int64_t along(int d, Index digit) const {
    return tables[d] != nullptr ? tables[d][digit] : static_cast<std::int64_t>(digit) * strides[d];
  }
  template <class Index>
  __device__ XF_FORCE_INLINE Index split(int d, Index& s) const {  // s becomes the quotient
    const Index q = static_cast<Index>(by_count[d].div(s));
    const Index digit = s - q * static_cast<Index>(by_count[d].divisor);
    s = q;
    return digit;
  }

  template <class Index>
  __device__ XF_FORCE_INLINE std::int64_t operator()(Index s) const {
    std::int64_t offset = base;
    if constexpr (Dims >= 0) {
      XF_UNROLL
      for (int d = Dims - 1; d > 0; --d) offset += along(d, split(d, s));
      if constexpr (Dims > 0) offset += along(0, s);
    } else {
      for (int d = dims - 1; d > 0; --d) offset += along(d, split(d, s));
      if (dims > 0) offset += along(0, s);
    }
    return offset;
  }
};

/// Segment s's byte offset from the traversal: where its first element lies.
struct run_offsets {
  serialized_view view;
  std::int64_t count;
  std::int64_t segment_elements;

  __device__ XF_FORCE_INLINE std::int64_t operator()(std::uint64_t s) const {
    return locate(view, count, static_cast<std::int64_t>(s) * segment_elements).in;
  }
};

/// Unit u's byte offset from MPI's buf where every segment is `units_per_segment` units: unit
/// (u mod units per segment) of segment u / units per segment, the segment placed by `Offsets`.
template <class Index, class Divider, class Offsets>
struct segment_units {
  Divider per_segment;
  Offsets offset_of;
  Index units_per_segment;
  std::int64_t unit_bytes;

  __device__ XF_FORCE_INLINE std::int64_t operator()(Index u) const {
    const Index segment = static_cast<Index>(per_segment.div(u));
    return offset_of(segment) + static_cast<std::int64_t>(u - segment * units_per_segment) * unit_bytes;
  }
};

/// Unit u's byte offset from MPI's buf from the run list: its instance, then the last run of that
/// instance starting at or before it in the packed bytes (a binary search between the runs of its
/// bucket's first byte and of the next bucket's), and its place in that run.
template <class Index, class Divider>
struct listed_units {
  Divider per_instance;
  Index units_per_instance;
  std::int64_t unit_bytes;
  std::int64_t extent;
  const std::int64_t* run_in;        ///< bytes from buf, within instance 0
  const std::int64_t* run_out;       ///< packed bytes within the instance, ascending
  const std::int64_t* bucket_first;  ///< the run holding each bucket's first packed byte, then the last run
  unsigned bucket_shift;

  __device__ XF_FORCE_INLINE std::int64_t operator()(Index u) const {
    const Index instance = static_cast<Index>(per_instance.div(u));
    const std::int64_t out = static_cast<std::int64_t>(u - instance * units_per_instance) * unit_bytes;
    const std::int64_t bucket = out >> bucket_shift;
    const std::int64_t low = bucket_first[bucket], high = bucket_first[bucket + 1];
    const std::int64_t run = low + block_of(run_out + low, high - low + 1, out);
    return static_cast<std::int64_t>(instance) * extent + run_in[run] + (out - run_out[run]);
  }
};

/// Copies units [a.first, a.last): unit u lies at user_offset(u) from MPI's buf and at packed offset
/// (u - first) × sizeof(Unit) from a.to (pack) or a.from (unpack). Consecutive threads take consecutive
/// units, so both sides coalesce wherever runs are wider than a unit, and the packed side always does.
template <class Unit, class Index, int Items, class UserOffset>
__device__ XF_FORCE_INLINE void copy_units(const kernel_launch& a, const UserOffset& user_offset) {
  const Index first = static_cast<Index>(a.first), last = static_cast<Index>(a.last);
  const Index threads = blockDim.x, tile = threads * Items;
  constexpr auto unit_bytes = static_cast<std::int64_t>(sizeof(Unit));
  for (Index tile_first = first + static_cast<Index>(blockIdx.x) * tile; tile_first < last;
       tile_first += static_cast<Index>(gridDim.x) * tile) {
    Unit value[Items];
    Unit* target[Items];
    XF_UNROLL
    for (int k = 0; k < Items; ++k) {
      const Index u = tile_first + static_cast<Index>(k) * threads + threadIdx.x;
      target[k] = nullptr;
      if (u >= last) continue;
      const std::int64_t user = user_offset(u);
      const std::int64_t packed = static_cast<std::int64_t>(u - first) * unit_bytes;
      target[k] = reinterpret_cast<Unit*>(a.to + (a.unpack ? user : packed));
      value[k] = *reinterpret_cast<const Unit*>(a.from + (a.unpack ? packed : user));
    }
    XF_UNROLL
    for (int k = 0; k < Items; ++k)
      if (target[k] != nullptr) *target[k] = value[k];
  }
}

template <class Unit, class Index, class Divider, int Dims>
__global__ void __launch_bounds__(pack_block_threads)
    strided_kernel(kernel_launch a, segment_units<Index, Divider, strided_offsets<Divider, Dims>> units) {
  copy_units<Unit, Index, unit_items_per_thread>(a, units);
}

template <class Unit, class Index, class Divider>
__global__ void __launch_bounds__(pack_block_threads)
    run_list_kernel(kernel_launch a, listed_units<Index, Divider> units) {
  copy_units<Unit, Index, unit_items_per_thread>(a, units);
}

template <class Unit>
__global__ void __launch_bounds__(pack_block_threads)
    runs_kernel(kernel_launch a, plain_divmod_u64 per_segment) {
  const segment_units<std::uint64_t, plain_divmod_u64, run_offsets> units{
      per_segment, run_offsets{block_view(a), a.count, a.segment_elements},
      static_cast<std::uint64_t>(a.units_per_segment), a.unit_bytes};
  copy_units<Unit, std::uint64_t, items_per_thread>(a, units);
}

/// One element, by its own type where both addresses are aligned to its size, else byte by byte (an
/// hvector of doubles at odd strides, a packed struct's members).
__device__ XF_FORCE_INLINE void copy_element(std::byte* to, const std::byte* from, std::int64_t bytes) {
  const auto both = reinterpret_cast<std::uintptr_t>(to) | reinterpret_cast<std::uintptr_t>(from);
  if ((both & static_cast<std::uintptr_t>(bytes - 1)) != 0) {
    for (std::int64_t b = 0; b < bytes; ++b) to[b] = from[b];
    return;
  }
  switch (bytes) {
    case 8:
      *reinterpret_cast<std::uint64_t*>(to) = *reinterpret_cast<const std::uint64_t*>(from);
      break;
    case 4:
      *reinterpret_cast<std::uint32_t*>(to) = *reinterpret_cast<const std::uint32_t*>(from);
      break;
    case 2:
      *reinterpret_cast<std::uint16_t*>(to) = *reinterpret_cast<const std::uint16_t*>(from);
      break;
    default:
      *to = *from;
      break;
  }
}

/// The block copies `bytes` bytes between two ranges at the same address modulo 16: single bytes up to
/// the first 16-byte boundary, 16-byte words, then single bytes.
__device__ void copy_range(std::byte* to, const std::byte* from, std::int64_t bytes) {
  const auto misaligned = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(to) & 15);
  const std::int64_t head = misaligned == 0 ? 0 : (16 - misaligned < bytes ? 16 - misaligned : bytes);
  const std::int64_t words = (bytes - head) / 16, tail = head + words * 16;
  for (std::int64_t i = threadIdx.x; i < head; i += blockDim.x) to[i] = from[i];
  for (std::int64_t i = threadIdx.x; i < words; i += blockDim.x)
    reinterpret_cast<uint4*>(to + head)[i] = reinterpret_cast<const uint4*>(from + head)[i];
  for (std::int64_t i = tail + threadIdx.x; i < bytes; i += blockDim.x) to[i] = from[i];
}

__global__ void __launch_bounds__(pack_block_threads) element_kernel(kernel_launch a) {
  const serialized_view view = block_view(a);
  std::byte* const stage = pack_shared + a.stage_offset;
  __shared__ std::int64_t tile_packed[2];  // the tile's packed bytes: [begin, end)
  const std::int64_t threads = blockDim.x, tile = threads * items_per_thread;
  for (std::int64_t tile_first = a.first + static_cast<std::int64_t>(blockIdx.x) * tile; tile_first < a.last;
       tile_first += static_cast<std::int64_t>(gridDim.x) * tile) {
    const std::int64_t tile_last = tile_first + tile < a.last ? tile_first + tile : a.last;
    element_place place[items_per_thread];
    XF_UNROLL
    for (int k = 0; k < items_per_thread; ++k) {
      const std::int64_t i = tile_first + k * threads + threadIdx.x;
      if (i < tile_last) place[k] = locate(view, a.count, i);
    }
    if (threadIdx.x == 0) {
      tile_packed[0] = place[0].out;  // thread 0's first element is the tile's first
      tile_packed[1] = tile_last == a.last ? a.packed_last : locate(view, a.count, tile_last).out;
    }
    __syncthreads();
    const std::int64_t begin = tile_packed[0], bytes = tile_packed[1] - begin;
    if (!a.unpack) {
      // Gather the tile's elements into the staging area at the packed range's alignment, then write the
      // range in 16-byte words: a packed struct's members are 1 to 8 bytes at odd offsets.
      std::byte* const packed = a.to + (begin - a.packed_first);
      std::byte* const staged = stage + (reinterpret_cast<std::uintptr_t>(packed) & 15);
      XF_UNROLL
      for (int k = 0; k < items_per_thread; ++k)
        if (place[k].run_elements > 0)
          copy_element(staged + (place[k].out - begin), a.from + place[k].in, size_of(place[k].element));
      __syncthreads();
      copy_range(packed, staged, bytes);
    } else {
      const std::byte* const packed = a.from + (begin - a.packed_first);
      std::byte* const staged = stage + (reinterpret_cast<std::uintptr_t>(packed) & 15);
      copy_range(staged, packed, bytes);
      __syncthreads();
      XF_UNROLL
      for (int k = 0; k < items_per_thread; ++k)
        if (place[k].run_elements > 0)
          copy_element(a.to + place[k].in, staged + (place[k].out - begin), size_of(place[k].element));
    }
    __syncthreads();  // the staging area and tile_packed are the next tile's
  }
}

void check_launch(const char* kernel) {
  cuda_check(cudaGetLastError(), kernel, __FILE__, __LINE__);
}

template <class Divider, int Dims>
strided_offsets<Divider, Dims> strided_offsets_of(const kernel_launch& a) {
  strided_offsets<Divider, Dims> o{};
  o.base = a.base;
  o.dims = a.dims;
  for (int d = 0; d < a.dims; ++d) {
    o.by_count[d] = Divider(static_cast<decltype(Divider{}.divisor)>(a.counts[d]));
    o.strides[d] = a.strides[d];
    o.tables[d] = a.tables[d];
  }
  return o;
}

template <class Index, class Divider, int Dims>
segment_units<Index, Divider, strided_offsets<Divider, Dims>> strided_units_of(const kernel_launch& a) {
  using divisor_type = decltype(Divider{}.divisor);
  return {Divider(static_cast<divisor_type>(a.units_per_segment)), strided_offsets_of<Divider, Dims>(a),
          static_cast<Index>(a.units_per_segment), a.unit_bytes};
}

/// The 32-bit strided kernel for a shape of `Dims` dimensions (-1: any).
template <class Unit, int Dims>
void launch_strided_u32(const kernel_launch& a, cudaStream_t stream) {
  strided_kernel<Unit, std::uint32_t, fast_divmod_u32, Dims>
      <<<a.blocks, a.threads, 0, stream>>>(a, strided_units_of<std::uint32_t, fast_divmod_u32, Dims>(a));
  check_launch("strided_kernel<u32><<<...>>>");
}

template <class Unit, class Index, class Divider>
void launch_run_list(const kernel_launch& a, cudaStream_t stream) {
  using divisor_type = decltype(Divider{}.divisor);
  const listed_units<Index, Divider> units{Divider(static_cast<divisor_type>(a.units_per_segment)),
                                           static_cast<Index>(a.units_per_segment),
                                           a.unit_bytes,
                                           a.strides[0],
                                           a.tables[0],
                                           a.tables[1],
                                           a.tables[2],
                                           static_cast<unsigned>(a.counts[1])};
  run_list_kernel<Unit, Index, Divider><<<a.blocks, a.threads, 0, stream>>>(a, units);
  check_launch("run_list_kernel<<<...>>>");
}

template <int Bytes>
void launch_units(const kernel_launch& a, cudaStream_t stream) {
  using unit = typename unit_of<Bytes>::type;
  // Below 2^31 units every index (unit, segment, digit, instance) fits 32 bits: 32-bit arithmetic and
  // multiply-high division.
  const bool small = a.last < (std::int64_t{1} << 31);
  if (a.method == pack_method::runs) {
    runs_kernel<unit><<<a.blocks, a.threads, a.shared_bytes, stream>>>(
        a, plain_divmod_u64(static_cast<std::uint64_t>(a.units_per_segment)));
    check_launch("runs_kernel<<<...>>>");
  } else if (a.method == pack_method::run_list) {
    if (small) return launch_run_list<unit, std::uint32_t, fast_divmod_u32>(a, stream);
    return launch_run_list<unit, std::uint64_t, plain_divmod_u64>(a, stream);
  } else if (small) {
    switch (a.dims) {
      case 0:
        return launch_strided_u32<unit, 0>(a, stream);
      case 1:
        return launch_strided_u32<unit, 1>(a, stream);
      case 2:
        return launch_strided_u32<unit, 2>(a, stream);
      case 3:
        return launch_strided_u32<unit, 3>(a, stream);
      default:
        return launch_strided_u32<unit, -1>(a, stream);
    }
  } else {
    strided_kernel<unit, std::uint64_t, plain_divmod_u64, -1>
        <<<a.blocks, a.threads, 0, stream>>>(a, strided_units_of<std::uint64_t, plain_divmod_u64, -1>(a));
    check_launch("strided_kernel<u64><<<...>>>");
  }
}

}  // namespace

void launch_pack_kernel(const kernel_launch& a, cudaStream_t stream) {
  if (a.last <= a.first) return;
  if (a.method == pack_method::elements) {
    element_kernel<<<a.blocks, a.threads, a.shared_bytes, stream>>>(a);
    check_launch("element_kernel<<<...>>>");
    return;
  }
  switch (a.unit_bytes) {
    case 16:
      return launch_units<16>(a, stream);
    case 8:
      return launch_units<8>(a, stream);
    case 4:
      return launch_units<4>(a, stream);
    case 2:
      return launch_units<2>(a, stream);
    default:
      return launch_units<1>(a, stream);
  }
}

}  // namespace xf::dt::detail
