// xeflow-encoding-kernels: the encoding operators' GF(2^8) and AES arithmetic, kernel against kernel in
// device memory, so that how their GPU code computes is chosen by measurement rather than by habit.
//
// Families (every variant of a family runs in the same grid-stride launch shape over the same device
// buffers; only the arithmetic differs):
//   raid6_encode   P and Q of stripes of k blocks (k = 4, 8, 16 by default), 64 KiB blocks:
//     swar_horner          raid6::pq_word, called as raid6_encode's loop calls it: Horner's rule with the
//                          byte-parallel multiply-by-2 on 64-bit words, no tables (today's operator)
//     log_exp_shared       log/antilog tables in shared memory: Q ^= exp[log[d] + i] for each byte d != 0
//     mul_table_shared     the k rows mul[2^i][0..255] in shared memory, one byte lookup per byte
//     nibble_table_shared  ISA-L's 4-bit split tables (2^i · low nibble, 2^i · high nibble: 32 bytes per
//                          block) in shared memory, two lookups per byte
//   raid6_recover  two lost data blocks of stripes of k + 2 blocks, rebuilt from the other k:
//     swar_mul_word        raid6::recover_word (today's operator): gf256::mul_word for the two constants
//     mul_table_shared     the same survivors' sums, the constants' 256-byte rows in shared memory
//     nibble_table_shared  the same, with 4-bit split rows
//   aes128_encrypt AES-128 ECB and CTR encryption, 1 GiB:
//     ttable_shared        aes::encrypt_block / aes::xor_ctr on a copy of aes::tables in shared memory
//     ttable_global        the same calls on aes::tables in device memory, plain loads: where today's
//                          operator has them (its params struct in the parameter arena)
//     ttable_global_ldg    the T-table rounds with every table load through the read-only path (__ldg)
//     ttable_shared_lanes  te0 alone in shared memory, one copy per bank (32 KiB): lane l reads bank l, so
//                          the lookups never conflict; te1..te3 are rotations of te0, the S-box a byte of it
//     sbox_compact_shared  aes::encrypt_block_compact: FIPS-197's rounds with only the S-box (shared memory)
//
// Every variant's output is compared, bit for bit, with the operators' own host functions (raid6::pq_word,
// raid6::recover_word, aes::encrypt_ecb, aes::xor_ctr, themselves checked against the data and NIST's
// vectors) before it is timed; a mismatch is reported, the variant is not timed, and the exit code is 1.
// GB/s = input bytes / seconds with 1 GB = 1e9 bytes (the operator's input frame: for raid6_recover the
// whole stripe of k + 2 blocks); the median of --reps launches timed with CUDA events, the variants
// interleaved launch by launch so that drift falls on all of them.
// Exit codes: 0 ok; 1 a run failed (a mismatch, a CUDA error, I/O); 2 no usable GPU; 3 bad command line.
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/common/run_stamp.hpp"
#include "framework/core/cuda_buffer.hpp"
#include "framework/core/cuda_check.hpp"
#include "framework/core/units.hpp"
#include "operators/encoding/aes128.hpp"
#include "operators/encoding/gf256.hpp"
#include "operators/encoding/raid6.hpp"

namespace {
using xf::bench::command_line;
using xf::bench::git_commit;
using xf::bench::utc_now;

namespace aes = xf::aes;
namespace gf256 = xf::gf256;
namespace raid6 = xf::raid6;

constexpr int exit_failed = 1, exit_no_gpu = 2, exit_usage = 3;

struct no_gpu_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---- device side: what every family shares --------------------------------------------------------------

// The tables a block works from, copied in at its start: sized per launch (dynamic shared memory).
extern __shared__ __align__(16) std::uint32_t shared_words[];

/// Copies `words` 32-bit words of tables from device memory into the block's shared memory.
__device__ void load_shared(const std::uint32_t* tables, unsigned words) {
  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) shared_words[i] = tables[i];
  __syncthreads();
}

XF_DEVICE XF_FORCE_INLINE std::uint64_t grid_threads() {
  return std::uint64_t{gridDim.x} * blockDim.x;
}
XF_DEVICE XF_FORCE_INLINE std::uint64_t grid_thread_id() {
  return std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
}

// The arithmetic below is __host__ __device__ (the kernels' lookups are functors, not device lambdas), so
// that it can be run on the host against the references where there is no GPU.

/// Calls f(stripe, word) for thread `first`'s words of `stripes` stripes of `words` words each, grid-stride
/// (`threads` in the grid) over all of them as one index: consecutive threads take consecutive words, so
/// loads coalesce, and no thread idles when a stripe has fewer words than the grid has threads. The step is
/// split into whole stripes and a remainder once, so the walk needs no 64-bit division per word.
XF_EXEC_CHECK_DISABLE
template <class F>
XF_HOST_DEVICE XF_FORCE_INLINE void for_each_word(std::uint64_t first, std::uint64_t threads,
                                                  std::uint64_t stripes, std::uint64_t words, F f) {
  const std::uint64_t stripe_step = threads / words, word_step = threads % words;
  std::uint64_t stripe = first / words, word = first % words;
  while (stripe < stripes) {
    f(stripe, word);
    stripe += stripe_step;
    word += word_step;
    if (word >= words) {
      word -= words;
      ++stripe;
    }
  }
}

/// Each of the word's 8 bytes mapped by f (a table lookup), on the word's two 32-bit halves: the GPU's
/// integer unit is 32 bits wide.
template <class F>
XF_HOST_DEVICE XF_FORCE_INLINE std::uint64_t map_bytes(std::uint64_t v, F f) {
  const std::uint32_t low = static_cast<std::uint32_t>(v), high = static_cast<std::uint32_t>(v >> 32);
  std::uint32_t out_low = 0, out_high = 0;
  XF_UNROLL
  for (unsigned j = 0; j < 4; ++j) {
    out_low |= std::uint32_t{f((low >> (8 * j)) & 0xffu)} << (8 * j);
    out_high |= std::uint32_t{f((high >> (8 * j)) & 0xffu)} << (8 * j);
  }
  return (std::uint64_t{out_high} << 32) | out_low;
}

// ---- RAID-6 P+Q ------------------------------------------------------------------------------------------

enum class pq_variant { swar_horner, log_exp, mul_table, nibble_table };

// The shared tables' layouts (bytes): log_exp: log[256] then exp[510] (exp[j] = 2^(j mod 255), so
// log[d] + i needs no reduction for i < 255); mul_table: row i = 2^i · x for x = 0..255; nibble_table:
// row i = 2^i · x for x = 0..15, then 2^i · (x << 4).
constexpr unsigned log_bytes = 256, exp_bytes = 510, mul_row_bytes = 256, nibble_row_bytes = 32;

/// 2^i · d for each byte of d, from the tables `t` of variant V (not swar_horner).
template <pq_variant V>
XF_HOST_DEVICE XF_FORCE_INLINE std::uint64_t q_term(const std::uint8_t* t, unsigned i, std::uint64_t d) {
  if constexpr (V == pq_variant::log_exp) {
    const std::uint8_t* antilog = t + log_bytes + i;  // antilog[log b] = exp[log b + i]
    return map_bytes(d, [&](unsigned b) -> std::uint8_t { return b == 0 ? 0 : antilog[t[b]]; });
  } else if constexpr (V == pq_variant::mul_table) {
    const std::uint8_t* row = t + i * mul_row_bytes;
    return map_bytes(d, [&](unsigned b) { return row[b]; });
  } else {
    static_assert(V == pq_variant::nibble_table);
    const std::uint8_t* row = t + i * nibble_row_bytes;
    return map_bytes(d, [&](unsigned b) -> std::uint8_t { return row[b & 15] ^ row[16 + (b >> 4)]; });
  }
}

/// P and Q of word w of a stripe, by variant V: raid6::pq_word itself, or a table's product per block.
template <pq_variant V>
XF_HOST_DEVICE XF_FORCE_INLINE void pq_word_by(const std::uint64_t* stripe, std::uint64_t words, unsigned k,
                                               std::uint64_t w, const std::uint8_t* t, std::uint64_t& p,
                                               std::uint64_t& q) {
  if constexpr (V == pq_variant::swar_horner) {
    raid6::pq_word(stripe, words, k, w, p, q);
  } else {
    p = 0;
    q = 0;
    for (unsigned i = 0; i < k; ++i) {
      const std::uint64_t d = stripe[std::uint64_t{i} * words + w];
      p ^= d;
      q ^= q_term<V>(t, i, d);
    }
  }
}

