// Host half of the baselines (g++): configuration checks, dataset, CPU stage, expected checksums,
// verification, latency statistics, and the GPU-free --self-check of all of them.
#include "apps/baselines/host_side.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <stdexcept>
#include <thread>
#include <type_traits>

#include "framework/model/operator.hpp"
#include "operators/frame_checksum.hpp"
#include "operators/frame_content.hpp"

namespace xf::baselines {

std::string_view name_of(mode m) {
  switch (m) {
    case mode::ckc_pageable:
      return "ckc-pageable";
    case mode::ckc_pinned:
      return "ckc-pinned";
    case mode::ckc_hq:
      return "ckc-hq";
    case mode::koum:
      return "koum";
    case mode::graph:
      return "graph";
    case mode::concurrent:
      return "concurrent";
  }
  return "?";
}
std::string_view name_of(shape s) {
  return s == shape::g ? "g" : "gc";
}
std::string_view name_of(op_kind o) {
  switch (o) {
    case op_kind::scale:
      return "scale";
    case op_kind::fma:
      return "fma";
    case op_kind::raid6:
      return "raid6";
    case op_kind::aes_ecb:
      return "aes-ecb";
    case op_kind::aes_ctr:
      return "aes-ctr";
  }
  return "?";
}
std::string_view name_of(verify_kind v) {
  return v == verify_kind::checksum ? "checksum" : "none";
}

std::uint32_t default_streams(mode m) {
  switch (m) {
    case mode::ckc_hq:
      return 4;
    case mode::graph:
    case mode::concurrent:
      return 8;
    default:
      return 1;
  }
}

bool is_encoding(op_kind o) {
  return o == op_kind::raid6 || o == op_kind::aes_ecb || o == op_kind::aes_ctr;
}

std::uint64_t output_bytes(const op_config& op, std::uint64_t batch_bytes) {
  if (op.kind != op_kind::raid6) return batch_bytes;
  return raid6_encode_op::output_share(op.raid6).of(batch_bytes);
}

op_config stage_op(const config& cfg, std::uint32_t stage) {
  op_config op = cfg.op;
  if (op.kind == op_kind::fma && !cfg.fma_iterations.empty())
    op.fma.iterations = cfg.fma_iterations[cfg.fma_iterations.size() == 1 ? 0 : stage];
  return op;
}

namespace {

/// Host worker threads in the thread-count options: far more than any host has cores is a typo.
constexpr std::uint32_t max_host_threads = 256;
/// Every timed batch's latency is stored (8 bytes each) to take exact percentiles; beyond this many
/// batches the batch size is surely a mistake.
constexpr std::uint64_t max_timed_batches = std::uint64_t{1} << 26;

/// Calls fn(T{}) for the element types the baselines implement. Everything below is written for any T;
/// only the dispatch limits it (xeflow's benchmark topologies are u32 for the maps, u8 for encoding).
template <class Fn>
decltype(auto) with_element(element_type e, Fn&& fn) {
  if (e == element_type::u32) return fn(std::uint32_t{});
  if (e == element_type::u8) return fn(std::uint8_t{});
  throw std::invalid_argument("element type " + std::string(name_of(e)) + " is not supported (u32, u8)");
}

/// fn(i) for i in [0, n) over the host's cores; for set-up work done before timing.
template <class Fn>
void parallel_for(std::uint64_t n, Fn&& fn) {
  const std::uint64_t cores = std::max(1u, std::thread::hardware_concurrency());
  const auto threads = static_cast<unsigned>(std::min(n, cores));
  std::atomic<std::uint64_t> next{0};
  auto work = [&] {
    for (std::uint64_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) fn(i);
  };
  std::vector<std::jthread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
}  // jthreads join here

template <class Op, class T>
void host_compute(const typename Op::params& p, T* data, std::uint64_t count) {
  // A local task with literal ids: after inlining the stride is the constant 1, so the compiler sees a
  // plain loop (and may vectorise it) — the operator's code is unchanged.
  frame_task<T> task;
  task.in = data;
  task.out = data;
  task.count = count;
  task.offset = 0;
  task.thread_id = 0;
  task.thread_count = 1;
  Op::template compute<T>(p, task);
}

/// An encoding operator over one batch as one virtual thread: `in` (batch_bytes) → `out`
/// (output_bytes). Frame offset 0 for every batch, as on the GPU (the CTR counter's value does not change
/// the work).
void encode_on_host(const op_config& op, const std::byte* in, std::byte* out, std::uint64_t batch_bytes) {
  frame_task<std::uint8_t> task;
  task.in = reinterpret_cast<const std::uint8_t*>(in);
  task.out = reinterpret_cast<std::uint8_t*>(out);
  task.count = batch_bytes;
  task.offset = 0;
  task.thread_id = 0;
  task.thread_count = 1;
  std::uint64_t failure = 0;
  task.failure = &failure;
  if (op.kind == op_kind::raid6)
    raid6_encode_op::compute<std::uint8_t>(op.raid6, task);
  else
    aes128_encrypt_op::compute<std::uint8_t>(op.aes, task);
  if (failure != 0) throw std::logic_error("the encoding operator refused a batch that validate admitted");
}

/// The FIPS-197 example key (appendix C.1): the encoding baselines' key.
constexpr std::uint8_t baseline_key[16] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                           0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f};

std::string hex(std::uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%016" PRIx64, v);
  return text;
}

}  // namespace

