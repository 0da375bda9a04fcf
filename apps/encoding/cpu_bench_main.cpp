// xeflow-encoding-cpu: the CPU contenders of the encoding benchmark — ISA-L's RAID-6 P+Q and OpenSSL's
// AES-128 (ECB, CTR) — streaming frames from one host dataset on 1 … N threads, with throughput and per-frame
// latency. Every distinct dataset frame's output is first checked against xeflow's own operator code run on
// the host (raid6::pq_word, aes128.hpp), so a fast wrong answer cannot be reported.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/dataset_support/parallel.hpp"
#include "apps/dataset_support/seeded_random.hpp"
#include "apps/dataset_support/tool_cli.hpp"
#include "framework/core/units.hpp"
#include "operators/encoding/aes128.hpp"
#include "operators/encoding/cpu_codecs.hpp"
#include "operators/encoding/raid6.hpp"

namespace {

using namespace xf::apps;
namespace codecs = xf::cpu_codecs;
namespace aes = xf::aes;
namespace raid6 = xf::raid6;
using clock_type = std::chrono::steady_clock;

/// Buffers start on page boundaries, as xeflow's frames do.
constexpr std::size_t page_bytes = 4096;
/// Frames of output each thread rotates through: its own, so no two threads write the same cache lines,
/// and few, so small frames' outputs stay in cache as an operator's output ring would.
constexpr unsigned output_ring_frames = 4;
/// Frames of at most this size: EVP and pq_gen count bytes in int, and a dataset of such frames is already
/// larger than any cache.
constexpr std::uint64_t max_frame_bytes = xf::GiB;

enum class codec_op { raid6, aes_ecb, aes_ctr };

struct bench_options {
  codec_op op = codec_op::raid6;
  std::string op_name;
  unsigned k = 4;
  std::uint64_t frame_bytes = 0;
  std::uint64_t frames = 0;  ///< streamed in the timed phase
  std::uint64_t dataset_frames = 64;
  unsigned threads = 1;
  std::uint64_t seed = 1;

  std::uint64_t block_bytes() const { return frame_bytes / k; }  // raid6
  std::uint64_t output_bytes() const { return op == codec_op::raid6 ? 2 * block_bytes() : frame_bytes; }
  std::uint64_t frame_blocks() const { return frame_bytes / aes::block_bytes; }
};

/// Page-aligned host memory, unfilled.
using host_buffer = std::unique_ptr<std::uint8_t[], decltype(&std::free)>;

host_buffer allocate(std::uint64_t bytes, const char* what) {
  const std::uint64_t rounded = (bytes + page_bytes - 1) / page_bytes * page_bytes;
  host_buffer buffer(static_cast<std::uint8_t*>(std::aligned_alloc(page_bytes, rounded)), &std::free);
  if (!buffer) throw std::runtime_error("cannot allocate " + xf::format_bytes(rounded) + " for " + what);
  return buffer;
}

/// "64KiB": format_bytes without its space, as the options are written.
std::string compact_bytes(std::uint64_t bytes) {
  std::string text = xf::format_bytes(bytes);
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
  return text;
}

/// The library call under test for one thread: its own EVP context (they are not shareable), none for
/// ISA-L, whose pq_gen keeps no state.
class frame_codec {
 public:
  frame_codec(const bench_options& o, const std::uint8_t key[aes::key_bytes]) : o_(o) {
    if (o.op != codec_op::raid6)
      aes_.emplace(key, o.op == codec_op::aes_ecb ? xf::aes_params::mode::ecb : xf::aes_params::mode::ctr,
                   codecs::cipher_direction::encrypt);
  }

  /// Frame `stream_frame` of the stream (its data at `in`) into `out` (output_bytes()).
  void encode(const std::uint8_t* in, std::uint64_t stream_frame, std::uint8_t* out) {
    if (o_.op == codec_op::raid6) {
      codecs::isal_pq(in, o_.k, o_.block_bytes(), out, out + o_.block_bytes());
      return;
    }
    std::uint8_t counter[aes::block_bytes];
    codecs::ctr_counter(zero_iv, stream_frame * o_.frame_blocks(), counter);
    aes_->run(in, out, o_.frame_bytes, counter);
  }