/// P and Q of a stripe of k data blocks (raid6_encode's output frame: P then Q), over `stripes` stripes laid
/// one after another; each block `words` 64-bit words.
template <pq_variant V>
__global__ void raid6_encode_kernel(const std::uint64_t* data, std::uint64_t* pq, std::uint64_t stripes,
                                    std::uint64_t words, unsigned k, const std::uint32_t* tables,
                                    unsigned table_words) {
  load_shared(tables, table_words);
  const auto* t = reinterpret_cast<const std::uint8_t*>(shared_words);
  for_each_word(grid_thread_id(), grid_threads(), stripes, words, [&](std::uint64_t s, std::uint64_t w) {
    std::uint64_t p, q;
    pq_word_by<V>(data + s * k * words, words, k, w, t, p, q);
    std::uint64_t* out = pq + s * 2 * words;
    out[w] = p;
    out[words + w] = q;
  });
}

enum class recover_variant { swar_mul_word, mul_table, nibble_table };

/// raid6::recover_word's two-data-block case with the products a · (P + P_xy) and b · (Q + Q_xy) taken by
/// `times(0, v)` and `times(1, v)`: the survivors' sums as recover_word forms them, so that only the
/// multiplication by the two constants differs.
XF_EXEC_CHECK_DISABLE
template <class Times>
XF_HOST_DEVICE XF_FORCE_INLINE void recover_two_data_word(const raid6::recovery& r,
                                                          const std::uint64_t* stripe, std::uint64_t words,
                                                          std::uint64_t w, std::uint64_t* lost_words,
                                                          Times times) {
  const unsigned k = r.k, x = r.lost[0], y = r.lost[1];
  std::uint64_t p = 0, q = 0;
  for (unsigned i = k; i-- > 0;) {
    const std::uint64_t d = i == x || i == y ? 0 : stripe[std::uint64_t{i} * words + w];
    p ^= d;
    q = gf256::mul2_word(q) ^ d;
  }
  const std::uint64_t pxy = stripe[std::uint64_t{k} * words + w] ^ p;
  const std::uint64_t qxy = stripe[std::uint64_t{k + 1} * words + w] ^ q;
  const std::uint64_t dx = times(0, pxy) ^ times(1, qxy);
  lost_words[0] = dx;
  lost_words[1] = pxy ^ dx;
}

/// The lost data words x and y of word w of a stripe, by variant V: raid6::recover_word itself, or
/// recover_two_data_word with the constants' rows in `t` (a's first).
template <recover_variant V>
XF_HOST_DEVICE XF_FORCE_INLINE void recover_word_by(const raid6::recovery& r, const std::uint64_t* stripe,
                                                    std::uint64_t words, std::uint64_t w,
                                                    const std::uint8_t* t, std::uint64_t* lost_words) {
  if constexpr (V == recover_variant::swar_mul_word) {
    raid6::recover_word(r, stripe, words, w, lost_words);
  } else if constexpr (V == recover_variant::mul_table) {
    recover_two_data_word(r, stripe, words, w, lost_words, [&](unsigned which, std::uint64_t v) {
      const std::uint8_t* row = t + which * mul_row_bytes;
      return map_bytes(v, [&](unsigned b) { return row[b]; });
    });
  } else {
    recover_two_data_word(r, stripe, words, w, lost_words, [&](unsigned which, std::uint64_t v) {
      const std::uint8_t* row = t + which * nibble_row_bytes;
      return map_bytes(v, [&](unsigned b) -> std::uint8_t { return row[b & 15] ^ row[16 + (b >> 4)]; });
    });
  }
}

/// The two lost data blocks of each stripe of k + 2 blocks (data, P, Q), into two blocks per stripe.
/// Tables (mul_table, nibble_table): the rows of the constants a and b, a's first.
template <recover_variant V>
__global__ void raid6_recover_kernel(const std::uint64_t* in, std::uint64_t* out, std::uint64_t stripes,
                                     std::uint64_t words, const __grid_constant__ raid6::recovery r,
                                     const std::uint32_t* tables, unsigned table_words) {
  load_shared(tables, table_words);
  const auto* t = reinterpret_cast<const std::uint8_t*>(shared_words);
  for_each_word(grid_thread_id(), grid_threads(), stripes, words, [&](std::uint64_t s, std::uint64_t w) {
    std::uint64_t rebuilt[2] = {0, 0};
    recover_word_by<V>(r, in + s * (r.k + 2) * words, words, w, t, rebuilt);
    std::uint64_t* lost = out + s * 2 * words;
    lost[w] = rebuilt[0];
    lost[words + w] = rebuilt[1];
  });
}

// ---- AES-128 ---------------------------------------------------------------------------------------------

enum class aes_variant { ttable_shared, ttable_global, ttable_global_ldg, ttable_shared_lanes, sbox_compact };

constexpr unsigned warp_lanes = 32;  // one te0 copy per shared-memory bank (32 banks of 4 bytes)

/// CTR's initial counter block, by value in the kernel's parameters.
struct ctr_iv {
  std::uint8_t bytes[aes::block_bytes];
};

/// aes::detail::cipher_words<false> (encryption) with the lookups given as functions: te(j, x) = te[j][x]
/// and sbox(x), so that the tables may live anywhere and in any layout.
XF_EXEC_CHECK_DISABLE
template <class Te, class Sbox>
XF_HOST_DEVICE XF_FORCE_INLINE void encrypt_words_with(const std::uint32_t* rk, Te te, Sbox sbox,
                                                       std::uint32_t s[4]) {
  std::uint32_t x[4], y[4];
  XF_UNROLL
  for (unsigned c = 0; c < 4; ++c) x[c] = s[c] ^ rk[c];
  XF_UNROLL
  for (unsigned r = 1; r < aes::rounds; ++r) {
    rk += 4;
    XF_UNROLL
    for (unsigned c = 0; c < 4; ++c)
      y[c] = te(0, x[c] >> 24) ^ te(1, (x[(c + 1) % 4] >> 16) & 0xff) ^ te(2, (x[(c + 2) % 4] >> 8) & 0xff) ^
             te(3, x[(c + 3) % 4] & 0xff) ^ rk[c];
    XF_UNROLL
    for (unsigned c = 0; c < 4; ++c) x[c] = y[c];
  }
  rk += 4;
  XF_UNROLL
  for (unsigned c = 0; c < 4; ++c)
    s[c] = aes::detail::pack(sbox(x[c] >> 24), sbox((x[(c + 1) % 4] >> 16) & 0xff),
                             sbox((x[(c + 2) % 4] >> 8) & 0xff), sbox(x[(c + 3) % 4] & 0xff)) ^
           rk[c];
}

/// CTR's counter block for block b of the stream of `iv`, as aes::xor_ctr forms it: IV + b, a 128-bit
/// big-endian sum, as four big-endian words.
XF_HOST_DEVICE XF_FORCE_INLINE void counter_words(const ctr_iv& iv, std::uint64_t b, std::uint32_t s[4]) {
  using aes::detail::load_be32;
  std::uint64_t hi = (std::uint64_t{load_be32(iv.bytes)} << 32) | load_be32(iv.bytes + 4);
  std::uint64_t lo = (std::uint64_t{load_be32(iv.bytes + 8)} << 32) | load_be32(iv.bytes + 12);
  lo += b;
  if (lo < b) ++hi;  // carry out of the low half
  s[0] = static_cast<std::uint32_t>(hi >> 32);
  s[1] = static_cast<std::uint32_t>(hi);
  s[2] = static_cast<std::uint32_t>(lo >> 32);
  s[3] = static_cast<std::uint32_t>(lo);
}