void validate(const config& cfg) {
  auto fail = [](const std::string& what) { throw std::invalid_argument(what); };
  with_element(cfg.element, [](auto) { return 0; });
  const std::uint64_t element_bytes = size_of(cfg.element);
  if (cfg.stages < 1 || cfg.stages > max_stages)
    fail("--stages must be 1.." + std::to_string(max_stages) + ", got " + std::to_string(cfg.stages));
  if (cfg.batch_bytes == 0 || cfg.batch_bytes % element_bytes != 0)
    fail("--batch-bytes must be a positive multiple of the element size (" + std::to_string(element_bytes) +
         " bytes), got " + std::to_string(cfg.batch_bytes));
  if (cfg.total_bytes < cfg.batch_bytes)
    fail("--total-bytes (" + std::to_string(cfg.total_bytes) + ") must hold at least one batch of " +
         std::to_string(cfg.batch_bytes) + " bytes");
  if (cfg.total_bytes / cfg.batch_bytes > max_timed_batches)
    fail("--total-bytes / --batch-bytes gives " + std::to_string(cfg.total_bytes / cfg.batch_bytes) +
         " batches; at most " + std::to_string(max_timed_batches) + " are supported");
  if (cfg.dataset_frames == 0) fail("--dataset-frames must be at least 1");
  if (cfg.streams > max_streams) fail("--streams must be at most " + std::to_string(max_streams));
  const bool single = cfg.mode == mode::ckc_pageable || cfg.mode == mode::ckc_pinned;
  if (single && cfg.streams > 1)
    fail(std::string(name_of(cfg.mode)) + " uses one stream by definition; use ckc-hq for --streams " +
         std::to_string(cfg.streams));
  if (cfg.mode == mode::ckc_hq && cfg.streams == 1)
    fail("ckc-hq needs --streams >= 2 (ckc-pinned is one stream)");
  if (cfg.mode == mode::concurrent && cfg.shape != shape::g)
    fail(
        "concurrent runs --shape g only (its GPU stages chain on the GPU, one stream each); gc has a CPU "
        "stage between GPU stages: use ckc-hq or graph for gc");
  const std::string iterations_range =
      std::to_string(fma_op::min_iterations) + ".." + std::to_string(fma_op::max_iterations);
  if (cfg.op.kind == op_kind::fma &&
      (cfg.op.fma.iterations < fma_op::min_iterations || cfg.op.fma.iterations > fma_op::max_iterations))
    fail("--iterations must be " + iterations_range);
  if (!cfg.fma_iterations.empty()) {
    if (cfg.op.kind != op_kind::fma)
      fail("--fma-iterations applies to --op fma only, not --op " + std::string(name_of(cfg.op.kind)));
    const std::size_t given = cfg.fma_iterations.size();
    if (given != 1 && given != cfg.stages)
      fail("--fma-iterations gives " + std::to_string(given) + " values for --stages " +
           std::to_string(cfg.stages) + ": give one (every GPU stage) or one per GPU stage");
    for (std::size_t k = 0; k < given; ++k) {
      const std::uint32_t v = cfg.fma_iterations[k];
      if (v < fma_op::min_iterations || v > fma_op::max_iterations)
        fail("--fma-iterations: value " + std::to_string(k + 1) + " is " + std::to_string(v) +
             "; each must be " + iterations_range);
    }
  }
  if (cfg.verify_threads > max_host_threads || cfg.cpu_stage_threads > max_host_threads)
    fail("--verify-threads and --cpu-stage-threads must be at most " + std::to_string(max_host_threads));
  if (cfg.warmup_batches < -1) fail("--warmup-batches must be >= 0");
  if (!is_encoding(cfg.op.kind)) {
    if (cfg.element != element_type::u32) fail("--op scale and fma stream u32 elements");
    return;
  }
  const std::string op_name(name_of(cfg.op.kind));
  if (cfg.element != element_type::u8) fail("--op " + op_name + " streams bytes (u8)");
  if (cfg.shape != shape::g || cfg.stages != 1)
    fail("--op " + op_name + " runs as one GPU stage: --shape g --stages 1");
  if (cfg.op.kind == op_kind::raid6) {
    const std::uint32_t k = cfg.op.raid6.k;
    if (k < 2 || k > raid6::max_data_blocks)
      fail("--k must be 2.." + std::to_string(raid6::max_data_blocks) + ", got " + std::to_string(k));
    if (cfg.batch_bytes % (std::uint64_t{k} * raid6::block_bytes_multiple) != 0)
      fail("--batch-bytes " + std::to_string(cfg.batch_bytes) +
           " is not a stripe of k = " + std::to_string(k) + " blocks of a multiple of " +
           std::to_string(raid6::block_bytes_multiple) + " bytes");
  } else if (cfg.batch_bytes % aes::block_bytes != 0) {
    fail("--batch-bytes must be a multiple of AES's 16-byte block for --op " + op_name);
  }
}