  static constexpr std::uint8_t zero_iv[aes::block_bytes] = {};

 private:
  const bench_options& o_;
  std::optional<codecs::evp_aes128> aes_;
};

/// xeflow's own output for frame `stream_frame` (data at `in`) into `out`: the operators' host code.
void reference_encode(const bench_options& o, const aes::round_keys& keys, const std::uint8_t* in,
                      std::uint64_t stream_frame, std::uint8_t* out) {
  if (o.op == codec_op::raid6) {
    const auto* data = reinterpret_cast<const std::uint64_t*>(in);
    auto* p = reinterpret_cast<std::uint64_t*>(out);
    auto* q = reinterpret_cast<std::uint64_t*>(out + o.block_bytes());
    const std::uint64_t block_words = o.block_bytes() / 8;
    for (std::uint64_t w = 0; w < block_words; ++w) raid6::pq_word(data, block_words, o.k, w, p[w], q[w]);
  } else if (o.op == codec_op::aes_ecb) {
    aes::encrypt_ecb(keys, aes::host_tables(), in, out, o.frame_bytes);
  } else {
    aes::xor_ctr(keys, aes::host_tables(), frame_codec::zero_iv, stream_frame * o.frame_blocks(), in, out,
                 o.frame_bytes);
  }
}

/// Where a library's output first differs from xeflow's.
struct mismatch {
  std::uint64_t frame = 0;
  std::uint64_t byte = 0;
  std::uint8_t library = 0, xeflow = 0;
};

std::string describe(const bench_options& o, const mismatch& m) {
  std::ostringstream s;
  s << "dataset frame " << m.frame << ", ";
  if (o.op == codec_op::raid6)
    s << (m.byte < o.block_bytes() ? "P" : "Q") << " byte " << m.byte % o.block_bytes();
  else
    s << "byte " << m.byte;
  s << ": " << (o.op == codec_op::raid6 ? "ISA-L" : "OpenSSL") << " wrote 0x" << std::hex << std::setw(2)
    << std::setfill('0') << unsigned{m.library} << ", xeflow's operator code 0x" << std::setw(2)
    << unsigned{m.xeflow};
  return s.str();
}

/// Latencies in nanoseconds, saturated at 4.29 s: four bytes a frame keeps a long run's record small.
using latency_record = std::vector<std::uint32_t>;

struct latency_summary {
  double p50_us = 0, p99_us = 0, mean_us = 0;
};

/// Nearest-rank percentiles and the mean over every thread's record.
latency_summary summarise(const std::vector<latency_record>& per_thread) {
  std::vector<std::uint32_t> all;
  for (const auto& r : per_thread) all.insert(all.end(), r.begin(), r.end());
  if (all.empty()) return {};
  const auto rank = [&](double fraction) {
    const auto n = static_cast<double>(all.size());
    const auto at = static_cast<std::size_t>(std::max(1.0, std::ceil(fraction * n))) - 1;
    std::nth_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(at), all.end());
    return all[at] / 1e3;
  };
  double sum = 0;
  for (const std::uint32_t ns : all) sum += ns;
  return {rank(0.50), rank(0.99), sum / static_cast<double>(all.size()) / 1e3};
}

struct bench_result {
  double seconds = 0;
  latency_summary latency;
  std::optional<mismatch> first_mismatch;
};

