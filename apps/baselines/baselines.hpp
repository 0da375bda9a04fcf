// The conventional ways to stream data CPU→GPU→CPU (copy-kernel-copy, Hyper-Q streams, unified memory,
// CUDA graphs, concurrent kernels) that xeflow's benchmark compares against: configuration, result, and the
// entry points.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "framework/core/element_type.hpp"
#include "operators/encoding/aes128_ops.hpp"
#include "operators/encoding/raid6_encode.hpp"
#include "operators/transforms/fma.hpp"
#include "operators/transforms/scale.hpp"

namespace xf::baselines {

/// How batches travel: see the README block at the top of baselines.cu for each mode's exact recipe.
enum class mode : std::uint8_t { ckc_pageable, ckc_pinned, ckc_hq, koum, graph, concurrent };
/// g = C(G)nC: one H2D, n kernels, one D2H. gc = C(GC)n: n × (H2D, kernel, D2H, CPU stage), the last
/// CPU stage being the verification sink.
enum class shape : std::uint8_t { g, gc };
/// scale and fma map u32 elements in place; the encoding operators (raid6: P and Q of a stripe of k blocks,
/// aes-ecb and aes-ctr: AES-128 encryption) take bytes and run as one GPU stage of C(G)1C.
enum class op_kind : std::uint8_t { scale, fma, raid6, aes_ecb, aes_ctr };
enum class verify_kind : std::uint8_t { checksum, none };

std::string_view name_of(mode m);
std::string_view name_of(shape s);
std::string_view name_of(op_kind o);
std::string_view name_of(verify_kind v);

/// The operator of a stage, with the project's own parameter structs. config::op is shared by every stage;
/// stage_op() gives one stage's own (config::fma_iterations applied).
struct op_config {
  op_kind kind = op_kind::scale;
  scale_op::params scale{};
  fma_op::params fma{};
  /// raid6: k is the option; the block size (batch / k) and output (P then Q) are bound by resolve().
  raid6_encode_op::params raid6{};
  /// aes-ecb / aes-ctr: the FIPS-197 key, IV zero; key schedule and tables bound by resolve().
  aes128_encrypt_op::params aes{};
};

/// raid6, aes-ecb and aes-ctr: bytes in, an output of their own size, one GPU stage.
bool is_encoding(op_kind o);
/// Bytes of a batch's output: the batch's for the maps and AES, P and Q (2 blocks of batch / k) for raid6.
std::uint64_t output_bytes(const op_config& op, std::uint64_t batch_bytes);

inline constexpr std::uint32_t max_stages = 4;
inline constexpr std::uint32_t max_streams = 64;

struct config {
  baselines::mode mode = mode::ckc_pinned;
  /// Buffer sets / streams in flight. 0 = the mode's default (default_streams).
  std::uint32_t streams = 0;
  baselines::shape shape = shape::g;
  std::uint32_t stages = 1;  ///< n, 1..max_stages
  op_config op{};
  /// fma: multiply-adds per element of each GPU stage, GPU stage k running fma_iterations[k] (for gc, the
  /// CPU stage after GPU stage k runs with stage k's parameters too). Empty: op.fma.iterations everywhere;
  /// one value: that value everywhere; else exactly `stages` values. resolve() expands it to `stages`
  /// values for fma (and leaves it empty for scale).
  std::vector<std::uint32_t> fma_iterations;
  element_type element = element_type::u32;  ///< u32 for scale and fma, u8 for the encoding operators
  std::uint64_t batch_bytes = 64 * 1024;
  std::uint64_t total_bytes = std::uint64_t{4} << 30;  ///< streamed: total_bytes / batch_bytes batches
  std::uint32_t dataset_frames = 64;                   ///< P distinct batches; batch b is dataset batch b % P
  std::int64_t seed = 1;
  verify_kind verify = verify_kind::checksum;
  /// Host worker threads for verification / for the CPU stages of `gc`; 0 = on the issuing thread.
  /// Modes with one buffer set (ckc-pageable, ckc-pinned, koum with one stream) always work on the issuing
  /// thread: with nothing else in flight a hand-off only adds latency.
  std::uint32_t verify_threads = 1;
  std::uint32_t cpu_stage_threads = 1;
  /// Untimed batches streamed first (allocations touched, clocks up); -1 = max(4, 2 × streams).
  std::int64_t warmup_batches = -1;
  int device = 0;
};

/// The mode's default number of streams: 1 for ckc-pageable, ckc-pinned and koum, 4 for ckc-hq, 8 for graph
/// and concurrent.
std::uint32_t default_streams(mode m);

/// The operator GPU stage `stage` (0-based, < cfg.stages) runs: cfg.op with that stage's fma iterations.
op_config stage_op(const config& cfg, std::uint32_t stage);

struct result {
  config cfg;  ///< as run: streams, warm-up and thread counts resolved to the values used
  std::string device;
  std::uint32_t dataset_frames = 0;  ///< P after clamping to the batch count
  std::uint64_t batches = 0;         ///< timed batches
  std::uint64_t streamed_bytes = 0;  ///< batches × batch_bytes
  double seconds = 0;
  double gbps = 0;  ///< streamed_bytes / seconds / 1e9
  double latency_p50_us = 0;
  double latency_p99_us = 0;
  double latency_mean_us = 0;
  double latency_max_us = 0;
  std::uint64_t mismatches = 0;               ///< timed and warm-up batches whose checksum differed
  std::vector<std::string> mismatch_reports;  ///< the first few, each naming mode, batch and both checksums
};

/// Checks `cfg` (std::invalid_argument naming the option), probes the GPU (std::runtime_error when none
/// is usable), fills the dataset, computes the expected checksums, warms up, streams and verifies.
/// Mismatches do not throw: they are counted in the result (callers fail the run on mismatches > 0).
result run_baseline(const config& cfg);

}  // namespace xf::baselines