config resolve(const config& cfg) {
  config r = cfg;
  if (r.streams == 0) r.streams = default_streams(r.mode);
  if (r.warmup_batches < 0) r.warmup_batches = std::max<std::int64_t>(4, 2 * std::int64_t{r.streams});
  // One buffer set means nothing else is in flight while a batch is on the host: handing its CPU work to
  // another thread could only add a wake-up to every batch.
  if (r.streams == 1) r.verify_threads = r.cpu_stage_threads = 0;
  if (r.verify == verify_kind::none) r.verify_threads = 0;
  if (r.shape == shape::g) r.cpu_stage_threads = 0;  // g has no CPU stage
  // Every GPU stage's count spelled out, so the result says what each ran.
  if (r.op.kind == op_kind::fma) {
    std::vector<std::uint32_t> per_stage(r.stages);
    for (std::uint32_t k = 0; k < r.stages; ++k) per_stage[k] = stage_op(cfg, k).fma.iterations;
    const bool uniform = std::all_of(per_stage.begin(), per_stage.end(),
                                     [&](std::uint32_t v) { return v == per_stage.front(); });
    if (uniform) r.op.fma.iterations = per_stage.front();  // then op says it all, as before
    r.fma_iterations = std::move(per_stage);
  } else {
    r.fma_iterations.clear();
  }
  // The encoding operators bound to a batch as xeflow binds them to a topic's frame.
  topic_info batch_topic;
  batch_topic.name = "batch";
  batch_topic.frame_bytes = r.batch_bytes;
  if (r.op.kind == op_kind::raid6) {
    r.op.raid6.block_bytes = r.batch_bytes / r.op.raid6.k;
    r.op.raid6.out = raid6_encode_op::output::parity;
    if (const auto problem = raid6_encode_op::bind_input(r.op.raid6, batch_topic))
      throw std::invalid_argument("--op raid6: " + problem->message);
  } else if (is_encoding(r.op.kind)) {
    r.op.aes.mode = r.op.kind == op_kind::aes_ecb ? aes_params::mode::ecb : aes_params::mode::ctr;
    std::copy(std::begin(baseline_key), std::end(baseline_key), r.op.aes.key.bytes);
    r.op.aes.key.given = true;
    r.op.aes.key_file.given = false;
    if (const auto problem = aes128_encrypt_op::bind_input(r.op.aes, batch_topic))
      throw std::invalid_argument("--op " + std::string(name_of(r.op.kind)) + ": " + problem->message);
  }
  return r;
}

std::uint64_t batch_elements(const config& cfg) {
  return cfg.batch_bytes / size_of(cfg.element);
}
std::uint64_t timed_batches(const config& cfg) {
  return cfg.total_bytes / cfg.batch_bytes;
}
std::uint32_t dataset_frames(const config& cfg) {
  return static_cast<std::uint32_t>(
      std::max<std::uint64_t>(1, std::min<std::uint64_t>(cfg.dataset_frames, timed_batches(cfg))));
}
std::uint32_t gpu_steps(const config& cfg) {
  return cfg.shape == shape::g ? 1 : cfg.stages;
}
std::uint32_t host_applications(const config& cfg) {
  return cfg.shape == shape::g ? cfg.stages : 2 * cfg.stages - 1;
}