/// One block of ECB (Ctr false) or CTR (block `b` of the stream of `iv`) through encrypt_words_with, with
/// aes::encrypt_block's and aes::xor_ctr's byte-wise loads and stores, so that the I/O equals theirs.
XF_EXEC_CHECK_DISABLE
template <bool Ctr, class Te, class Sbox>
XF_HOST_DEVICE XF_FORCE_INLINE void block_with(const aes::round_keys& keys, const ctr_iv& iv, std::uint64_t b,
                                               const std::uint8_t* in, std::uint8_t* out, Te te, Sbox sbox) {
  using aes::detail::load_be32, aes::detail::store_be32;
  if constexpr (!Ctr) {
    std::uint32_t s[4] = {load_be32(in), load_be32(in + 4), load_be32(in + 8), load_be32(in + 12)};
    encrypt_words_with(keys.w, te, sbox, s);
    XF_UNROLL
    for (unsigned c = 0; c < 4; ++c) store_be32(out + 4 * c, s[c]);
  } else {
    std::uint32_t s[4];
    counter_words(iv, b, s);
    encrypt_words_with(keys.w, te, sbox, s);
    std::uint8_t keystream[aes::block_bytes];
    XF_UNROLL
    for (unsigned c = 0; c < 4; ++c) store_be32(keystream + 4 * c, s[c]);
    XF_UNROLL
    for (unsigned i = 0; i < aes::block_bytes; ++i) out[i] = static_cast<std::uint8_t>(in[i] ^ keystream[i]);
  }
}

/// ttable_shared_lanes' lookups: te0 stored 32 times over, entry x of copy l at x · 32 + l, so that lane l
/// always reads bank l. te[j][x] = te0[x] rotated right by 8j bits (aes::make_tables), and te0[x] = (2s, s,
/// s, 3s) with s = S(x): the S-box is its third byte.
struct lanes_te {
  const std::uint32_t* te0;  ///< this lane's copy: the table + lane
  XF_HOST_DEVICE std::uint32_t operator()(unsigned j, unsigned x) const {
    return aes::detail::rotr32(te0[x * warp_lanes], 8 * j);
  }
};
struct lanes_sbox {
  const std::uint32_t* te0;
  XF_HOST_DEVICE std::uint8_t operator()(unsigned x) const {
    return static_cast<std::uint8_t>(te0[x * warp_lanes] >> 16);
  }
};

/// Block b of `blocks` as aes128_encrypt's compute does it: aes::encrypt_block, or aes::xor_ctr with the
/// block's length bounded by the bytes left.
template <bool Ctr>
XF_HOST_DEVICE XF_FORCE_INLINE void operator_block(const aes::round_keys& keys, const aes::tables& t,
                                                   const ctr_iv& iv, std::uint64_t b, std::uint64_t blocks,
                                                   const std::uint8_t* in, std::uint8_t* out) {
  if constexpr (Ctr) {
    const std::uint64_t bytes = blocks * aes::block_bytes, at = b * aes::block_bytes;
    const std::uint64_t n = bytes - at < aes::block_bytes ? bytes - at : aes::block_bytes;
    aes::xor_ctr(keys, t, iv.bytes, b, in, out, n);
  } else {
    aes::encrypt_block(keys, t, in, out);
  }
}

/// Block b through aes::encrypt_block_compact: ECB, or CTR's counter block as aes::xor_ctr forms it.
template <bool Ctr>
XF_HOST_DEVICE XF_FORCE_INLINE void compact_block(const aes::round_keys& keys, const std::uint8_t* sbox,
                                                  const ctr_iv& iv, std::uint64_t b, const std::uint8_t* in,
                                                  std::uint8_t* out) {
  if constexpr (Ctr) {
    std::uint32_t s[4];
    counter_words(iv, b, s);
    std::uint8_t counter[aes::block_bytes], keystream[aes::block_bytes];
    XF_UNROLL
    for (unsigned c = 0; c < 4; ++c) aes::detail::store_be32(counter + 4 * c, s[c]);
    aes::encrypt_block_compact(keys, sbox, counter, keystream);
    XF_UNROLL
    for (unsigned i = 0; i < aes::block_bytes; ++i) out[i] = static_cast<std::uint8_t>(in[i] ^ keystream[i]);
  } else {
    aes::encrypt_block_compact(keys, sbox, in, out);
  }
}

/// AES-128 encryption of `blocks` 16-byte blocks, ECB or CTR, one block per thread per step of a
/// grid-stride loop, as the operator's compute walks a frame. `tables` is aes::tables in device memory.
template <aes_variant V, bool Ctr>
__global__ void aes128_kernel(const std::uint8_t* in, std::uint8_t* out, std::uint64_t blocks,
                              const __grid_constant__ aes::round_keys keys, const __grid_constant__ ctr_iv iv,
                              const aes::tables* tables) {
  if constexpr (V == aes_variant::ttable_shared) {
    load_shared(reinterpret_cast<const std::uint32_t*>(tables), sizeof(aes::tables) / 4);
  } else if constexpr (V == aes_variant::ttable_shared_lanes) {
    for (unsigned i = threadIdx.x; i < 256 * warp_lanes; i += blockDim.x)
      shared_words[i] = tables->te[0][i / warp_lanes];
    __syncthreads();
  } else if constexpr (V == aes_variant::sbox_compact) {
    load_shared(reinterpret_cast<const std::uint32_t*>(tables->sbox), 256 / 4);
  } else {
    load_shared(nullptr, 0);  // the same barrier as the others
  }
  const std::uint64_t threads = grid_threads();
  const unsigned lane = threadIdx.x % warp_lanes;
  for (std::uint64_t b = grid_thread_id(); b < blocks; b += threads) {
    const std::uint8_t* src = in + b * aes::block_bytes;
    std::uint8_t* dst = out + b * aes::block_bytes;
    if constexpr (V == aes_variant::ttable_shared) {
      operator_block<Ctr>(keys, *reinterpret_cast<const aes::tables*>(shared_words), iv, b, blocks, src, dst);
    } else if constexpr (V == aes_variant::ttable_global) {
      operator_block<Ctr>(keys, *tables, iv, b, blocks, src, dst);
    } else if constexpr (V == aes_variant::ttable_global_ldg) {
      block_with<Ctr>(
          keys, iv, b, src, dst, [&](unsigned j, unsigned x) { return __ldg(&tables->te[j][x]); },
          [&](unsigned x) { return __ldg(&tables->sbox[x]); });
    } else if constexpr (V == aes_variant::ttable_shared_lanes) {
      block_with<Ctr>(keys, iv, b, src, dst, lanes_te{shared_words + lane}, lanes_sbox{shared_words + lane});
    } else {
      compact_block<Ctr>(keys, reinterpret_cast<const std::uint8_t*>(shared_words), iv, b, src, dst);
    }
  }
}

// ---- host side: options, device, measurement -------------------------------------------------------------

struct options {
  std::uint64_t bytes = 0, block_bytes = 0;
  std::vector<unsigned> ks;
  std::vector<std::string> families, modes;
  unsigned lost[2] = {0, 1};
  unsigned blocks_per_sm = 4, threads = 256, reps = 10, warmup = 2;
};

struct device_info {
  int ordinal = 0;
  cudaDeviceProp prop{};
};

device_info open_device(int ordinal) {
  int count = 0;
  if (const cudaError_t err = cudaGetDeviceCount(&count); err != cudaSuccess) {
    (void)cudaGetLastError();
    throw no_gpu_error(std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorName(err) + ": " +
                       cudaGetErrorString(err) + ")");
  }
  if (count == 0) throw no_gpu_error("no CUDA device");
  if (ordinal < 0 || ordinal >= count)
    throw no_gpu_error("--device " + std::to_string(ordinal) + ": there are " + std::to_string(count) +
                       " CUDA device(s)");
  device_info dev;
  dev.ordinal = ordinal;
  XF_CUDA_TRY(cudaSetDevice(ordinal));
  XF_CUDA_TRY(cudaGetDeviceProperties(&dev.prop, ordinal));
  return dev;
}

/// Runs f(begin, end) over [0, count) in contiguous parts, one per hardware thread (the host references
/// and the data: a GiB each, single-threaded they would take longer than the GPU work).
template <class F>
void parallel_for(std::uint64_t count, F f) {
  const unsigned n = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::jthread> workers;
  for (unsigned t = 0; t < n; ++t) {
    const std::uint64_t begin = count * t / n, end = count * (t + 1) / n;
    if (begin < end) workers.emplace_back([=, &f] { f(begin, end); });
  }
}

/// Random bytes, the same on every run (splitmix64 of the word's index).
std::vector<std::uint64_t> random_words(std::uint64_t count) {
  std::vector<std::uint64_t> v(count);
  parallel_for(count, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i) {
      std::uint64_t z = (i + 1) * 0x9e3779b97f4a7c15ull;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      v[i] = z ^ (z >> 31);
    }
  });
  return v;
}