bench_result run_bench(const bench_options& o) {
  const std::uint64_t P = o.dataset_frames, T = o.threads;
  host_buffer dataset = allocate(P * o.frame_bytes, "the dataset");
  std::uint8_t key[aes::key_bytes];
  seeded_random key_random(block_seed(o.seed, 1, 0));
  for (auto& byte : key) byte = static_cast<std::uint8_t>(key_random.next());
  const aes::round_keys keys = aes::expand_key(key);

  // Each thread's output ring, padded to pages per frame, and its reference scratch.
  const std::uint64_t slot_bytes = (o.output_bytes() + page_bytes - 1) / page_bytes * page_bytes;
  std::vector<host_buffer> rings, scratch;
  std::vector<frame_codec> codec;
  for (unsigned t = 0; t < T; ++t) {
    rings.push_back(allocate(output_ring_frames * slot_bytes, "an output ring"));
    scratch.push_back(allocate(o.output_bytes(), "the reference output"));
    codec.emplace_back(o, key);
  }
  worker_team team(o.threads);

  // The dataset: frame d from its own seed, so its bytes depend on the seed alone, not on the threads.
  team.run([&](unsigned t) {
    for (std::uint64_t d = t; d < P; d += T) {
      seeded_random random(block_seed(o.seed, 0, d));
      auto* words = reinterpret_cast<std::uint64_t*>(dataset.get() + d * o.frame_bytes);
      for (std::uint64_t w = 0; w < o.frame_bytes / 8; ++w) words[w] = random.next();
    }
  });

  // Verification, once per distinct frame (as stream frame d, CTR's counter included), before any timing.
  bench_result result;
  std::vector<std::optional<mismatch>> mismatches(T);
  team.run([&](unsigned t) {
    for (std::uint64_t d = t; d < P && !mismatches[t]; d += T) {
      const std::uint8_t* in = dataset.get() + d * o.frame_bytes;
      codec[t].encode(in, d, rings[t].get());
      reference_encode(o, keys, in, d, scratch[t].get());
      for (std::uint64_t i = 0; i < o.output_bytes(); ++i)
        if (rings[t][i] != scratch[t][i]) {
          mismatches[t] = mismatch{d, i, rings[t][i], scratch[t][i]};
          break;
        }
    }
  });
  for (const auto& m : mismatches)
    if (m && (!result.first_mismatch || m->frame < result.first_mismatch->frame)) result.first_mismatch = m;
  if (result.first_mismatch) return result;

  // Warm-up, untimed: every thread once over the whole dataset (caches, TLB, the rings' pages).
  team.run([&](unsigned t) {
    for (std::uint64_t d = 0; d < P; ++d)
      codec[t].encode(dataset.get() + d * o.frame_bytes, d,
                      rings[t].get() + d % output_ring_frames * slot_bytes);
  });

  // The timed phase: thread t streams frames t, t + T, … (frame b reads dataset frame b mod P). The wall
  // time includes the two clock reads around each call: tens of nanoseconds, a visible share of a 4 KiB
  // frame's time, none of a 64 KiB one's.
  std::vector<latency_record> latencies(T);
  for (unsigned t = 0; t < T; ++t) latencies[t].reserve((o.frames + T - 1 - t) / T);
  const auto start = clock_type::now();
  team.run([&](unsigned t) {
    latency_record& record = latencies[t];
    std::uint8_t* ring = rings[t].get();
    std::uint64_t slot = 0;
    for (std::uint64_t b = t; b < o.frames; b += T) {
      const std::uint8_t* in = dataset.get() + b % P * o.frame_bytes;
      std::uint8_t* out = ring + slot * slot_bytes;
      slot = slot + 1 == output_ring_frames ? 0 : slot + 1;
      const auto before = clock_type::now();
      codec[t].encode(in, b, out);
      const auto ns =
          std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now() - before).count();
      record.push_back(static_cast<std::uint32_t>(std::min<std::int64_t>(ns, UINT32_MAX)));
    }
  });
  result.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  result.latency = summarise(latencies);
  return result;
}

/// Three significant digits for sub-10 µs latencies (a 4 KiB frame takes a fraction of one), one decimal
/// above.
std::string microseconds(double us) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(us < 1 ? 3 : us < 10 ? 2 : 1) << us;
  return s.str();
}