void fill_dataset(const config& cfg, void* dataset, std::uint32_t frames) {
  with_element(cfg.element, [&](auto zero) {
    using T = decltype(zero);
    const std::uint64_t count = batch_elements(cfg);
    auto* base = static_cast<T*>(dataset);
    parallel_for(frames, [&](std::uint64_t p) {
      content::fill<T>(content::generator::sequence, base + p * count, count, cfg.seed, p * count);
    });
    return 0;
  });
}

void apply_host_stage(const op_config& op, element_type element, void* data, std::uint64_t count) {
  with_element(element, [&](auto zero) {
    using T = decltype(zero);
    if (op.kind == op_kind::scale) {
      host_compute<scale_op>(op.scale, static_cast<T*>(data), count);
    } else {
      host_compute<fma_op>(op.fma, static_cast<T*>(data), count);
    }
    return 0;
  });
}

std::vector<op_config> host_chain(const config& cfg) {
  std::vector<op_config> chain;
  for (std::uint32_t a = 0; a < host_applications(cfg); ++a)
    chain.push_back(stage_op(cfg, cfg.shape == shape::g ? a : a / 2));  // gc: GPU k, then CPU k
  return chain;
}

std::vector<std::uint64_t> expected_checksums(const config& cfg, const void* dataset, std::uint32_t frames) {
  std::vector<std::uint64_t> sums(frames);
  const std::uint64_t bytes = cfg.batch_bytes;
  if (is_encoding(cfg.op.kind)) {
    const std::uint64_t out_bytes = output_bytes(cfg.op, bytes);
    parallel_for(frames, [&](std::uint64_t p) {
      std::vector<std::byte> out(out_bytes);
      encode_on_host(cfg.op, static_cast<const std::byte*>(dataset) + p * bytes, out.data(), bytes);
      sums[p] = frame_checksum(out.data(), out_bytes);
    });
    return sums;
  }
  const std::vector<op_config> chain = host_chain(cfg);
  parallel_for(frames, [&](std::uint64_t p) {
    const auto* src = static_cast<const std::byte*>(dataset) + p * bytes;
    std::vector<std::byte> batch(src, src + bytes);
    for (const op_config& op : chain) apply_host_stage(op, cfg.element, batch.data(), batch_elements(cfg));
    sums[p] = frame_checksum(batch.data(), bytes);
  });
  return sums;
}

batch_checker::batch_checker(mode m, std::vector<std::uint64_t> expected, std::uint64_t batch_bytes)
    : mode_(m), expected_(std::move(expected)), batch_bytes_(batch_bytes) {
  if (expected_.empty()) throw std::invalid_argument("batch_checker: no expected checksums");
}

bool batch_checker::check(std::uint64_t batch, const void* out, const char* phase) {
  const std::uint64_t p = batch % expected_.size();
  const std::uint64_t got = frame_checksum(out, batch_bytes_);
  if (got == expected_[p]) return true;
  mismatches_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(reports_mutex_);
  if (reports_.size() < max_reports) {
    reports_.push_back("mode " + std::string(name_of(mode_)) + ": " + phase + " batch " +
                       std::to_string(batch) + " (dataset batch " + std::to_string(p) +
                       "): output checksum " + hex(got) + ", expected " + hex(expected_[p]));
  }
  return false;
}

std::vector<std::string> batch_checker::reports() const {
  std::lock_guard lock(reports_mutex_);
  return reports_;
}

latency_summary summarize(std::vector<double>& samples) {
  latency_summary s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const auto rank = [&](double q) {  // nearest rank: the smallest sample with at least q of them ≤ it
    const auto n = static_cast<double>(samples.size());
    const auto r = static_cast<std::size_t>(std::ceil(q * n));
    return samples[std::clamp<std::size_t>(r, 1, samples.size()) - 1];
  };
  s.p50 = rank(0.50);
  s.p99 = rank(0.99);
  s.max = samples.back();
  double sum = 0;
  for (double v : samples) sum += v;
  s.mean = sum / static_cast<double>(samples.size());
  return s;
}

// ---- --self-check --------------------------------------------------------------------------------------