/// What the occupancy calculator and the compiler say of one kernel at the launch shape.
struct kernel_facts {
  int registers = 0, local_bytes = 0, resident_blocks_per_sm = 0;
  std::size_t shared_bytes = 0;
};

template <class Kernel>
kernel_facts facts_of(Kernel* kernel, std::size_t shared_bytes, unsigned threads, const char* name) {
  XF_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   static_cast<int>(shared_bytes)));
  cudaFuncAttributes a{};
  XF_CUDA_TRY(cudaFuncGetAttributes(&a, kernel));
  kernel_facts f;
  f.registers = a.numRegs;
  f.local_bytes = static_cast<int>(a.localSizeBytes);
  f.shared_bytes = shared_bytes;
  XF_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&f.resident_blocks_per_sm, kernel,
                                                            static_cast<int>(threads), shared_bytes));
  if (f.resident_blocks_per_sm == 0)
    throw std::runtime_error(std::string(name) + ": a block of " + std::to_string(threads) +
                             " threads with " + std::to_string(shared_bytes) +
                             " bytes of shared memory does not fit an SM");
  return f;
}

/// One way of computing a case: its kernel, launched on a stream with the case's buffers bound.
struct variant {
  std::string name, what;
  kernel_facts facts;
  std::function<void(cudaStream_t)> launch;
};

/// One row of the results: a variant on one case of a family.
struct row {
  std::string family, variant, what, case_name, mode;  // mode: "" where none
  unsigned k = 0;                                      // 0 where none
  std::uint64_t bytes = 0, moved_bytes = 0;
  bool verified = false;
  std::string mismatch;
  std::vector<double> seconds;
  kernel_facts facts;
  nlohmann::json extra = nlohmann::json::object();

  std::vector<double> sorted_gbps() const {
    std::vector<double> v;
    for (double s : seconds) v.push_back(static_cast<double>(bytes) / s / 1e9);
    std::sort(v.begin(), v.end());
    return v;
  }
  double median_gbps() const {
    const auto v = sorted_gbps();
    if (v.empty()) return 0;
    return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  }
};

/// Where the first differing byte is, or "" when `got` equals `expected`.
std::string first_mismatch(const std::uint8_t* got, const std::uint8_t* expected, std::uint64_t bytes) {
  if (std::memcmp(got, expected, bytes) == 0) return "";
  std::uint64_t i = 0;
  while (got[i] == expected[i]) ++i;
  char text[160];
  std::snprintf(text, sizeof text, "output byte %llu of %llu is 0x%02x, expected 0x%02x",
                static_cast<unsigned long long>(i), static_cast<unsigned long long>(bytes), got[i],
                expected[i]);
  return text;
}

/// Checks each variant's output against `expected` (the output buffer poisoned first, so a kernel that
/// writes nothing fails), then times the ones that matched: --warmup launches each, then --reps rounds of
/// one launch of every variant. Appends a row per variant to `rows`, from `base`.
void measure(const std::vector<variant>& variants, const row& base, void* device_out, const void* expected,
             std::uint64_t out_bytes, const options& o, xf::cuda_stream& stream, std::vector<row>& rows) {
  std::vector<std::uint8_t> got(out_bytes);
  std::vector<row> out;
  for (const variant& v : variants) {
    row r = base;
    r.variant = v.name;
    r.what = v.what;
    r.facts = v.facts;
    XF_CUDA_TRY(cudaMemsetAsync(device_out, 0xa5, out_bytes, stream.get()));
    v.launch(stream.get());
    XF_CUDA_TRY(cudaGetLastError());
    XF_CUDA_TRY(cudaMemcpyAsync(got.data(), device_out, got.size(), cudaMemcpyDeviceToHost, stream.get()));
    XF_CUDA_TRY(cudaStreamSynchronize(stream.get()));
    r.mismatch = first_mismatch(got.data(), static_cast<const std::uint8_t*>(expected), out_bytes);
    r.verified = r.mismatch.empty();
    if (!r.verified)
      std::fprintf(stderr, "xeflow-encoding-kernels: %s %s %s: MISMATCH: %s\n", r.family.c_str(),
                   r.case_name.c_str(), r.variant.c_str(), r.mismatch.c_str());
    out.push_back(std::move(r));
  }
  for (unsigned i = 0; i < o.warmup; ++i)
    for (std::size_t j = 0; j < variants.size(); ++j)
      if (out[j].verified) variants[j].launch(stream.get());
  XF_CUDA_TRY(cudaGetLastError());
  XF_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  xf::cuda_event start(true), end(true);
  for (unsigned rep = 0; rep < o.reps; ++rep) {
    for (std::size_t j = 0; j < variants.size(); ++j) {
      if (!out[j].verified) continue;
      XF_CUDA_TRY(cudaEventRecord(start.get(), stream.get()));
      variants[j].launch(stream.get());
      XF_CUDA_TRY(cudaGetLastError());
      XF_CUDA_TRY(cudaEventRecord(end.get(), stream.get()));
      XF_CUDA_TRY(cudaEventSynchronize(end.get()));
      float ms = 0;
      XF_CUDA_TRY(cudaEventElapsedTime(&ms, start.get(), end.get()));
      out[j].seconds.push_back(ms / 1e3);
    }
  }
  for (row& r : out) {
    if (r.verified)
      std::fprintf(stderr, "%-15s %-6s %-20s %9.2f GB/s\n", r.family.c_str(), r.case_name.c_str(),
                   r.variant.c_str(), r.median_gbps());
    rows.push_back(std::move(r));
  }
}

/// Host tables (bytes) in device memory as 32-bit words, padded: what the kernels copy into shared memory.
struct device_tables {
  xf::device_buffer<std::uint32_t> words;
  unsigned count = 0;
  explicit device_tables(const std::vector<std::uint8_t>& bytes)
      : words((bytes.size() + 3) / 4 + 1), count(static_cast<unsigned>((bytes.size() + 3) / 4)) {
    XF_CUDA_TRY(cudaMemcpy(words.get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
  }
  std::size_t shared_bytes() const { return std::size_t{count} * 4; }
};

// ---- the RAID-6 tables -----------------------------------------------------------------------------------

std::vector<std::uint8_t> log_exp_table() {
  std::vector<std::uint8_t> t(log_bytes + exp_bytes, 0);
  for (unsigned e = 0; e < 255; ++e) t[gf256::exp2(e)] = static_cast<std::uint8_t>(e);
  for (unsigned j = 0; j < exp_bytes; ++j) t[log_bytes + j] = gf256::exp2(j);
  return t;
}

std::vector<std::uint8_t> mul_rows(const std::vector<std::uint8_t>& constants) {
  std::vector<std::uint8_t> t;
  for (std::uint8_t c : constants)
    for (unsigned x = 0; x < 256; ++x) t.push_back(gf256::mul(c, static_cast<std::uint8_t>(x)));
  return t;
}

std::vector<std::uint8_t> nibble_rows(const std::vector<std::uint8_t>& constants) {
  std::vector<std::uint8_t> t;
  for (std::uint8_t c : constants) {
    for (unsigned x = 0; x < 16; ++x) t.push_back(gf256::mul(c, static_cast<std::uint8_t>(x)));
    for (unsigned x = 0; x < 16; ++x) t.push_back(gf256::mul(c, static_cast<std::uint8_t>(x << 4)));
  }
  return t;
}

std::vector<std::uint8_t> q_weights(unsigned k) {
  std::vector<std::uint8_t> c;
  for (unsigned i = 0; i < k; ++i) c.push_back(gf256::exp2(i));
  return c;
}

/// Q from the definition, one byte at a time (Σ 2^i · D_i): a check of the host reference itself.
std::uint8_t q_byte_by_definition(const std::uint8_t* stripe, std::uint64_t block_bytes, unsigned k,
                                  std::uint64_t at) {
  std::uint8_t q = 0;
  for (unsigned i = 0; i < k; ++i) q ^= gf256::mul(gf256::exp2(i), stripe[i * block_bytes + at]);
  return q;
}

void run_raid6_encode(unsigned k, const options& o, const std::vector<std::uint64_t>& data,
                      xf::cuda_stream& stream, const device_info& dev, std::vector<row>& rows) {
  const std::uint64_t words = o.block_bytes / 8, stripes = o.bytes / (k * o.block_bytes);
  if (stripes == 0) throw std::invalid_argument("--bytes holds no whole stripe of k = " + std::to_string(k));
  const std::uint64_t in_words = stripes * k * words, out_words = stripes * 2 * words;
  std::vector<std::uint64_t> expected(out_words);
  parallel_for(stripes, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t s = begin; s < end; ++s)
      for (std::uint64_t w = 0; w < words; ++w)
        raid6::pq_word(data.data() + s * k * words, words, k, w, expected[s * 2 * words + w],
                       expected[s * 2 * words + words + w]);
  });
  const auto* stripe0 = reinterpret_cast<const std::uint8_t*>(data.data());
  const auto* q0 = reinterpret_cast<const std::uint8_t*>(expected.data() + words);
  for (std::uint64_t at = 0; at < o.block_bytes; at += 61)
    if (q_byte_by_definition(stripe0, o.block_bytes, k, at) != q0[at])
      throw std::logic_error("raid6::pq_word disagrees with Q's definition on the host");