/// The options checked against each other; usage_error names the option.
void check_options(bench_options& o, const std::string& frame_text, const std::string& total_text) {
  o.frame_bytes = parse_byte_size("--frame-size", frame_text);
  if (o.frame_bytes == 0 || o.frame_bytes > max_frame_bytes)
    throw usage_error("--frame-size '" + frame_text + "': take 1 byte to " + compact_bytes(max_frame_bytes));
  if (o.op == codec_op::raid6) {
    const std::uint64_t multiple = std::uint64_t{o.k} * raid6::block_bytes_multiple;
    if (o.frame_bytes % multiple != 0)
      throw usage_error("--frame-size '" + frame_text + "': a RAID-6 frame is k = " + std::to_string(o.k) +
                        " blocks of a multiple of 64 bytes, so take a multiple of " +
                        std::to_string(multiple));
  } else if (o.frame_bytes % aes::block_bytes != 0) {
    throw usage_error("--frame-size '" + frame_text + "': AES frames are whole 16-byte blocks");
  }
  const std::uint64_t total = parse_byte_size("--total", total_text);
  if (total < o.frame_bytes)
    throw usage_error("--total '" + total_text + "': less than one frame of " + compact_bytes(o.frame_bytes));
  o.frames = total / o.frame_bytes;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "xeflow-encoding-cpu: ISA-L's RAID-6 P+Q or OpenSSL's AES-128 streaming frames from a host dataset on "
      "T threads; throughput and per-frame latency, each distinct frame checked against xeflow's operator "
      "code first"};
  bench_options o;
  std::string op = "raid6", frame_text = "64KiB", total_text = "4GiB";
  bool json = false;
  app.add_option("--op", op, "raid6, aes-ecb or aes-ctr (encryption)")
      ->check(CLI::IsMember({"raid6", "aes-ecb", "aes-ctr"}))
      ->capture_default_str();
  app.add_option("--k", o.k, "RAID-6 data blocks a frame (stripe)")
      ->check(CLI::Range(2u, raid6::max_data_blocks))
      ->capture_default_str();
  app.add_option("--frame-size", frame_text, "bytes a frame (4KiB, 64KiB, 1MiB, …)")->capture_default_str();
  app.add_option("--total", total_text, "bytes streamed in the timed phase (whole frames)")
      ->capture_default_str();
  app.add_option("--dataset-frames", o.dataset_frames,
                 "distinct input frames in the host dataset; stream frame b reads dataset frame b mod this")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 20))
      ->capture_default_str();
  app.add_option("--threads", o.threads, "threads streaming (thread t takes frames t, t + T, …)")
      ->check(CLI::Range(1u, 4096u))
      ->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the dataset and the AES key")->capture_default_str();
  app.add_flag("--json", json, "print one JSON object instead of the summary line");
  if (const auto code = parse_or_exit(app, argc, argv, std::cout, std::cerr)) return *code;
  int result = 0;
  const int status = run_tool("xeflow-encoding-cpu", std::cerr, [&] {
    o.op = op == "raid6" ? codec_op::raid6 : op == "aes-ecb" ? codec_op::aes_ecb : codec_op::aes_ctr;
    o.op_name = op;
    check_options(o, frame_text, total_text);
    const bench_result r = run_bench(o);
    if (r.first_mismatch) {
      std::cerr << "xeflow-encoding-cpu: mismatch: " << describe(o, *r.first_mismatch) << "\n";
      result = exit_failed;
      return;
    }
    const double bytes = static_cast<double>(o.frames * o.frame_bytes);
    const double gbps = bytes / r.seconds / 1e9;
    if (json) {
      const std::string library =
          o.op == codec_op::raid6 ? xf::cpu_codecs::isal_version() : xf::cpu_codecs::openssl_version();
      nlohmann::json j{{"op", o.op_name},
                       {"k", o.op == codec_op::raid6 ? nlohmann::json(o.k) : nlohmann::json()},
                       {"frame_bytes", o.frame_bytes},
                       {"threads", o.threads},
                       {"frames", o.frames},
                       {"bytes", o.frames * o.frame_bytes},
                       {"seconds", r.seconds},
                       {"gbps", gbps},
                       {"latency_p50_us", r.latency.p50_us},
                       {"latency_p99_us", r.latency.p99_us},
                       {"latency_mean_us", r.latency.mean_us},
                       {"dataset_frames", o.dataset_frames},
                       {"verified_frames", o.dataset_frames}};
      if (!library.empty()) j["library"] = library;
      std::cout << j.dump() << "\n";
      return;
    }
    std::cout << o.op_name;
    if (o.op == codec_op::raid6) std::cout << " k=" << o.k;
    std::cout << " frame " << compact_bytes(o.frame_bytes) << " threads " << o.threads << ": " << std::fixed
              << std::setprecision(2) << gbps << " GB/s (input bytes), latency p50 "
              << microseconds(r.latency.p50_us) << " us p99 " << microseconds(r.latency.p99_us) << " us; "
              << o.dataset_frames << " dataset frames verified\n";
  });
  return status != 0 ? status : result;
}