namespace {

/// The independent side: the documented semantics written out plainly for u32, without the project's
/// templates (frame_task, element_math, content::fill). Integer parameters: truncated toward zero, then
/// reduced modulo 2^32; arithmetic modulo 2^32.
std::uint32_t plain_u32_param(double x) {
  return static_cast<std::uint32_t>(static_cast<std::uint64_t>(static_cast<std::int64_t>(std::trunc(x))));
}
std::uint32_t plain_apply(const op_config& op, std::uint32_t v) {
  if (op.kind == op_kind::scale) {
    return static_cast<std::uint32_t>(std::uint64_t{v} * plain_u32_param(op.scale.factor));
  }
  const std::uint64_t a = plain_u32_param(op.fma.a), b = plain_u32_param(op.fma.b);
  for (std::uint32_t k = 0; k < op.fma.iterations; ++k) v = static_cast<std::uint32_t>(v * a + b);
  return v;
}
/// Dataset batch p as the stream defines it: element i of the stream is seed + i modulo 2^32.
std::vector<std::uint32_t> plain_input(std::int64_t seed, std::uint64_t p, std::uint64_t count) {
  std::vector<std::uint32_t> v(count);
  for (std::uint64_t i = 0; i < count; ++i)
    v[i] = static_cast<std::uint32_t>(static_cast<std::uint64_t>(seed) + p * count + i);
  return v;
}
/// GPU stage k's operator as documented for config::fma_iterations.
op_config plain_stage_op(const config& cfg, std::uint32_t k) {
  op_config op = cfg.op;
  if (op.kind == op_kind::fma && cfg.fma_iterations.size() == 1) op.fma.iterations = cfg.fma_iterations[0];
  if (op.kind == op_kind::fma && cfg.fma_iterations.size() > 1) op.fma.iterations = cfg.fma_iterations.at(k);
  return op;
}
/// What the sink must see: g applies GPU stage k's op for k = 0 … n−1; gc follows GPU stage k with a CPU
/// stage running the same op, except after the last.
std::vector<std::uint32_t> plain_output(const config& cfg, std::uint64_t p) {
  auto v = plain_input(cfg.seed, p, batch_elements(cfg));
  for (std::uint32_t k = 0; k < cfg.stages; ++k) {
    const op_config op = plain_stage_op(cfg, k);
    const bool cpu_stage_follows = cfg.shape == shape::gc && k + 1 < cfg.stages;
    for (auto& x : v) {
      x = plain_apply(op, x);
      if (cpu_stage_follows) x = plain_apply(op, x);
    }
  }
  return v;
}

struct self_check_state {
  std::ostream& out;
  std::uint64_t checks = 0;
  std::uint64_t failures = 0;
  void expect(bool ok, const std::string& what) {
    ++checks;
    if (!ok) {
      ++failures;
      out << "FAIL: " << what << "\n";
    }
  }
};

std::string describe(const config& cfg) {
  std::string d = std::string(name_of(cfg.op.kind));
  if (cfg.op.kind == op_kind::scale) {
    d += "(factor=" + std::to_string(cfg.op.scale.factor) + ")";
  } else {
    std::string iterations;
    for (std::uint32_t v : cfg.fma_iterations)
      iterations += (iterations.empty() ? "" : ",") + std::to_string(v);
    if (iterations.empty()) iterations = std::to_string(cfg.op.fma.iterations);
    d += "(iterations=" + iterations + ", a=" + std::to_string(cfg.op.fma.a) +
         ", b=" + std::to_string(cfg.op.fma.b) + ")";
  }
  return d + " shape " + std::string(name_of(cfg.shape)) + " stages " + std::to_string(cfg.stages) +
         " seed " + std::to_string(cfg.seed);
}

void check_case(self_check_state& st, const config& cfg) {
  const std::string what = describe(cfg);
  const std::uint32_t frames = dataset_frames(cfg);
  const std::uint64_t count = batch_elements(cfg);
  std::vector<std::uint32_t> dataset(std::uint64_t{frames} * count);
  fill_dataset(cfg, dataset.data(), frames);
  for (std::uint32_t p = 0; p < frames; ++p) {
    const auto plain = plain_input(cfg.seed, p, count);
    st.expect(std::equal(plain.begin(), plain.end(), dataset.begin() + p * count),
              what + ": dataset batch " + std::to_string(p) + " differs from seed + index");
  }

  // The CPU stage on a couple of batches: one application of each stage's op equals the plain operator.
  for (std::uint32_t k = 0; k < cfg.stages; ++k) {
    const op_config op = stage_op(cfg, k);
    for (std::uint32_t p = 0; p < std::min<std::uint32_t>(frames, 2); ++p) {
      std::vector<std::uint32_t> batch(dataset.begin() + p * count, dataset.begin() + (p + 1) * count);
      apply_host_stage(op, cfg.element, batch.data(), count);
      bool same = true;
      for (std::uint64_t i = 0; i < count; ++i)
        same = same && batch[i] == plain_apply(plain_stage_op(cfg, k), dataset[p * count + i]);
      st.expect(same, what + ": stage " + std::to_string(k) + "'s op on dataset batch " + std::to_string(p) +
                          " differs from the plain op");
    }
  }

  const auto expected = expected_checksums(cfg, dataset.data(), frames);
  std::vector<std::vector<std::uint32_t>> outputs;
  for (std::uint32_t p = 0; p < frames; ++p) {
    outputs.push_back(plain_output(cfg, p));
    st.expect(expected[p] == frame_checksum(outputs.back().data(), cfg.batch_bytes),
              what + ": expected checksum of dataset batch " + std::to_string(p) + " differs");
  }

  // The sink: stream batches b → dataset batch b % P all pass; one flipped bit is caught and reported.
  batch_checker checker(cfg.mode, expected, cfg.batch_bytes);
  for (std::uint64_t b = 0; b < 2 * std::uint64_t{frames}; ++b)
    st.expect(checker.check(b, outputs[b % frames].data(), "self-check"),
              what + ": checker rejected correct stream batch " + std::to_string(b));
  auto corrupt = outputs[frames - 1];
  corrupt[count / 2] ^= 1u << 7;
  const std::uint64_t bad_batch = 2 * std::uint64_t{frames} - 1;
  st.expect(!checker.check(bad_batch, corrupt.data(), "self-check"),
            what + ": checker accepted a flipped bit");
  const auto reports = checker.reports();
  st.expect(checker.mismatches() == 1 && reports.size() == 1 &&
                reports[0].find("batch " + std::to_string(bad_batch)) != std::string::npos,
            what + ": mismatch not counted or reported as expected");
}

/// GF(2^8) multiplication by 2 modulo 0x11d, bit by bit: Q's generator step as the RAID-6 papers define it.
std::uint8_t plain_times_two(std::uint8_t v) {
  return static_cast<std::uint8_t>((v << 1) ^ ((v & 0x80) != 0 ? 0x1d : 0));
}

/// raid6: P and Q of each dataset batch recomputed byte by byte (Horner's rule over the blocks from the
/// last), against expected_checksums; the checker's verdicts on the outputs.
void check_raid6_case(self_check_state& st, std::uint32_t k, std::uint64_t block) {
  config cfg;
  cfg.element = element_type::u8;
  cfg.op.kind = op_kind::raid6;
  cfg.op.raid6.k = k;
  cfg.batch_bytes = k * block;
  cfg.total_bytes = 5 * cfg.batch_bytes;
  cfg.dataset_frames = 3;
  validate(cfg);
  cfg = resolve(cfg);
  const std::string what = "raid6 k " + std::to_string(k) + " block " + std::to_string(block);
  const std::uint32_t frames = dataset_frames(cfg);
  std::vector<std::uint8_t> dataset(frames * cfg.batch_bytes);
  fill_dataset(cfg, dataset.data(), frames);
  const auto expected = expected_checksums(cfg, dataset.data(), frames);
  st.expect(output_bytes(cfg.op, cfg.batch_bytes) == 2 * block, what + ": the output is P and Q");
  batch_checker checker(cfg.mode, expected, 2 * block);
  for (std::uint32_t f = 0; f < frames; ++f) {
    const std::uint8_t* stripe = dataset.data() + f * cfg.batch_bytes;
    std::vector<std::uint8_t> pq(2 * block, 0);
    for (std::uint64_t i = 0; i < block; ++i) {
      std::uint8_t p = 0, q = 0;
      for (std::uint32_t b = k; b-- > 0;) {
        p ^= stripe[b * block + i];
        q = static_cast<std::uint8_t>(plain_times_two(q) ^ stripe[b * block + i]);
      }
      pq[i] = p;
      pq[block + i] = q;
    }
    st.expect(expected[f] == frame_checksum(pq.data(), pq.size()),
              what + ": expected checksum of dataset batch " + std::to_string(f) + " differs");
    st.expect(checker.check(f, pq.data(), "self-check"), what + ": checker rejected a correct batch");
    pq[block + 3] ^= 0x10;
    st.expect(!checker.check(f, pq.data(), "self-check"), what + ": checker accepted a wrong Q");
  }
}

/// aes-ecb: the FIPS-197 appendix C.1 example through the baselines' encoding; aes-ctr: each output block
/// is the input XOR the ECB encryption of its counter (IV zero, frame offset 0), on the dataset.
void check_aes_cases(self_check_state& st) {
  config cfg;
  cfg.element = element_type::u8;
  cfg.op.kind = op_kind::aes_ecb;
  cfg.batch_bytes = 4096;
  cfg.total_bytes = 4 * cfg.batch_bytes;
  cfg.dataset_frames = 2;
  validate(cfg);
  const config ecb = resolve(cfg);
  const std::uint8_t plain[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                  0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
  const std::uint8_t cipher[16] = {0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30,
                                   0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a};
  std::vector<std::byte> in(ecb.batch_bytes), out(ecb.batch_bytes);
  std::memcpy(in.data(), plain, sizeof plain);
  encode_on_host(ecb.op, in.data(), out.data(), ecb.batch_bytes);
  st.expect(std::memcmp(out.data(), cipher, sizeof cipher) == 0, "aes-ecb: the FIPS-197 C.1 example");

  cfg.op.kind = op_kind::aes_ctr;
  const config ctr = resolve(cfg);
  const std::uint32_t frames = dataset_frames(ctr);
  std::vector<std::uint8_t> dataset(frames * ctr.batch_bytes);
  fill_dataset(ctr, dataset.data(), frames);
  const auto expected = expected_checksums(ctr, dataset.data(), frames);
  for (std::uint32_t f = 0; f < frames; ++f) {
    std::vector<std::uint8_t> want(ctr.batch_bytes);
    for (std::uint64_t b = 0; b < ctr.batch_bytes / 16; ++b) {
      std::byte counter[16] = {}, pad[16];
      for (int i = 0; i < 8; ++i) counter[15 - i] = static_cast<std::byte>(b >> (8 * i));
      encode_on_host(ecb.op, counter, pad, 16);
      for (int i = 0; i < 16; ++i)
        want[b * 16 + i] = dataset[f * ctr.batch_bytes + b * 16 + i] ^ static_cast<std::uint8_t>(pad[i]);
    }
    st.expect(expected[f] == frame_checksum(want.data(), want.size()),
              "aes-ctr: expected checksum of dataset batch " + std::to_string(f) + " differs");
  }
}

}  // namespace

int run_self_check(std::ostream& out) {
  self_check_state st{out};

  std::vector<op_config> ops;
  op_config op;
  op.kind = op_kind::scale;
  for (double factor : {3.0, 2.5, -1.0, scale_op::params{}.factor}) {
    op.scale.factor = factor;
    ops.push_back(op);
  }
  op.kind = op_kind::fma;
  op.fma = fma_op::params{};  // defaults: a, b truncate to 1, 0 on integer topics
  ops.push_back(op);
  op.fma = fma_op::params{.iterations = 7, .a = 3.0, .b = 5.0};
  ops.push_back(op);
  op.fma = fma_op::params{.iterations = 33, .a = -7.9, .b = 1e10};  // negative and out-of-range parameters
  ops.push_back(op);

  // Per-stage fma iterations: every stage its own count (stage k: per_stage_iterations[k % 4]), and one
  // count for all.
  const std::uint32_t per_stage_iterations[] = {4, 64, 1, 33};
  enum class iterations_given : std::uint8_t { op_only, one_value, per_stage };

  for (const auto& o : ops) {
    for (auto given : {iterations_given::op_only, iterations_given::one_value, iterations_given::per_stage}) {
      if (given != iterations_given::op_only && o.kind != op_kind::fma) continue;
      for (shape s : {shape::g, shape::gc}) {
        for (std::uint32_t n = 1; n <= max_stages; ++n) {
          for (std::int64_t seed : {std::int64_t{1}, std::int64_t{-5}, std::int64_t{4294967290}}) {
            config cfg;
            cfg.op = o;
            if (given == iterations_given::one_value) cfg.fma_iterations = {5};
            if (given == iterations_given::per_stage)
              for (std::uint32_t k = 0; k < n; ++k) cfg.fma_iterations.push_back(per_stage_iterations[k % 4]);
            cfg.shape = s;
            cfg.stages = n;
            cfg.seed = seed;
            cfg.batch_bytes = 1027 * 4;  // odd element count: the checksum's partial last word is exercised
            cfg.total_bytes = 7 * cfg.batch_bytes;
            cfg.dataset_frames = 3;
            validate(cfg);
            check_case(st, cfg);           // as given
            check_case(st, resolve(cfg));  // and with the per-stage counts spelled out
          }
        }
      }
    }
  }

  for (std::uint32_t k : {2u, 4u, 16u, 255u}) check_raid6_case(st, k, 64);
  check_raid6_case(st, 4, 4096);
  check_aes_cases(st);

  // Geometry and configuration rules.
  {
    config cfg;
    cfg.batch_bytes = 4096;
    cfg.total_bytes = 3 * 4096 + 100;
    st.expect(timed_batches(cfg) == 3 && dataset_frames(cfg) == 3, "dataset frames clamp to the batch count");
    cfg.shape = shape::gc;
    cfg.stages = 3;
    st.expect(gpu_steps(cfg) == 3 && host_applications(cfg) == 5,
              "gc with 3 stages: 3 GPU steps, 5 applications");
    cfg.shape = shape::g;
    st.expect(gpu_steps(cfg) == 1 && host_applications(cfg) == 3,
              "g with 3 stages: 1 GPU step, 3 applications");
    auto rejects = [](config c) {
      try {
        validate(c);
        return false;
      } catch (const std::invalid_argument&) {
        return true;
      }
    };
    config bad = cfg;
    bad.batch_bytes = 6;
    st.expect(rejects(bad), "batch bytes not a multiple of the element size rejected");
    bad = cfg;
    bad.stages = max_stages + 1;
    st.expect(rejects(bad), "too many stages rejected");
    bad = cfg;
    bad.element = element_type::f32;
    st.expect(rejects(bad), "element types other than u32 rejected");
    config enc = cfg;
    enc.stages = 1;
    enc.element = element_type::u8;
    enc.op.kind = op_kind::raid6;
    st.expect(!rejects(enc), "raid6 on a 4 KiB batch, k = 4, admitted");
    bad = enc;
    bad.op.raid6.k = 0;
    st.expect(rejects(bad), "raid6 with k = 0 rejected");
    bad.op.raid6.k = 256;
    st.expect(rejects(bad), "raid6 with k = 256 rejected");
    bad = enc;
    bad.op.raid6.k = 3;
    st.expect(rejects(bad), "raid6 whose blocks would not be multiples of 64 bytes rejected");
    bad = enc;
    bad.stages = 2;
    st.expect(rejects(bad), "raid6 in two stages rejected");
    bad = enc;
    bad.element = element_type::u32;
    st.expect(rejects(bad), "raid6 on u32 elements rejected");
    bad = enc;
    bad.op.kind = op_kind::aes_ecb;
    bad.batch_bytes = 4112;
    bad.total_bytes = 4 * bad.batch_bytes;
    st.expect(!rejects(bad), "aes-ecb on a batch of whole 16-byte blocks admitted");
    bad.batch_bytes = 4100;
    st.expect(rejects(bad), "aes-ecb on a batch of a partial block rejected");
    bad = cfg;
    bad.mode = mode::ckc_pinned;
    bad.streams = 4;
    st.expect(rejects(bad), "ckc-pinned with 4 streams rejected");
    bad = cfg;
    bad.mode = mode::concurrent;
    bad.shape = shape::gc;
    st.expect(rejects(bad), "concurrent with shape gc rejected");
    bad = cfg;
    bad.op.kind = op_kind::fma;
    bad.fma_iterations = {4, 64};  // 3 stages
    st.expect(rejects(bad), "two fma iteration counts for three stages rejected");
    bad.fma_iterations = {4, 0, 64};
    st.expect(rejects(bad), "an fma iteration count of 0 rejected");
    bad.fma_iterations = {4, fma_op::max_iterations + 1, 64};
    st.expect(rejects(bad), "an fma iteration count above the maximum rejected");
    bad.op.kind = op_kind::scale;
    bad.fma_iterations = {4};
    st.expect(rejects(bad), "fma iteration counts for op scale rejected");
    config hq = cfg;
    hq.mode = mode::ckc_hq;
    const config r = resolve(hq);
    st.expect(r.streams == 4 && r.warmup_batches == 8 && r.verify_threads == 1 && r.cpu_stage_threads == 0,
              "ckc-hq defaults: 4 streams, 8 warm-up batches, 1 verify thread, no CPU stage threads for g");
  }

  // Percentiles: nearest rank over 1..100.
  {
    std::vector<double> samples;
    for (int i = 100; i >= 1; --i) samples.push_back(i);
    const auto s = summarize(samples);
    st.expect(s.p50 == 50 && s.p99 == 99 && s.max == 100 && s.mean == 50.5, "latency percentiles of 1..100");
  }

  out << "self-check: " << st.checks << " checks, " << st.failures << " failures\n";
  return st.failures == 0 ? 0 : 1;
}

}  // namespace xf::baselines