  xf::device_buffer<std::uint64_t> in(in_words), out(out_words);
  XF_CUDA_TRY(cudaMemcpy(in.get(), data.data(), in_words * 8, cudaMemcpyHostToDevice));
  const device_tables none(std::vector<std::uint8_t>{}), log_exp(log_exp_table()),
      mul(mul_rows(q_weights(k))), nibble(nibble_rows(q_weights(k)));
  const unsigned grid = o.blocks_per_sm * static_cast<unsigned>(dev.prop.multiProcessorCount);
  std::vector<variant> variants;
  const unsigned threads = o.threads;
  auto add = [&](auto* kernel, const char* name, const char* what, const device_tables& t) {
    variants.push_back(
        {name, what, facts_of(kernel, t.shared_bytes(), threads, name), [=, &in, &out, &t](cudaStream_t s) {
           kernel<<<grid, threads, t.shared_bytes(), s>>>(in.get(), out.get(), stripes, words, k,
                                                          t.words.get(), t.count);
         }});
  };
  add(raid6_encode_kernel<pq_variant::swar_horner>, "swar_horner",
      "raid6::pq_word as raid6_encode calls it: Horner's rule, byte-parallel multiply-by-2 on 64-bit words, "
      "no tables",
      none);
  add(raid6_encode_kernel<pq_variant::log_exp>, "log_exp_shared",
      "log/antilog tables in shared memory: Q ^= exp[log d + i] per byte d != 0", log_exp);
  add(raid6_encode_kernel<pq_variant::mul_table>, "mul_table_shared",
      "k rows mul[2^i][256] in shared memory, one byte lookup per byte", mul);
  add(raid6_encode_kernel<pq_variant::nibble_table>, "nibble_table_shared",
      "k rows of ISA-L's 4-bit split tables (32 bytes) in shared memory, two lookups per byte", nibble);

  row base;
  base.family = "raid6_encode";
  base.k = k;
  base.case_name = "k=" + std::to_string(k);
  base.bytes = in_words * 8;
  base.moved_bytes = (in_words + out_words) * 8;
  base.extra = {{"block_bytes", o.block_bytes}, {"stripes", stripes}};
  measure(variants, base, out.get(), expected.data(), out_words * 8, o, stream, rows);
}

void run_raid6_recover(unsigned k, const options& o, const std::vector<std::uint64_t>& data,
                       xf::cuda_stream& stream, const device_info& dev, std::vector<row>& rows) {
  const std::uint64_t words = o.block_bytes / 8, stripes = o.bytes / ((k + 2) * o.block_bytes);
  if (stripes == 0)
    throw std::invalid_argument("--bytes holds no whole stripe of k + 2 = " + std::to_string(k + 2) +
                                " blocks");
  raid6::recovery r;
  if (const std::string problem = raid6::make_recovery(k, 2, o.lost, r); !problem.empty())
    throw std::invalid_argument("--lost: " + problem);
  // The stripes: k data blocks from `data`, then P and Q from the host reference.
  const std::uint64_t stripe_words = (k + 2) * words, in_words = stripes * stripe_words;
  const std::uint64_t out_words = stripes * 2 * words;
  std::vector<std::uint64_t> stripes_host(in_words), expected(out_words);
  parallel_for(stripes, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t s = begin; s < end; ++s) {
      std::uint64_t* stripe = stripes_host.data() + s * stripe_words;
      std::copy_n(data.data() + s * k * words, k * words, stripe);
      for (std::uint64_t w = 0; w < words; ++w)
        raid6::pq_word(stripe, words, k, w, stripe[k * words + w], stripe[(k + 1) * words + w]);
      for (std::uint64_t w = 0; w < words; ++w) {
        std::uint64_t rebuilt[2] = {0, 0};
        raid6::recover_word(r, stripe, words, w, rebuilt);
        expected[s * 2 * words + w] = rebuilt[0];
        expected[s * 2 * words + words + w] = rebuilt[1];
      }
    }
  });
  for (std::uint64_t s = 0; s < stripes; s += std::max<std::uint64_t>(1, stripes / 64))
    for (unsigned j = 0; j < 2; ++j)
      if (!std::equal(expected.data() + s * 2 * words + j * words,
                      expected.data() + s * 2 * words + (j + 1) * words,
                      stripes_host.data() + s * stripe_words + r.lost[j] * words))
        throw std::logic_error("raid6::recover_word does not give back the lost data on the host");

  xf::device_buffer<std::uint64_t> in(in_words), out(out_words);
  XF_CUDA_TRY(cudaMemcpy(in.get(), stripes_host.data(), in_words * 8, cudaMemcpyHostToDevice));
  const device_tables none(std::vector<std::uint8_t>{}), mul(mul_rows({r.a, r.b})),
      nibble(nibble_rows({r.a, r.b}));
  const unsigned grid = o.blocks_per_sm * static_cast<unsigned>(dev.prop.multiProcessorCount);
  std::vector<variant> variants;
  const unsigned threads = o.threads;
  auto add = [&](auto* kernel, const char* name, const char* what, const device_tables& t) {
    variants.push_back(
        {name, what, facts_of(kernel, t.shared_bytes(), threads, name), [=, &in, &out, &t](cudaStream_t s) {
           kernel<<<grid, threads, t.shared_bytes(), s>>>(in.get(), out.get(), stripes, words, r,
                                                          t.words.get(), t.count);
         }});
  };
  add(raid6_recover_kernel<recover_variant::swar_mul_word>, "swar_mul_word",
      "raid6::recover_word as raid6_recover calls it: gf256::mul_word (bit by bit on 64-bit words) for the "
      "two constants",
      none);
  add(raid6_recover_kernel<recover_variant::mul_table>, "mul_table_shared",
      "recover_word's survivors' sums, the two constants' 256-byte rows in shared memory", mul);
  add(raid6_recover_kernel<recover_variant::nibble_table>, "nibble_table_shared",
      "recover_word's survivors' sums, the two constants' 4-bit split rows in shared memory", nibble);

  row base;
  base.family = "raid6_recover";
  base.k = k;
  base.case_name = "k=" + std::to_string(k);
  base.bytes = in_words * 8;
  base.moved_bytes = (stripes * k * words + out_words) * 8;  // the k surviving blocks read, two written
  base.extra = {{"block_bytes", o.block_bytes},
                {"stripes", stripes},
                {"lost", {r.lost[0], r.lost[1]}},
                {"a", r.a},
                {"b", r.b}};
  measure(variants, base, out.get(), expected.data(), out_words * 8, o, stream, rows);
}

// ---- AES-128 ---------------------------------------------------------------------------------------------

// NIST SP 800-38A's key and CTR counter block (F.1.1, F.5.1).
constexpr std::uint8_t nist_key[16] = {0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6,
                                       0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c};
constexpr ctr_iv nist_iv = {
    {0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff}};

/// The host reference against SP 800-38A's first block of ECB (F.1.1) and CTR (F.5.1).
void check_aes_reference(const aes::round_keys& keys) {
  constexpr std::uint8_t plain[16] = {0x6b, 0xc1, 0xbe, 0xe2, 0x2e, 0x40, 0x9f, 0x96,
                                      0xe9, 0x3d, 0x7e, 0x11, 0x73, 0x93, 0x17, 0x2a};
  constexpr std::uint8_t ecb[16] = {0x3a, 0xd7, 0x7b, 0xb4, 0x0d, 0x7a, 0x36, 0x60,
                                    0xa8, 0x9e, 0xca, 0xf3, 0x24, 0x66, 0xef, 0x97};
  constexpr std::uint8_t ctr[16] = {0x87, 0x4d, 0x61, 0x91, 0xb6, 0x20, 0xe3, 0x26,
                                    0x1b, 0xef, 0x68, 0x64, 0x99, 0x0d, 0xb6, 0xce};
  std::uint8_t got[16];
  aes::encrypt_ecb(keys, aes::host_tables(), plain, got, 16);
  if (std::memcmp(got, ecb, 16) != 0) throw std::logic_error("aes::encrypt_ecb fails SP 800-38A F.1.1");
  aes::xor_ctr(keys, aes::host_tables(), nist_iv.bytes, 0, plain, got, 16);
  if (std::memcmp(got, ctr, 16) != 0) throw std::logic_error("aes::xor_ctr fails SP 800-38A F.5.1");
  aes::encrypt_block_compact(keys, aes::host_tables().sbox, plain, got);
  if (std::memcmp(got, ecb, 16) != 0) throw std::logic_error("aes::encrypt_block_compact fails F.1.1");
}

void run_aes128(const std::string& mode, const options& o, const std::vector<std::uint64_t>& data,
                xf::cuda_stream& stream, const device_info& dev, std::vector<row>& rows) {
  const bool ctr = mode == "ctr";
  const std::uint64_t blocks = o.bytes / aes::block_bytes, bytes = blocks * aes::block_bytes;
  if (blocks == 0) throw std::invalid_argument("--bytes holds no 16-byte AES block");
  const aes::round_keys keys = aes::expand_key(nist_key);
  check_aes_reference(keys);
  const auto* plain = reinterpret_cast<const std::uint8_t*>(data.data());
  std::vector<std::uint8_t> expected(bytes);
  parallel_for(blocks, [&](std::uint64_t begin, std::uint64_t end) {
    const std::uint64_t at = begin * aes::block_bytes, n = (end - begin) * aes::block_bytes;
    if (ctr)
      aes::xor_ctr(keys, aes::host_tables(), nist_iv.bytes, begin, plain + at, expected.data() + at, n);
    else
      aes::encrypt_ecb(keys, aes::host_tables(), plain + at, expected.data() + at, n);
  });

  xf::device_buffer<std::uint8_t> in(bytes), out(bytes);
  xf::device_buffer<aes::tables> tables(1);
  XF_CUDA_TRY(cudaMemcpy(in.get(), plain, bytes, cudaMemcpyHostToDevice));
  XF_CUDA_TRY(cudaMemcpy(tables.get(), &aes::host_tables(), sizeof(aes::tables), cudaMemcpyHostToDevice));
  const unsigned grid = o.blocks_per_sm * static_cast<unsigned>(dev.prop.multiProcessorCount);
  std::vector<variant> variants;
  const unsigned threads = o.threads;
  auto add = [&](auto* ecb_kernel, auto* ctr_kernel, const char* name, const char* what, std::size_t shared) {
    auto* kernel = ctr ? ctr_kernel : ecb_kernel;
    variants.push_back(
        {name, what, facts_of(kernel, shared, threads, name), [=, &in, &out, &tables](cudaStream_t s) {
           kernel<<<grid, threads, shared, s>>>(in.get(), out.get(), blocks, keys, nist_iv, tables.get());
         }});
  };
  using V = aes_variant;
  add(aes128_kernel<V::ttable_shared, false>, aes128_kernel<V::ttable_shared, true>, "ttable_shared",
      "aes::encrypt_block / xor_ctr on a copy of aes::tables (8.5 KiB) in shared memory",
      sizeof(aes::tables));
  add(aes128_kernel<V::ttable_global, false>, aes128_kernel<V::ttable_global, true>, "ttable_global",
      "aes::encrypt_block / xor_ctr on aes::tables in device memory, plain loads (where today's operator "
      "has them: its params in the parameter arena)",
      0);
  add(aes128_kernel<V::ttable_global_ldg, false>, aes128_kernel<V::ttable_global_ldg, true>,
      "ttable_global_ldg",
      "T-table rounds, the tables in device memory read through the read-only path (__ldg)", 0);
  add(aes128_kernel<V::ttable_shared_lanes, false>, aes128_kernel<V::ttable_shared_lanes, true>,
      "ttable_shared_lanes",
      "te0 in shared memory, one copy per bank (32 KiB): no bank conflicts; te1..te3 by rotation, the S-box "
      "a byte of te0",
      std::size_t{256} * warp_lanes * 4);
  add(aes128_kernel<V::sbox_compact, false>, aes128_kernel<V::sbox_compact, true>, "sbox_compact_shared",
      "aes::encrypt_block_compact: FIPS-197's rounds reading only the S-box (256 bytes, shared memory)", 256);

  row base;
  base.family = "aes128_encrypt";
  base.mode = mode;
  base.case_name = mode;
  base.bytes = bytes;
  base.moved_bytes = 2 * bytes;
  base.extra = {{"key", "2b7e151628aed2a6abf7158809cf4f3c"}};  // SP 800-38A's
  if (ctr) base.extra["iv"] = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
  measure(variants, base, out.get(), expected.data(), bytes, o, stream, rows);
}

// ---- the arithmetic on the host (--check-host) -----------------------------------------------------------

/// Runs the kernels' per-word and per-block code (everything but the loads into shared memory and the
/// __ldg lookups, which ttable_global_ldg's rounds take as given) on the host against the references,
/// including cases the GPU run does not cover: k up to 255, every pair of lost blocks, a counter that
/// carries. Needs no GPU. Returns the number of failures, each printed.
unsigned check_on_host() {
  unsigned failures = 0;
  auto expect = [&](bool ok, const std::string& what) {
    if (!ok && ++failures <= 20) std::fprintf(stderr, "check-host: FAILED: %s\n", what.c_str());
  };
  // The walk visits every (stripe, word) once, whatever the grid.
  for (std::uint64_t threads : {1u, 7u, 1000u, 135168u})
    for (std::uint64_t words : {1u, 8u, 8192u})
      for (std::uint64_t stripes : {1u, 3u, 17u}) {
        std::vector<unsigned> seen(stripes * words, 0);
        for (std::uint64_t t = 0; t < threads; ++t)
          for_each_word(t, threads, stripes, words, [&](std::uint64_t s, std::uint64_t w) {
            if (s < stripes && w < words) ++seen[s * words + w];
          });
        expect(std::all_of(seen.begin(), seen.end(), [](unsigned n) { return n == 1; }),
               "for_each_word over " + std::to_string(stripes) + " x " + std::to_string(words) + " words, " +
                   std::to_string(threads) + " threads");
      }
  const std::uint64_t words = 64;
  const std::vector<std::uint64_t> data = random_words(raid6::max_data_blocks * words);
  for (unsigned k : {2u, 4u, 8u, 16u, 100u, raid6::max_data_blocks}) {
    const auto log_exp = log_exp_table(), mul = mul_rows(q_weights(k)), nibble = nibble_rows(q_weights(k));
    bool ok[3] = {true, true, true};
    for (std::uint64_t w = 0; w < words; ++w) {
      std::uint64_t p0, q0, p, q;
      raid6::pq_word(data.data(), words, k, w, p0, q0);
      pq_word_by<pq_variant::log_exp>(data.data(), words, k, w, log_exp.data(), p, q);
      ok[0] = ok[0] && p == p0 && q == q0;
      pq_word_by<pq_variant::mul_table>(data.data(), words, k, w, mul.data(), p, q);
      ok[1] = ok[1] && p == p0 && q == q0;
      pq_word_by<pq_variant::nibble_table>(data.data(), words, k, w, nibble.data(), p, q);
      ok[2] = ok[2] && p == p0 && q == q0;
    }
    const std::string at = " at k = " + std::to_string(k);
    expect(ok[0], "raid6_encode log_exp_shared" + at);
    expect(ok[1], "raid6_encode mul_table_shared" + at);
    expect(ok[2], "raid6_encode nibble_table_shared" + at);
  }
  for (unsigned k : {2u, 4u, 8u, 16u}) {
    std::vector<std::uint64_t> stripe((k + 2) * words);
    std::copy_n(data.data(), k * words, stripe.data());
    for (std::uint64_t w = 0; w < words; ++w)
      raid6::pq_word(stripe.data(), words, k, w, stripe[k * words + w], stripe[(k + 1) * words + w]);
    for (unsigned x = 0; x < k; ++x)
      for (unsigned y = x + 1; y < k; ++y) {
        const unsigned lost[2] = {x, y};
        raid6::recovery r;
        raid6::make_recovery(k, 2, lost, r);
        const auto mul = mul_rows({r.a, r.b}), nibble = nibble_rows({r.a, r.b});
        bool ok[3] = {true, true, true};
        for (std::uint64_t w = 0; w < words; ++w) {
          const std::uint64_t dx = stripe[x * words + w], dy = stripe[y * words + w];
          std::uint64_t got[2] = {0, 0};
          recover_word_by<recover_variant::swar_mul_word>(r, stripe.data(), words, w, nullptr, got);
          ok[0] = ok[0] && got[0] == dx && got[1] == dy;
          recover_word_by<recover_variant::mul_table>(r, stripe.data(), words, w, mul.data(), got);
          ok[1] = ok[1] && got[0] == dx && got[1] == dy;
          recover_word_by<recover_variant::nibble_table>(r, stripe.data(), words, w, nibble.data(), got);
          ok[2] = ok[2] && got[0] == dx && got[1] == dy;
        }
        const std::string at =
            " at k = " + std::to_string(k) + ", lost " + std::to_string(x) + ", " + std::to_string(y);
        expect(ok[0], "raid6_recover swar_mul_word" + at);
        expect(ok[1], "raid6_recover mul_table_shared" + at);
        expect(ok[2], "raid6_recover nibble_table_shared" + at);
      }
  }
  const aes::round_keys keys = aes::expand_key(nist_key);
  const aes::tables& t = aes::host_tables();
  try {
    check_aes_reference(keys);
  } catch (const std::exception& e) {
    expect(false, e.what());
  }
  std::vector<std::uint32_t> lanes(256 * warp_lanes);  // ttable_shared_lanes' shared memory
  for (unsigned i = 0; i < lanes.size(); ++i) lanes[i] = t.te[0][i / warp_lanes];
  ctr_iv carry = nist_iv;  // the low half wraps after 16 blocks
  for (unsigned i = 8; i < 16; ++i) carry.bytes[i] = i == 15 ? 0xf0 : 0xff;
  const std::uint64_t blocks = 1024;
  const auto* plain = reinterpret_cast<const std::uint8_t*>(data.data());
  std::vector<std::uint8_t> ecb(blocks * aes::block_bytes), ctr(ecb.size()), ctr_carry(ecb.size());
  aes::encrypt_ecb(keys, t, plain, ecb.data(), ecb.size());
  aes::xor_ctr(keys, t, nist_iv.bytes, 0, plain, ctr.data(), ctr.size());
  aes::xor_ctr(keys, t, carry.bytes, 0, plain, ctr_carry.data(), ctr_carry.size());
  const auto te = [&](unsigned j, unsigned x) { return t.te[j][x]; };
  const auto sbox = [&](unsigned x) { return t.sbox[x]; };
  bool ok[4] = {true, true, true, true};
  for (std::uint64_t b = 0; b < blocks; ++b) {
    const std::uint64_t at = b * aes::block_bytes;
    const std::uint8_t* in = plain + at;
    const lanes_te lane_te{lanes.data() + b % warp_lanes};
    const lanes_sbox lane_sbox{lanes.data() + b % warp_lanes};
    std::uint8_t out[8][aes::block_bytes];
    operator_block<false>(keys, t, nist_iv, b, blocks, in, out[0]);
    operator_block<true>(keys, t, nist_iv, b, blocks, in, out[1]);
    block_with<false>(keys, nist_iv, b, in, out[2], te, sbox);
    block_with<true>(keys, carry, b, in, out[3], te, sbox);
    block_with<false>(keys, nist_iv, b, in, out[4], lane_te, lane_sbox);
    block_with<true>(keys, nist_iv, b, in, out[5], lane_te, lane_sbox);
    compact_block<false>(keys, t.sbox, nist_iv, b, in, out[6]);
    compact_block<true>(keys, t.sbox, carry, b, in, out[7]);
    auto same = [&](unsigned i, const std::vector<std::uint8_t>& v) {
      return std::memcmp(out[i], v.data() + at, aes::block_bytes) == 0;
    };
    ok[0] = ok[0] && same(0, ecb) && same(1, ctr);
    ok[1] = ok[1] && same(2, ecb) && same(3, ctr_carry);
    ok[2] = ok[2] && same(4, ecb) && same(5, ctr);
    ok[3] = ok[3] && same(6, ecb) && same(7, ctr_carry);
  }
  expect(ok[0], "aes128 ttable_shared / ttable_global (the operator's calls)");
  expect(ok[1], "aes128 ttable_global_ldg's rounds");
  expect(ok[2], "aes128 ttable_shared_lanes");
  expect(ok[3], "aes128 sbox_compact_shared");
  return failures;
}

// ---- output ----------------------------------------------------------------------------------------------

void print_table(const std::vector<row>& rows) {
  std::printf("%-15s %-6s %-20s %9s %9s %9s %9s %5s %6s %7s %6s %s\n", "family", "case", "variant", "GB/s",
              "min", "max", "ms", "regs", "local", "smem", "blk/SM", "verified");
  for (const row& r : rows) {
    // The fastest verified variant of its case gets a star.
    bool best = r.verified;
    for (const row& o : rows)
      if (best && o.verified && o.family == r.family && o.case_name == r.case_name &&
          o.median_gbps() > r.median_gbps())
        best = false;
    const auto v = r.sorted_gbps();
    if (r.verified)
      std::printf("%-15s %-6s %-20s %8.2f%s %9.2f %9.2f %9.3f %5d %6d %7zu %6d yes\n", r.family.c_str(),
                  r.case_name.c_str(), r.variant.c_str(), r.median_gbps(), best ? "*" : " ", v.front(),
                  v.back(), static_cast<double>(r.bytes) / r.median_gbps() / 1e6, r.facts.registers,
                  r.facts.local_bytes, r.facts.shared_bytes, r.facts.resident_blocks_per_sm);
    else
      std::printf("%-15s %-6s %-20s %9s %9s %9s %9s %5d %6d %7zu %6d NO: %s\n", r.family.c_str(),
                  r.case_name.c_str(), r.variant.c_str(), "-", "-", "-", "-", r.facts.registers,
                  r.facts.local_bytes, r.facts.shared_bytes, r.facts.resident_blocks_per_sm,
                  r.mismatch.c_str());
  }
}

nlohmann::json to_json(const row& r) {
  nlohmann::json runs_ms = nlohmann::json::array();
  for (double s : r.seconds) runs_ms.push_back(s * 1e3);
  const auto v = r.sorted_gbps();
  nlohmann::json j = {{"family", r.family},
                      {"variant", r.variant},
                      {"what", r.what},
                      {"case", r.case_name},
                      {"k", r.k == 0 ? nlohmann::json(nullptr) : nlohmann::json(r.k)},
                      {"mode", r.mode.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.mode)},
                      {"bytes", r.bytes},
                      {"moved_bytes", r.moved_bytes},
                      {"verified", r.verified},
                      {"gbps", r.verified ? nlohmann::json(r.median_gbps()) : nlohmann::json(nullptr)},
                      {"min_gbps", v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.front())},
                      {"max_gbps", v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.back())},
                      {"runs_ms", runs_ms},
                      {"registers", r.facts.registers},
                      {"local_bytes", r.facts.local_bytes},
                      {"shared_bytes", r.facts.shared_bytes},
                      {"resident_blocks_per_sm", r.facts.resident_blocks_per_sm}};
  if (!r.verified) j["mismatch"] = r.mismatch;
  for (const auto& [key, value] : r.extra.items()) j[key] = value;
  return j;
}

std::uint64_t parse_byte_option(const char* option, const std::string& text) {
  if (const auto bytes = xf::parse_bytes(text)) return *bytes;
  throw std::invalid_argument(std::string(option) + " '" + text + "': " + xf::bytes_syntax_problem(text));
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> family_names = {"raid6_encode", "raid6_recover", "aes128_encrypt"};
  options o;
  o.ks = {4, 8, 16};
  o.families = family_names;
  o.modes = {"ecb", "ctr"};
  std::string bytes_text = "1GiB", block_text = "64KiB", json_path, commit;
  std::vector<unsigned> lost = {0, 1};
  int ordinal = 0;
  bool host_only = false;
  CLI::App app{
      "xeflow-encoding-kernels: the encoding operators' GF(2^8) and AES arithmetic, kernel against kernel "
      "in device memory (no PCIe). raid6_encode: P+Q by raid6::pq_word (SWAR Horner, today's operator), "
      "log/antilog tables, per-coefficient 256-byte tables and 4-bit split tables (the tables in shared "
      "memory). raid6_recover (two lost data blocks): gf256::mul_word (today's) against 256-byte and 4-bit "
      "split tables. aes128_encrypt (ECB, CTR): T-tables in shared memory, in device memory (plain loads, "
      "as today's operator, and through the read-only path), te0 replicated per shared-memory bank, and the "
      "S-box-only cipher. Every output is checked bit for bit against the operators' host functions before "
      "it is timed. GB/s of input bytes (1 GB = 1e9 bytes), the median of --reps launches."};
  app.option_defaults()->always_capture_default();
  app.add_option("--family", o.families, "families to run, comma-separated")
      ->delimiter(',')
      ->check(CLI::IsMember(family_names));
  app.add_option("--bytes", bytes_text,
                 "input bytes per launch (RAID-6: rounded down to whole stripes); device memory holds the "
                 "input and the output (AES: twice this)");
  app.add_option("--block-size", block_text, "RAID-6 block size (a multiple of 64 bytes)");
  app.add_option("--k", o.ks, "RAID-6 data blocks per stripe, comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(2u, raid6::max_data_blocks));
  app.add_option("--lost", lost, "raid6_recover's two lost data blocks (indices below every k)")
      ->delimiter(',');
  app.add_option("--mode", o.modes, "AES modes, comma-separated")
      ->delimiter(',')
      ->check(CLI::IsMember(std::vector<std::string>{"ecb", "ctr"}));
  app.add_option("--blocks-per-sm", o.blocks_per_sm, "grid: this many blocks per SM")
      ->check(CLI::Range(1u, 64u));
  app.add_option("--threads", o.threads, "threads per block")->check(CLI::Range(32u, 1024u));
  app.add_option("--reps", o.reps, "timed launches per variant (the median is reported)")
      ->check(CLI::Range(1u, 1000u));
  app.add_option("--warmup", o.warmup, "untimed launches per variant after its checked one")
      ->check(CLI::Range(0u, 100u));
  app.add_option("--json", json_path, "also write the results as JSON to this file");
  app.add_option("--commit", commit, "commit recorded in the JSON (default: git rev-parse --short HEAD)");
  app.add_option("--device", ordinal, "CUDA device ordinal");
  app.add_flag("--check-host", host_only,
               "only run the kernels' arithmetic on the host against the references (no GPU needed; every "
               "run starts with it)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : exit_usage;
  }
  try {
    o.bytes = parse_byte_option("--bytes", bytes_text);
    o.block_bytes = parse_byte_option("--block-size", block_text);
    if (o.block_bytes == 0 || o.block_bytes % raid6::block_bytes_multiple != 0)
      throw std::invalid_argument("--block-size must be a positive multiple of 64 bytes");
    if (lost.size() != 2 || lost[0] == lost[1])
      throw std::invalid_argument("--lost names two different data blocks");
    o.lost[0] = std::min(lost[0], lost[1]);
    o.lost[1] = std::max(lost[0], lost[1]);
    for (unsigned k : o.ks)
      if (o.lost[1] >= k)
        throw std::invalid_argument("--lost " + std::to_string(o.lost[1]) +
                                    " is not a data block of k = " + std::to_string(k));
    if (o.threads % 32 != 0) throw std::invalid_argument("--threads must be a multiple of 32");
    if (o.ks.empty() || o.modes.empty() || o.families.empty())
      throw std::invalid_argument("--k, --mode and --family need at least one value");
    const unsigned k_max = *std::max_element(o.ks.begin(), o.ks.end());
    if (o.bytes < (k_max + 2) * o.block_bytes)
      throw std::invalid_argument("--bytes must hold a stripe of k + 2 = " + std::to_string(k_max + 2) +
                                  " blocks of --block-size");
    if (o.bytes < aes::block_bytes) throw std::invalid_argument("--bytes must hold an AES block");
  } catch (const std::exception& e) {
    std::cerr << "xeflow-encoding-kernels: error: " << e.what() << "\n";
    return exit_usage;
  }
  if (const unsigned failures = check_on_host(); failures != 0) {
    std::cerr << "xeflow-encoding-kernels: " << failures << " host check(s) failed\n";
    return exit_failed;
  }
  if (host_only) {
    std::printf("check-host: the kernels' arithmetic equals the references on the host\n");
    return 0;
  }
  if (commit.empty()) commit = git_commit();
  auto selected = [&](const std::string& f) {
    return std::find(o.families.begin(), o.families.end(), f) != o.families.end();
  };

  device_info dev;
  std::vector<row> rows;
  try {
    dev = open_device(ordinal);
    std::fprintf(stderr, "%s, %d SMs: %u blocks of %u threads, %s per launch\n", dev.prop.name,
                 dev.prop.multiProcessorCount, o.blocks_per_sm * dev.prop.multiProcessorCount, o.threads,
                 xf::format_bytes(o.bytes).c_str());
    const std::vector<std::uint64_t> data = random_words((o.bytes + 7) / 8);
    xf::cuda_stream stream;
    if (selected("raid6_encode"))
      for (unsigned k : o.ks) run_raid6_encode(k, o, data, stream, dev, rows);
    if (selected("raid6_recover"))
      for (unsigned k : o.ks) run_raid6_recover(k, o, data, stream, dev, rows);
    if (selected("aes128_encrypt"))
      for (const std::string& mode : o.modes) run_aes128(mode, o, data, stream, dev, rows);
  } catch (const no_gpu_error& e) {
    std::cerr << "xeflow-encoding-kernels: " << e.what() << "\n";
    return exit_no_gpu;
  } catch (const std::exception& e) {
    std::cerr << "xeflow-encoding-kernels: error: " << e.what() << "\n";
    return exit_failed;
  }

  std::printf(
      "%s, %d SMs, %u blocks x %u threads; GB/s of input bytes, median of %u (* fastest of its case)\n",
      dev.prop.name, dev.prop.multiProcessorCount, o.blocks_per_sm * dev.prop.multiProcessorCount, o.threads,
      o.reps);
  print_table(rows);
  const bool all_verified = std::all_of(rows.begin(), rows.end(), [](const row& r) { return r.verified; });

  if (!json_path.empty()) {
    nlohmann::json results = nlohmann::json::array();
    for (const row& r : rows) results.push_back(to_json(r));
    const nlohmann::json doc = {
        {"device", dev.prop.name},
        {"compute_capability", std::to_string(dev.prop.major) + "." + std::to_string(dev.prop.minor)},
        {"date", utc_now()},
        {"commit", commit.empty() ? nlohmann::json(nullptr) : nlohmann::json(commit)},
        {"command_line", command_line(argc, argv)},
        {"all_verified", all_verified},
        {"results", results},
        {"config",
         {{"bytes", o.bytes},
          {"block_bytes", o.block_bytes},
          {"k", o.ks},
          {"modes", o.modes},
          {"families", o.families},
          {"lost", {o.lost[0], o.lost[1]}},
          {"sms", dev.prop.multiProcessorCount},
          {"blocks_per_sm", o.blocks_per_sm},
          {"grid_blocks", o.blocks_per_sm * dev.prop.multiProcessorCount},
          {"threads", o.threads},
          {"reps", o.reps},
          {"warmup", o.warmup},
          {"device_ordinal", dev.ordinal},
          {"bytes_per_gb", 1e9}}}};
    std::ofstream file(json_path);
    file << doc.dump(2) << "\n";
    if (!file) {
      std::cerr << "xeflow-encoding-kernels: error: cannot write " << json_path << "\n";
      return exit_failed;
    }
  }
  return all_verified ? 0 : exit_failed;
}
