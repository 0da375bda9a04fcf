// xeflow-datatype-bench: the GPU datatype engine (framework/datatype) against what CUDA offers for the same
// data and against hand-written packing kernels, after the GPU MPI datatypes paper's experiments:
//   fig4    pack time of contiguous, vector (8 B blocks), hvector (128 B blocks), indexed (one block length,
//           and several), blockindexed, struct (dense, and with gaps), a 4-D subarray and a vector of
//           vectors, 64 B to 4 MiB packed, device to device: the engine (its rule, its kernel, the
//           per-element kernel), the CUDA alternative (cudaMemcpy/2D/3D, or a call per block) and a
//           hand-written kernel;
//   fig5    vector against cudaMemcpy2D over block lengths 8 B to 4 KiB at fixed packed sizes, into device
//           memory and into pinned host memory: what the rule's costs across PCIe are fitted to;
//   table2  the X-Y, X-Z and Y-Z faces of an n^3 array of doubles to pinned host memory: the engine (rule,
//           zero copy, chunked, pack then copy) against cudaMemcpy2D/3D;
//   fig6    component times: commit, upload, a pointer query and the host's plan of a call, the traversal
//           alone, the packing kernels, the transfer, and the ways to the host;
//   table3  packing under contention: a user's vector add, and copies either way, against the engine's
//           kernel and cudaMemcpy2D, issued first or second.
// Every output is compared with host pack (framework/datatype/pack.hpp) of the same data before it is
// timed; a mismatch is reported, that contender is not timed, and the exit code is 1. Times: wall clock
// from issuing an operation to the end of cudaStreamSynchronize, as a caller waits for it (launch latency
// included, as the paper's), median of up to --max-reps repetitions within --point-ms; table3's are CUDA
// event times on each stream. Exit codes: 0 ok; 1 a mismatch or a failed run; 2 no usable GPU; 3 bad
// command line.
#include <cuda_runtime_api.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench/common/json_output.hpp"
#include "bench/datatype/hand_kernels.hpp"
#include "framework/core/cuda_buffer.hpp"
#include "framework/core/cuda_check.hpp"
#include "framework/core/errors.hpp"
#include "framework/core/units.hpp"
#include "framework/datatype/chunked_packer.hpp"
#include "framework/datatype/datatype.hpp"
#include "framework/datatype/device_type.hpp"
#include "framework/datatype/gpu_pack.hpp"
#include "framework/datatype/pack.hpp"
#include "framework/datatype/traversal.hpp"

namespace xf::dt::bench {
namespace {

using i64 = std::int64_t;
using bytes_t = std::vector<std::byte>;
using json = nlohmann::json;

constexpr int exit_failed = 1, exit_no_gpu = 2, exit_usage = 3;

/// A CUDA contender that issues one call per block runs up to this many calls per pack (the paper's
/// per-block copies: beyond it one pack takes tens of milliseconds and says nothing new).
constexpr i64 max_calls_per_pack = 4096;

const std::vector<std::string> fig4_families = {"contiguous",     "vector",       "hvector", "indexed",
                                                "indexed_varied", "blockindexed", "struct",  "struct_gapped",
                                                "subarray4d",     "nested"};

struct options {
  std::string json_path;
  std::string commit;
  std::vector<std::string> experiments{"fig4", "fig5", "table2", "fig6", "table3"};
  std::vector<std::string> families = fig4_families;
  bool quick = false;
  int min_reps = 5;
  int max_reps = 50;
  double point_ms = 150;
  i64 fig4_max_bytes = 4 << 20;
  std::vector<i64> fig5_totals{64 << 10, 4 << 20};
  int face_n = 512;
  i64 component_bytes = 4 << 20;
  std::vector<i64> chunk_bytes{256 << 10, 1 << 20};
  pack_costs pcie = pcie_pack_costs;      ///< the rule's, the library's defaults
  pack_costs device = device_pack_costs;  ///< likewise, device to device
};

std::string copy_cost_text(const pack_costs& c) {
  char text[128];
  std::snprintf(text, sizeof text, "%.1f us + max(rows x %.2f ns, bytes at %.1f GB/s), %.0f%% less,",
                c.copy_call_us, c.copy_row_ns, c.copy_gb_per_s, c.copy_margin * 100);
  return text;
}

std::string kernel_cost_text(const pack_costs& c) {
  char text[96];
  std::snprintf(text, sizeof text, "%.1f us + bytes at %.1f GB/s", c.kernel_call_us, c.kernel_gb_per_s);
  return text;
}

json costs_json(const pack_costs& c) {
  return {{"copy_call_us", c.copy_call_us},       {"copy_row_ns", c.copy_row_ns},
          {"copy_gb_per_s", c.copy_gb_per_s},     {"kernel_call_us", c.kernel_call_us},
          {"kernel_gb_per_s", c.kernel_gb_per_s}, {"copy_margin", c.copy_margin}};
}

bool wants(const options& o, const std::string& experiment) {
  return std::find(o.experiments.begin(), o.experiments.end(), experiment) != o.experiments.end();
}

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// ---- measuring ----------------------------------------------------------------------------------------

/// Waits for the legacy default stream, where device_buffer zeroes new memory and cudaMemcpy copies from
/// pageable memory: both may still run when the calls return, and the benchmark's streams (non-blocking)
/// do not wait for them.
void settle_legacy_stream() {
  XF_CUDA_TRY(cudaStreamSynchronize(cudaStreamLegacy));
}

struct timing {
  double median_us = 0, min_us = 0;
  int reps = 0;
};

timing summarize(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  timing t;
  t.reps = static_cast<int>(us.size());
  t.min_us = us.front();
  t.median_us = us.size() % 2 ? us[us.size() / 2] : (us[us.size() / 2 - 1] + us[us.size() / 2]) / 2;
  return t;
}

/// Issue, then wait on the stream: what a caller of a packing call waits for.
timing time_calls(const options& o, cudaStream_t stream, const std::function<void()>& op) {
  for (int w = 0; w < 2; ++w) {
    op();
    XF_CUDA_TRY(cudaStreamSynchronize(stream));
  }
  std::vector<double> us;
  const double start = now_us();
  while (static_cast<int>(us.size()) < o.max_reps &&
         (static_cast<int>(us.size()) < o.min_reps || now_us() - start < o.point_ms * 1000)) {
    const double t0 = now_us();
    op();
    XF_CUDA_TRY(cudaStreamSynchronize(stream));
    us.push_back(now_us() - t0);
  }
  return summarize(us);
}

/// Host work (commit, upload) timed the same way.
timing time_host(int reps, const std::function<void()>& op) {
  std::vector<double> us;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now_us();
    op();
    us.push_back(now_us() - t0);
  }
  return summarize(us);
}

/// Where a contender writes its packed bytes.
struct output {
  std::byte* data = nullptr;
  bool on_host = false;  ///< pinned host memory, read in place
};

/// The rows, and whether any failed.
struct recorder {
  json rows = json::array();
  int failures = 0;
};

/// Runs `op` once into `out` (cleared first) and compares the packed bytes with `expected`; if they match,
/// times `op`. The row gets verified, the timing and GB/s of the packed bytes, or the error.
json measure(const options& o, cudaStream_t stream, const std::function<void()>& op, output out,
             const bytes_t& expected, recorder& r) {
  json row;
  try {
    settle_legacy_stream();
    if (out.on_host) {
      std::memset(out.data, 0x5a, expected.size());
    } else {
      XF_CUDA_TRY(cudaMemsetAsync(out.data, 0x5a, expected.size(), stream));
    }
    op();
    XF_CUDA_TRY(cudaStreamSynchronize(stream));
    bytes_t got;
    const std::byte* seen = out.data;
    if (!out.on_host) {
      got.resize(expected.size());
      XF_CUDA_TRY(cudaMemcpy(got.data(), out.data, got.size(), cudaMemcpyDeviceToHost));
      seen = got.data();
    }
    const auto differs = std::mismatch(expected.begin(), expected.end(), seen).first;
    row["verified"] = differs == expected.end();
    if (differs != expected.end()) {
      row["mismatch"] = "packed byte " + std::to_string(differs - expected.begin()) + " of " +
                        std::to_string(expected.size()) + " differs from host pack";
      ++r.failures;
      return row;
    }
    const timing t = time_calls(o, stream, op);
    row["median_us"] = t.median_us;
    row["min_us"] = t.min_us;
    row["reps"] = t.reps;
    row["gbps"] = static_cast<double>(expected.size()) / (t.median_us * 1e3);
  } catch (const cuda_error& e) {
    if (e.sticky()) throw;  // the context is gone: nothing after it can run
    row["verified"] = false;
    row["error"] = e.what();
    ++r.failures;
  } catch (const std::exception& e) {
    row["verified"] = false;
    row["error"] = e.what();
    ++r.failures;
  }
  return row;
}

std::string short_time(const json& row) {
  if (row.contains("error")) return "ERROR";
  if (!row.value("verified", false)) return "MISMATCH";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", row["median_us"].get<double>());
  return text;
}

// ---- data ----------------------------------------------------------------------------------------------

/// A device buffer filled with a pattern (hand_kernels.hpp), and its copy on the host, for host pack.
class patterned_buffer {
 public:
  patterned_buffer(std::size_t bytes, std::uint64_t seed, cudaStream_t stream)
      : device_(bytes), host_(bytes) {
    settle_legacy_stream();  // the allocation's zeroing before the pattern
    launch_fill_pattern(device_.get(), bytes, seed, stream);
    XF_CUDA_TRY(cudaStreamSynchronize(stream));
    XF_CUDA_TRY(cudaMemcpy(host_.data(), device_.get(), bytes, cudaMemcpyDeviceToHost));
  }
  std::byte* device() const { return device_.get(); }
  const std::byte* host() const { return host_.data(); }

  /// MPI's buf for `count` instances of `t` whose data lies inside the buffer, 256-byte aligned: the
  /// offset from the buffer's start (the same on both sides).
  i64 place(const datatype& t, i64 count) const {
    const i64 shift = (count - 1) * t.extent();
    const i64 lowest = t.true_lb() + std::min<i64>(0, shift), highest = t.true_ub() + std::max<i64>(0, shift);
    const i64 origin = (std::max<i64>(0, -lowest) + 255) / 256 * 256;
    XF_EXPECTS(origin + highest <= static_cast<i64>(host_.size()),
               describe(t) + " x " + std::to_string(count) + " spans " + std::to_string(highest - lowest) +
                   " bytes, more than the benchmark's user buffer");
    return origin;
  }

 private:
  device_buffer<std::byte> device_;
  bytes_t host_;
};

/// One type of a figure-4 family at one size, with its CUDA alternative and its hand-written kernel.
struct bench_case {
  std::string family;
  datatype type = primitive::f64;
  i64 count = 1;
  std::string cuda_name;     ///< "" when CUDA has no call for the type
  std::string cuda_skipped;  ///< why the CUDA contender does not run at this size
  std::function<void(const std::byte*user, std::byte*out, cudaStream_t)> cuda, hand;
  std::vector<std::shared_ptr<device_buffer<i64>>> arrays;  ///< the hand kernels' tables
};

std::shared_ptr<device_buffer<i64>> to_device(const std::vector<i64>& values) {
  auto d = std::make_shared<device_buffer<i64>>(values.size());
  XF_CUDA_TRY(cudaMemcpy(d->get(), values.data(), values.size() * sizeof(i64), cudaMemcpyHostToDevice));
  return d;
}

const double* doubles(const std::byte* p) {
  return reinterpret_cast<const double*>(p);
}
double* doubles(std::byte* p) {
  return reinterpret_cast<double*>(p);
}

datatype paper_struct() {  // struct {double; int; int; char}: 17 bytes of data in 24
  return struct_type({1, 1, 1, 1}, {0, 8, 12, 16},
                     {primitive::f64, primitive::i32, primitive::i32, primitive::character});
}
datatype gapped_struct() {  // {double at 0; int at 16; char at 24}: 13 bytes of data in 32
  return struct_type({1, 1, 1}, {0, 16, 24}, {primitive::f64, primitive::i32, primitive::character});
}

/// Copies block by block with cudaMemcpyAsync: the CUDA contender for the indexed types.
void per_block_copies(bench_case& c, const std::vector<i64>& lengths, const std::vector<i64>& displacements) {
  if (static_cast<i64>(lengths.size()) > max_calls_per_pack) {
    c.cuda_skipped = std::to_string(lengths.size()) + " cudaMemcpyAsync calls per pack";
    return;
  }
  c.cuda_name = "cudaMemcpy per block";
  c.cuda = [lengths, displacements](const std::byte* user, std::byte* out, cudaStream_t s) {
    i64 at = 0;
    for (std::size_t b = 0; b < lengths.size(); ++b) {
      XF_CUDA_TRY(cudaMemcpyAsync(out + at, user + displacements[b] * 8,
                                  static_cast<std::size_t>(lengths[b] * 8), cudaMemcpyDeviceToDevice, s));
      at += lengths[b] * 8;
    }
  };
}

bench_case make_fig4_case(const std::string& family, i64 target_bytes, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  bench_case c;
  c.family = family;
  const i64 p = target_bytes;
  if (family == "contiguous") {
    const i64 n = std::max<i64>(1, p / 8);
    c.type = contiguous(n, primitive::f64);
    c.cuda_name = "cudaMemcpy";
    c.cuda = [n](const std::byte* u, std::byte* o, cudaStream_t s) {
      XF_CUDA_TRY(cudaMemcpyAsync(o, u, static_cast<std::size_t>(n * 8), cudaMemcpyDeviceToDevice, s));
    };
    c.hand = [n](const std::byte* u, std::byte* o, cudaStream_t s) {
      launch_hand_contiguous(doubles(u), doubles(o), n, s);
    };
  } else if (family == "vector" || family == "hvector") {
    // vector: one double a block (8 B), blocks 512 B apart; hvector: 16 doubles (128 B), 512 B apart.
    const i64 block = family == "vector" ? 1 : 16, n = std::max<i64>(1, p / (8 * block));
    c.type =
        family == "vector" ? vector(n, block, 64, primitive::f64) : hvector(n, block, 512, primitive::f64);
    c.cuda_name = "cudaMemcpy2D";
    c.cuda = [n, block](const std::byte* u, std::byte* o, cudaStream_t s) {
      const auto row = static_cast<std::size_t>(block * 8);
      XF_CUDA_TRY(
          cudaMemcpy2DAsync(o, row, u, 512, row, static_cast<std::size_t>(n), cudaMemcpyDeviceToDevice, s));
    };
    c.hand = [n, block](const std::byte* u, std::byte* o, cudaStream_t s) {
      launch_hand_vector(doubles(u), doubles(o), n * block, block, 64, s);
    };
  } else if (family == "indexed" || family == "blockindexed") {
    // Blocks of 2 (indexed) or 4 (blockindexed) doubles at irregular offsets, about 512 B apart.
    const i64 block = family == "indexed" ? 2 : 4, n = std::max<i64>(1, p / (8 * block));
    std::vector<i64> displacements(static_cast<std::size_t>(n));
    for (i64 b = 0; b < n; ++b)
      displacements[static_cast<std::size_t>(b)] = b * 64 + static_cast<i64>(rng() % 60);
    const std::vector<i64> lengths(static_cast<std::size_t>(n), block);
    c.type = family == "indexed" ? indexed(lengths, displacements, primitive::f64)
                                 : indexed_block(block, displacements, primitive::f64);
    per_block_copies(c, lengths, displacements);
    c.arrays.push_back(to_device(displacements));
    const i64* d = c.arrays.back()->get();
    c.hand = [n, block, d](const std::byte* u, std::byte* o, cudaStream_t s) {
      launch_hand_indexed(doubles(u), doubles(o), n * block, block, d, s);
    };
  } else if (family == "indexed_varied") {
    // Blocks of 1 to 16 doubles with gaps of 0 to 47 doubles: the plan's runs, not a table.
    std::vector<i64> lengths, displacements, prefix{0};
    for (i64 at = 0, packed = 0; packed < std::max<i64>(p, 8);) {
      lengths.push_back(1 + static_cast<i64>(rng() % 16));
      displacements.push_back(at);
      at += lengths.back() + static_cast<i64>(rng() % 48);
      packed += lengths.back() * 8;
      prefix.push_back(prefix.back() + lengths.back());
    }
    c.type = indexed(lengths, displacements, primitive::f64);
    per_block_copies(c, lengths, displacements);
    c.arrays.push_back(to_device(prefix));
    c.arrays.push_back(to_device(displacements));
    const i64 *pre = c.arrays[0]->get(), *d = c.arrays[1]->get();
    const i64 elements = prefix.back(), blocks = static_cast<i64>(lengths.size());
    c.hand = [=](const std::byte* u, std::byte* o, cudaStream_t s) {
      launch_hand_indexed_varied(doubles(u), doubles(o), elements, pre, d, blocks, s);
    };
  } else if (family == "struct") {
    const i64 n = std::max<i64>(1, p / 17);
    c.type = paper_struct();
    c.count = n;
    c.cuda_name = "cudaMemcpy2D";  // the members follow on: rows of 17 bytes, 24 apart
    c.cuda = [n](const std::byte* u, std::byte* o, cudaStream_t s) {
      XF_CUDA_TRY(
          cudaMemcpy2DAsync(o, 17, u, 24, 17, static_cast<std::size_t>(n), cudaMemcpyDeviceToDevice, s));
    };
    c.hand = [n](const std::byte* u, std::byte* o, cudaStream_t s) { launch_hand_struct(u, o, n, s); };
  } else if (family == "struct_gapped") {
    const i64 n = std::max<i64>(1, p / 13);
    c.type = gapped_struct();
    c.count = n;
    c.cuda_skipped = "no CUDA call packs members with gaps between them";
    c.hand = [n](const std::byte* u, std::byte* o, cudaStream_t s) { launch_hand_gapped_struct(u, o, n, s); };
  } else if (family == "subarray4d") {
    // The paper's: an n^4 cube in the middle of a 64^4 array of doubles, n the fourth root of the size
    // rounded up (so that the sizes differ); CUDA: one 3D copy per 3D slab.
    const int size = 64;
    const auto n = static_cast<int>(std::clamp<i64>(
        static_cast<i64>(std::ceil(std::pow(static_cast<double>(p) / 8, 0.25) - 1e-9)), 1, size));
    const int start = (size - n) / 2;
    c.type = subarray({size, size, size, size}, {n, n, n, n}, {start, start, start, start}, array_order::c,
                      primitive::f64);
    c.cuda_name = "cudaMemcpy3D per slab";
    c.cuda = [n, start, size](const std::byte* u, std::byte* o, cudaStream_t s) {
      const auto row = static_cast<std::size_t>(n) * 8, pitch = static_cast<std::size_t>(size) * 8;
      for (int a = 0; a < n; ++a) {
        const std::size_t first =
            ((((static_cast<std::size_t>(a) + start) * size + start) * size + start) * size + start) * 8;
        cudaMemcpy3DParms q{};
        // cudaPitchedPtr holds a non-const pointer whichever side it is; the source is only read.
        q.srcPtr =
            cudaPitchedPtr{const_cast<std::byte*>(u + first), pitch, row, static_cast<std::size_t>(size)};
        q.dstPtr = cudaPitchedPtr{o + static_cast<std::size_t>(a) * n * n * row, row, row,
                                  static_cast<std::size_t>(n)};
        q.extent = cudaExtent{row, static_cast<std::size_t>(n), static_cast<std::size_t>(n)};
        q.kind = cudaMemcpyDeviceToDevice;
        XF_CUDA_TRY(cudaMemcpy3DAsync(&q, s));
      }
    };
    c.hand = [n, size, start](const std::byte* u, std::byte* o, cudaStream_t s) {
      launch_hand_subarray4d(doubles(u), doubles(o), n, size, start, s);
    };
  } else if (family == "nested") {
    // The paper's vector of vectors: 3 blocks of 2 doubles, 3 doubles apart, repeated every 256 bytes. The
    // outer stride is no whole number of the inner one: one cudaMemcpy2D per outer copy.
    const i64 n = std::max<i64>(1, p / 48);
    c.type = hvector(n, 1, 256, vector(3, 2, 3, primitive::f64));
    if (n > max_calls_per_pack) {
      c.cuda_skipped = std::to_string(n) + " cudaMemcpy2DAsync calls per pack";
    } else {
      c.cuda_name = "cudaMemcpy2D per outer block";
      c.cuda = [n](const std::byte* u, std::byte* o, cudaStream_t s) {
        for (i64 k = 0; k < n; ++k)
          XF_CUDA_TRY(cudaMemcpy2DAsync(o + k * 48, 16, u + k * 256, 24, 16, 3, cudaMemcpyDeviceToDevice, s));
      };
    }
    c.hand = [n](const std::byte* u, std::byte* o, cudaStream_t s) {
      launch_hand_nested(doubles(u), doubles(o), n, s);
    };
  } else {
    throw std::invalid_argument("unknown type family '" + family + "'");
  }
  return c;
}

/// The host pack of a case: what every contender must write.
bytes_t expected_pack(const committed_type& c, i64 count, const std::byte* host_user) {
  bytes_t out(static_cast<std::size_t>(packed_bytes(c, count)));
  pack(c, count, host_user, out.data());
  return out;
}

/// A type's data in a patterned buffer: MPI's buf there, the type committed and uploaded, and what host
/// pack makes of it.
struct placed_type {
  placed_type(const datatype& t, i64 n, const patterned_buffer& data)
      : count(n),
        at(data.place(t, n)),
        user(data.device() + at),
        committed(commit(t)),
        d(committed),
        expected(expected_pack(committed, n, data.host() + at)) {}
  i64 count;
  i64 at;
  const std::byte* user;
  committed_type committed;
  device_type d;
  bytes_t expected;
};

// ---- the experiments -----------------------------------------------------------------------------------

struct run_context {
  const options& o;
  cudaStream_t stream;
  recorder& r;
  const patterned_buffer& pool;
};

json base_row(const std::string& experiment, const std::string& contender) {
  return json{{"experiment", experiment}, {"contender", contender}};
}

/// The engine's three ways to pack a case, then CUDA's and the hand-written kernel: fig4's row set.
void fig4_point(run_context& x, const std::string& family, i64 target) {
  bench_case c = make_fig4_case(family, target, 1000 + static_cast<std::uint64_t>(target));
  const placed_type p(c.type, c.count, x.pool);
  const std::byte* user = p.user;
  const device_type& d = p.d;
  const bytes_t& expected = p.expected;
  device_buffer<std::byte> out(expected.size() + 64);
  const output o{out.get(), false};
  const gpu_pack_options rule{pack_path::automatic, x.o.pcie, x.o.device};
  const auto row_of = [&](const std::string& contender, json m) {
    json row = base_row("fig4", contender);
    row.update(m);
    row["type"] = family;
    row["packed_bytes"] = expected.size();
    row["plan"] = describe(d.plan());
    x.r.rows.push_back(row);
    return row;
  };
  std::vector<std::pair<std::string, json>> line;
  const auto engine = [&](const std::string& name, gpu_pack_options opt) {
    json m = measure(
        x.o, x.stream, [&] { gpu_pack(d, c.count, user, out.get(), x.stream, opt); }, o, expected, x.r);
    m["choice"] = choose_pack_path(d, c.count, user, out.get(), opt).describe();
    line.emplace_back(name, row_of(name, m));
  };
  engine("engine", rule);
  engine("engine_kernel", {pack_path::kernel});
  engine("engine_point", {pack_path::point_kernel});
  if (c.cuda) {
    json m = measure(
        x.o, x.stream, [&] { c.cuda(user, out.get(), x.stream); }, o, expected, x.r);
    m["call"] = c.cuda_name;
    line.emplace_back("cuda", row_of("cuda", m));
  } else {
    row_of("cuda", json{{"skipped", c.cuda_skipped}});
  }
  line.emplace_back("hand", row_of("hand", measure(
                                               x.o, x.stream, [&] { c.hand(user, out.get(), x.stream); }, o,
                                               expected, x.r)));
  std::printf("fig4 %-14s %9zu B ", family.c_str(), expected.size());
  for (const auto& [name, row] : line) std::printf(" %s %s |", name.c_str(), short_time(row).c_str());
  std::printf("  µs  [%s]\n", line.front().second.value("choice", "").c_str());
  std::fflush(stdout);
}

void run_fig4(run_context& x) {
  std::printf("\n== fig4: pack time, device to device (µs, median) ==\n");
  for (const std::string& family : x.o.families)
    for (i64 target = 64; target <= x.o.fig4_max_bytes; target *= 4) fig4_point(x, family, target);
}

void run_fig5(run_context& x) {
  std::printf("\n== fig5: vector against cudaMemcpy2D over block lengths (µs, median) ==\n");
  for (const i64 total : x.o.fig5_totals) {
    device_buffer<std::byte> on_device(static_cast<std::size_t>(total) + 64);
    pinned_buffer<std::byte> on_host(static_cast<std::size_t>(total) + 64);
    for (const bool to_host : {false, true}) {
      const output o{to_host ? on_host.get() : on_device.get(), to_host};
      for (i64 block = 8; block <= 4096 && block <= total; block *= 2) {
        const i64 k = block / 8, n = total / block;
        const placed_type p(vector(n, k, 2 * k, primitive::f64), 1, x.pool);
        const std::byte* user = p.user;
        const device_type& d = p.d;
        const bytes_t& expected = p.expected;
        std::vector<std::pair<std::string, json>> line;
        const auto row_of = [&](const std::string& contender, json m) {
          json row = base_row("fig5", contender);
          row.update(m);
          row["block_bytes"] = block;
          row["total_bytes"] = total;
          row["destination"] = to_host ? "pinned_host" : "device";
          x.r.rows.push_back(row);
          line.emplace_back(contender, row);
        };
        for (const auto& [name, opt] :
             {std::pair{std::string("engine"), gpu_pack_options{pack_path::automatic, x.o.pcie, x.o.device}},
              std::pair{std::string("engine_kernel"), gpu_pack_options{pack_path::kernel}}}) {
          json m = measure(
              x.o, x.stream, [&] { gpu_pack(d, 1, user, o.data, x.stream, opt); }, o, expected, x.r);
          m["choice"] = choose_pack_path(d, 1, user, o.data, opt).describe();
          row_of(name, m);
        }
        row_of("cudaMemcpy2D", measure(
                                   x.o, x.stream,
                                   [&] {
                                     XF_CUDA_TRY(cudaMemcpy2DAsync(
                                         o.data, static_cast<std::size_t>(block), user,
                                         static_cast<std::size_t>(2 * block), static_cast<std::size_t>(block),
                                         static_cast<std::size_t>(n), cudaMemcpyDefault, x.stream));
                                   },
                                   o, expected, x.r));
        row_of("hand",
               measure(
                   x.o, x.stream,
                   [&] { launch_hand_vector(doubles(user), doubles(o.data), n * k, k, 2 * k, x.stream); }, o,
                   expected, x.r));
        std::printf("fig5 %8s %-6s %5lld B blocks ", format_bytes(static_cast<std::uint64_t>(total)).c_str(),
                    to_host ? "host" : "device", static_cast<long long>(block));
        for (const auto& [name, row] : line) std::printf(" %s %s |", name.c_str(), short_time(row).c_str());
        std::printf("  µs  [%s]\n", line.front().second.value("choice", "").c_str());
        std::fflush(stdout);
      }
    }
  }
}

void run_table2(run_context& x) {
  const int n = x.o.face_n;
  std::printf("\n== table2: faces of a %d^3 array of doubles to pinned host memory (MB/s, median) ==\n", n);
  const auto cube_bytes = static_cast<std::size_t>(n) * n * n * 8;
  const patterned_buffer cube(cube_bytes, 77, x.stream);
  const i64 middle = n / 2, row = i64{n} * 8, plane = i64{n} * n * 8;
  struct face {
    std::string name;
    datatype type;
  };
  const std::vector<face> faces = {
      {"X-Y", subarray({n, n, n}, {1, n, n}, {middle, 0, 0}, array_order::c, primitive::f64)},
      {"X-Z", subarray({n, n, n}, {n, 1, n}, {0, middle, 0}, array_order::c, primitive::f64)},
      {"Y-Z", subarray({n, n, n}, {n, n, 1}, {0, 0, middle}, array_order::c, primitive::f64)}};
  const auto face_bytes = static_cast<std::size_t>(n) * n * 8;
  pinned_buffer<std::byte> host(face_bytes + 64);
  device_buffer<std::byte> staging(face_bytes + 64);
  const output o{host.get(), true};
  for (const face& f : faces) {
    const placed_type p(f.type, 1, cube);  // the faces' data start inside the array: buf is its start
    const device_type& d = p.d;
    const bytes_t& expected = p.expected;
    const std::byte* user = p.user;
    std::vector<std::pair<std::string, json>> line;
    const auto row_of = [&](const std::string& contender, json m) {
      json row = base_row("table2", contender);
      row.update(m);
      row["face"] = f.name;
      row["n"] = n;
      row["packed_bytes"] = expected.size();
      if (row.contains("median_us"))
        row["mbps"] = static_cast<double>(expected.size()) / row["median_us"].get<double>();
      x.r.rows.push_back(row);
      line.emplace_back(contender, row);
    };
    json m = measure(
        x.o, x.stream,
        [&] {
          gpu_pack(d, 1, user, host.get(), x.stream, {pack_path::automatic, x.o.pcie, x.o.device});
        },
        o, expected, x.r);
    m["choice"] =
        choose_pack_path(d, 1, user, host.get(), {pack_path::automatic, x.o.pcie, x.o.device}).describe();
    row_of("engine", m);
    row_of("engine_zero_copy",
           measure(
               x.o, x.stream, [&] { gpu_pack(d, 1, user, host.get(), x.stream, {pack_path::kernel}); }, o,
               expected, x.r));
    for (const i64 chunk : x.o.chunk_bytes) {
      chunked_packer packer(chunk);
      json c = measure(
          x.o, x.stream, [&] { packer.pack(d, 1, user, host.get(), x.stream); }, o, expected, x.r);
      c["chunk_bytes"] = chunk;
      row_of("engine_chunked_" + format_bytes(static_cast<std::uint64_t>(chunk)), c);
    }
    row_of("engine_staged", measure(
                                x.o, x.stream,
                                [&] {
                                  gpu_pack(d, 1, user, staging.get(), x.stream, {pack_path::kernel});
                                  XF_CUDA_TRY(cudaMemcpyAsync(host.get(), staging.get(), expected.size(),
                                                              cudaMemcpyDeviceToHost, x.stream));
                                },
                                o, expected, x.r));
    // cudaMemcpy2D as the paper calls it for each face: rows of x (X-Y, X-Z) or single doubles (Y-Z).
    const std::byte* first = user + (f.name == "X-Y"   ? middle * plane
                                     : f.name == "X-Z" ? middle * row
                                                       : middle * 8);
    const std::size_t width = f.name == "Y-Z" ? 8 : static_cast<std::size_t>(row);
    const std::size_t pitch =
        f.name == "X-Z" ? static_cast<std::size_t>(plane) : static_cast<std::size_t>(row);
    const std::size_t rows = face_bytes / width;
    row_of("cudaMemcpy2D", measure(
                               x.o, x.stream,
                               [&] {
                                 XF_CUDA_TRY(cudaMemcpy2DAsync(host.get(), width, first, pitch, width, rows,
                                                               cudaMemcpyDeviceToHost, x.stream));
                               },
                               o, expected, x.r));
    if (f.name == "Y-Z") {
      row_of("cudaMemcpy3D",
             measure(
                 x.o, x.stream,
                 [&] {
                   cudaMemcpy3DParms q{};
                   q.srcPtr = cudaPitchedPtr{const_cast<std::byte*>(first), static_cast<std::size_t>(row), 8,
                                             static_cast<std::size_t>(n)};
                   q.dstPtr = cudaPitchedPtr{host.get(), 8, 8, static_cast<std::size_t>(n)};
                   q.extent = cudaExtent{8, static_cast<std::size_t>(n), static_cast<std::size_t>(n)};
                   q.kind = cudaMemcpyDeviceToHost;
                   XF_CUDA_TRY(cudaMemcpy3DAsync(&q, x.stream));
                 },
                 o, expected, x.r));
    }
    std::printf("table2 %s %d^3:", f.name.c_str(), n);
    for (const auto& [name, row_json] : line)
      std::printf(" %s %s |", name.c_str(),
                  row_json.contains("mbps")
                      ? std::to_string(static_cast<long long>(row_json["mbps"].get<double>())).c_str()
                      : short_time(row_json).c_str());
    std::printf("  MB/s  [%s]\n", line.front().second.value("choice", "").c_str());
    std::fflush(stdout);
  }
}

void run_fig6(run_context& x) {
  std::printf("\n== fig6: component times at %s packed (µs, median) ==\n",
              format_bytes(static_cast<std::uint64_t>(x.o.component_bytes)).c_str());
  for (const std::string& family : x.o.families) {
    bench_case c = make_fig4_case(family, x.o.component_bytes, 2000);
    const placed_type p(c.type, c.count, x.pool);
    const std::byte* user = p.user;
    const committed_type& committed = p.committed;
    const device_type& d = p.d;
    const bytes_t& expected = p.expected;
    // Sized by the case, not by --component-bytes: a family rounds its shape up (subarray4d's 27^4 doubles
    // are 4.25 MB for 4 MiB asked).
    device_buffer<std::byte> packed(expected.size() + 64);
    pinned_buffer<std::byte> host(expected.size() + 64);
    const output on_device{packed.get(), false}, on_host{host.get(), true};
    std::vector<std::pair<std::string, json>> line;
    const auto row_of = [&](const std::string& component, json m) {
      json row = base_row("fig6", component);
      row.update(m);
      row["type"] = family;
      row["packed_bytes"] = expected.size();
      x.r.rows.push_back(row);
      line.emplace_back(component, row);
    };
    const timing commit_time = time_host(20, [&] { (void)commit(c.type); });
    row_of("commit", json{{"median_us", commit_time.median_us},
                          {"min_us", commit_time.min_us},
                          {"reps", commit_time.reps},
                          {"verified", true}});
    const timing upload_time = time_host(10, [&] { const device_type again(committed); });
    row_of("upload", json{{"median_us", upload_time.median_us},
                          {"min_us", upload_time.min_us},
                          {"reps", upload_time.reps},
                          {"verified", true}});
    // The host's work in every call before anything is issued: where the two pointers are (a
    // cudaPointerGetAttributes each) and the plan of the call (shape, path, copy or kernel parameters).
    const timing query_time = time_host(200, [&] {
      cudaPointerAttributes a{};
      XF_CUDA_TRY(cudaPointerGetAttributes(&a, user));
    });
    row_of("pointer_query", json{{"median_us", query_time.median_us},
                                 {"min_us", query_time.min_us},
                                 {"reps", query_time.reps},
                                 {"verified", true}});
    const timing choose_time =
        time_host(200, [&] { (void)choose_pack_path(d, c.count, user, packed.get(), {pack_path::kernel}); });
    row_of("choose", json{{"median_us", choose_time.median_us},
                          {"min_us", choose_time.min_us},
                          {"reps", choose_time.reps},
                          {"verified", true}});
    {
      // The traversal alone, checked against the host's sum of every element's two offsets.
      device_buffer<unsigned long long> sum(1);
      unsigned long long want = 0;
      const serialized_view v = committed.view();
      const i64 elements = committed.root().elements;
      for (i64 i = 0; i < c.count * elements; ++i) {
        const element_place p = locate(v, c.count, i);
        want += static_cast<unsigned long long>(p.in + p.out);
      }
      json row;
      try {
        settle_legacy_stream();
        launch_traverse(d.device_view(), c.count, elements, sum.get(), x.stream);
        XF_CUDA_TRY(cudaStreamSynchronize(x.stream));
        unsigned long long got = 0;
        XF_CUDA_TRY(cudaMemcpy(&got, sum.get(), sizeof got, cudaMemcpyDeviceToHost));
        row["verified"] = got == want;
        if (got != want) {
          row["mismatch"] = "the offsets' sum differs from the host traversal's";
          ++x.r.failures;
        } else {
          const timing t = time_calls(x.o, x.stream, [&] {
            launch_traverse(d.device_view(), c.count, elements, sum.get(), x.stream);
          });
          row.update(json{{"median_us", t.median_us}, {"min_us", t.min_us}, {"reps", t.reps}});
        }
      } catch (const std::exception& e) {
        row["verified"] = false;
        row["error"] = e.what();
        ++x.r.failures;
      }
      row_of("traverse", row);
    }
    row_of(
        "pack_kernel",
        measure(
            x.o, x.stream, [&] { gpu_pack(d, c.count, user, packed.get(), x.stream, {pack_path::kernel}); },
            on_device, expected, x.r));
    row_of("pack_point",
           measure(
               x.o, x.stream,
               [&] { gpu_pack(d, c.count, user, packed.get(), x.stream, {pack_path::point_kernel}); },
               on_device, expected, x.r));
    {
      // The transfer alone: the packed bytes (as pack_kernel left them) to pinned host memory.
      gpu_pack(d, c.count, user, packed.get(), x.stream, {pack_path::kernel});
      XF_CUDA_TRY(cudaStreamSynchronize(x.stream));
      row_of("transfer", measure(
                             x.o, x.stream,
                             [&] {
                               XF_CUDA_TRY(cudaMemcpyAsync(host.get(), packed.get(), expected.size(),
                                                           cudaMemcpyDeviceToHost, x.stream));
                             },
                             on_host, expected, x.r));
    }
    row_of("staged", measure(
                         x.o, x.stream,
                         [&] {
                           gpu_pack(d, c.count, user, packed.get(), x.stream, {pack_path::kernel});
                           XF_CUDA_TRY(cudaMemcpyAsync(host.get(), packed.get(), expected.size(),
                                                       cudaMemcpyDeviceToHost, x.stream));
                         },
                         on_host, expected, x.r));
    row_of("zero_copy",
           measure(
               x.o, x.stream, [&] { gpu_pack(d, c.count, user, host.get(), x.stream, {pack_path::kernel}); },
               on_host, expected, x.r));
    chunked_packer packer(x.o.chunk_bytes.back());
    row_of("chunked", measure(
                          x.o, x.stream, [&] { packer.pack(d, c.count, user, host.get(), x.stream); },
                          on_host, expected, x.r));
    std::printf("fig6 %-14s %9zu B ", family.c_str(), expected.size());
    for (const auto& [name, row] : line) std::printf(" %s %s |", name.c_str(), short_time(row).c_str());
    std::printf("  µs\n");
    std::fflush(stdout);
  }
}

/// Two operations on two streams, timed by events on each: the paper's Table 3.
struct pair_times {
  double op_us = 0, user_us = 0, total_us = 0;
};

void run_table3(run_context& x, const device_limits& limits) {
  std::printf("\n== table3: packing under contention (µs, median of CUDA event times) ==\n");
  // The paper's exemplar: 262144 blocks of one double, 64 bytes apart: 16 MiB of extent, 2 MiB packed.
  const i64 blocks = 262144;
  const placed_type p(vector(blocks, 1, 8, primitive::f64), 1, x.pool);
  const std::byte* user = p.user;
  const device_type& d = p.d;
  const bytes_t& expected = p.expected;
  pinned_buffer<std::byte> packed(expected.size());
  cuda_stream user_stream, op_stream;
  const cudaStream_t su = user_stream.get(), so = op_stream.get();
  const std::function<void()> ops[2] = {
      [&] { gpu_pack(d, 1, user, packed.get(), so, {pack_path::kernel}); },
      [&] {
        XF_CUDA_TRY(cudaMemcpy2DAsync(packed.get(), 8, user, 64, 8, static_cast<std::size_t>(blocks),
                                      cudaMemcpyDeviceToHost, so));
      }};
  const char* op_names[2] = {"pack", "cudaMemcpy2D"};

  // The user's operations, sized to take about as long as the pack does alone.
  const i64 max_floats = i64{64} << 20, max_copy = i64{256} << 20;
  device_buffer<float> a(static_cast<std::size_t>(max_floats)), b(static_cast<std::size_t>(max_floats)),
      c(static_cast<std::size_t>(max_floats));
  device_buffer<std::byte> device_side(static_cast<std::size_t>(max_copy));
  pinned_buffer<std::byte> host_side(static_cast<std::size_t>(max_copy));
  const int add_blocks = limits.sm_count * std::max(1, limits.max_threads_per_sm / 256);
  i64 floats = i64{16} << 20, copy_bytes = i64{16} << 20;
  const std::function<void()> workloads[3] = {
      [&] { launch_vector_add(a.get(), b.get(), c.get(), floats, add_blocks, su); },
      [&] {
        XF_CUDA_TRY(cudaMemcpyAsync(host_side.get(), device_side.get(), static_cast<std::size_t>(copy_bytes),
                                    cudaMemcpyDeviceToHost, su));
      },
      [&] {
        XF_CUDA_TRY(cudaMemcpyAsync(device_side.get(), host_side.get(), static_cast<std::size_t>(copy_bytes),
                                    cudaMemcpyHostToDevice, su));
      }};
  const char* workload_names[3] = {"sm_vector_add", "pcie_d2h_copy", "pcie_h2d_copy"};

  cuda_event user_start(true), user_end(true), op_start(true), op_end(true);
  const auto elapsed = [](const cuda_event& from, const cuda_event& to) {
    float ms = 0;
    XF_CUDA_TRY(cudaEventElapsedTime(&ms, from.get(), to.get()));
    return static_cast<double>(ms) * 1000;
  };
  // order: 0 op alone, 1 user alone, 2 user then op, 3 op then user.
  const auto run_pair = [&](const std::function<void()>& op, const std::function<void()>& user_op,
                            int order) {
    std::vector<double> op_us, user_us, total_us;
    for (int rep = 0; rep < std::max(x.o.min_reps, 10); ++rep) {
      const auto issue_user = [&] {
        XF_CUDA_TRY(cudaEventRecord(user_start.get(), su));
        user_op();
        XF_CUDA_TRY(cudaEventRecord(user_end.get(), su));
      };
      const auto issue_op = [&] {
        XF_CUDA_TRY(cudaEventRecord(op_start.get(), so));
        op();
        XF_CUDA_TRY(cudaEventRecord(op_end.get(), so));
      };
      if (order == 0) issue_op();
      if (order == 1) issue_user();
      if (order == 2) {
        issue_user();
        issue_op();
      }
      if (order == 3) {
        issue_op();
        issue_user();
      }
      XF_CUDA_TRY(cudaStreamSynchronize(su));
      XF_CUDA_TRY(cudaStreamSynchronize(so));
      if (order != 1) op_us.push_back(elapsed(op_start, op_end));
      if (order != 0) user_us.push_back(elapsed(user_start, user_end));
      if (order >= 2) {
        const bool user_first = order == 2;
        const cuda_event& first = user_first ? user_start : op_start;
        total_us.push_back(std::max(elapsed(first, user_end), elapsed(first, op_end)));
      }
    }
    pair_times p;
    if (!op_us.empty()) p.op_us = summarize(op_us).median_us;
    if (!user_us.empty()) p.user_us = summarize(user_us).median_us;
    if (!total_us.empty()) p.total_us = summarize(total_us).median_us;
    return p;
  };
  const auto verified = [&] { return std::memcmp(packed.get(), expected.data(), expected.size()) == 0; };

  // Calibration: each workload scaled to the pack's time alone (the paper's "similar run time").
  const double pack_alone = run_pair(
                                ops[0], [] {}, 0)
                                .op_us;
  const double add_at_16m = run_pair([] {}, workloads[0], 1).user_us;
  floats = std::clamp<i64>(static_cast<i64>(static_cast<double>(floats) * pack_alone / add_at_16m),
                           i64{1} << 16, max_floats);
  const double d2h_at_16m = run_pair([] {}, workloads[1], 1).user_us;
  const double h2d_at_16m = run_pair([] {}, workloads[2], 1).user_us;
  const i64 d2h_bytes =
      std::clamp<i64>(static_cast<i64>(16.0 * (1 << 20) * pack_alone / d2h_at_16m), i64{64} << 10, max_copy);
  const i64 h2d_bytes =
      std::clamp<i64>(static_cast<i64>(16.0 * (1 << 20) * pack_alone / h2d_at_16m), i64{64} << 10, max_copy);

  const char* order_names[4] = {"op_alone", "user_alone", "user_then_op", "op_then_user"};
  for (int w = 0; w < 3; ++w) {
    copy_bytes = w == 1 ? d2h_bytes : h2d_bytes;
    for (int k = 0; k < 2; ++k) {
      std::printf("table3 %-14s %-12s", workload_names[w], op_names[k]);
      for (int order = 0; order < 4; ++order) {
        std::memset(packed.get(), 0x5a, expected.size());
        const pair_times p = run_pair(ops[k], workloads[w], order);
        json row = base_row("table3", op_names[k]);
        row["workload"] = workload_names[w];
        row["order"] = order_names[order];
        row["packed_bytes"] = expected.size();
        row["user_size"] = w == 0 ? floats : copy_bytes;
        if (order != 1) row["op_us"] = p.op_us;
        if (order != 0) row["user_us"] = p.user_us;
        if (order >= 2) row["total_us"] = p.total_us;
        row["verified"] = order == 1 || verified();
        if (!row["verified"].get<bool>()) {
          row["mismatch"] = "the packed bytes differ from host pack";
          ++x.r.failures;
        }
        x.r.rows.push_back(row);
        std::printf(" %s op %.0f user %.0f total %.0f |", order_names[order], p.op_us, p.user_us, p.total_us);
      }
      std::printf("\n");
      std::fflush(stdout);
    }
  }
}

std::vector<i64> parse_byte_list(const std::string& text, const char* flag) {
  std::vector<i64> out;
  std::stringstream s(text);
  for (std::string item; std::getline(s, item, ',');) {
    const auto v = parse_bytes(item);
    if (!v || *v == 0) throw CLI::ValidationError(flag, bytes_syntax_problem(item));
    out.push_back(static_cast<i64>(*v));
  }
  return out;
}

std::vector<std::string> parse_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string item; std::getline(s, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

int run(int argc, char** argv) {
  options o;
  CLI::App app{
      "xeflow-datatype-bench: the GPU datatype engine against cudaMemcpy2D/3D and hand-written kernels"};
  std::string experiments = "fig4,fig5,table2,fig6,table3", families, fig4_max = "4MiB",
              fig5_totals = "64KiB,4MiB", component = "4MiB", chunks = "256KiB,1MiB";
  app.add_option("--json", o.json_path, "write the rows, stamped with device, date, commit and command line");
  app.add_option("--commit", o.commit, "the commit to stamp (default: git rev-parse --short HEAD)");
  app.add_option("--experiments", experiments, "comma-separated: fig4, fig5, table2, fig6, table3");
  app.add_option("--types", families, "fig4 and fig6 type families (default: all)");
  app.add_flag(
      "--quick", o.quick,
      "a smoke run of seconds: sizes capped at 256 KiB (fig5: 64 KiB, faces: 128^3), few repetitions");
  app.add_option("--min-reps", o.min_reps, "timed repetitions at least");
  app.add_option("--max-reps", o.max_reps, "timed repetitions at most");
  app.add_option("--point-ms", o.point_ms, "time budget of one contender at one point, after min-reps");
  app.add_option("--fig4-max-bytes", fig4_max, "fig4's largest packed size (from 64 B, times 4)");
  app.add_option("--fig5-totals", fig5_totals, "fig5's packed sizes");
  app.add_option("--face-n", o.face_n, "table2's array edge (n^3 doubles: 512 is 1 GiB)");
  app.add_option("--component-bytes", component, "fig6's packed size");
  app.add_option("--chunk-bytes", chunks, "the chunked pipeline's chunk sizes (table2; fig6 takes the last)");
  try {
    app.parse(argc, argv);
    o.experiments = parse_list(experiments);
    for (const std::string& e : o.experiments)
      if (e != "fig4" && e != "fig5" && e != "table2" && e != "fig6" && e != "table3")
        throw CLI::ValidationError("--experiments", "unknown experiment '" + e + "'");
    if (!families.empty()) o.families = parse_list(families);
    for (const std::string& f : o.families)
      if (std::find(fig4_families.begin(), fig4_families.end(), f) == fig4_families.end())
        throw CLI::ValidationError("--types", "unknown type family '" + f + "'");
    o.fig4_max_bytes = parse_byte_list(fig4_max, "--fig4-max-bytes").front();
    o.fig5_totals = parse_byte_list(fig5_totals, "--fig5-totals");
    o.component_bytes = parse_byte_list(component, "--component-bytes").front();
    o.chunk_bytes = parse_byte_list(chunks, "--chunk-bytes");
    if (o.quick) {
      o.fig4_max_bytes = std::min<i64>(o.fig4_max_bytes, 256 << 10);
      for (i64& total : o.fig5_totals) total = std::min<i64>(total, 64 << 10);
      o.fig5_totals.erase(std::unique(o.fig5_totals.begin(), o.fig5_totals.end()), o.fig5_totals.end());
      o.face_n = std::min(o.face_n, 128);
      o.component_bytes = std::min<i64>(o.component_bytes, 256 << 10);
      o.max_reps = std::min(o.max_reps, 10);
      o.min_reps = std::min(o.min_reps, 3);
      o.point_ms = std::min(o.point_ms, 20.0);
    }
    if (o.min_reps < 1 || o.max_reps < o.min_reps || o.face_n < 2 || o.face_n > 2048)
      throw CLI::ValidationError("--min-reps/--max-reps/--face-n", "out of range");
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : exit_usage;
  }

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    (void)cudaGetLastError();
    std::fprintf(stderr, "xeflow-datatype-bench: no usable GPU\n");
    return exit_no_gpu;
  }
  cudaDeviceProp prop{};
  XF_CUDA_TRY(cudaGetDeviceProperties(&prop, 0));
  const device_limits limits = device_type(commit(primitive::f64)).limits();
  const std::string device = std::string(prop.name) + " (sm_" + std::to_string(prop.major) +
                             std::to_string(prop.minor) + ", " + std::to_string(prop.multiProcessorCount) +
                             " SMs)";
  std::printf(
      "%s; rule: copy engine for one block, or where a copy's %s beats a kernel's %s across PCIe, or its %s "
      "a "
      "kernel's %s device to device\n",
      device.c_str(), copy_cost_text(o.pcie).c_str(), kernel_cost_text(o.pcie).c_str(),
      copy_cost_text(o.device).c_str(), kernel_cost_text(o.device).c_str());

  cuda_stream stream;
  recorder r;
  // One pool of user data for fig4, fig5, fig6 and table3: the largest spans are fig4's vector of 8-byte
  // blocks 512 bytes apart (64 times its packed size) and the 4-D subarray's 64^4 doubles (128 MiB).
  const i64 pool_bytes =
      std::max<i64>(std::max(o.fig4_max_bytes, o.component_bytes) * 64, i64{128} << 20) + (64 << 20);
  const patterned_buffer pool(static_cast<std::size_t>(pool_bytes), 5, stream.get());
  run_context x{o, stream.get(), r, pool};
  const double start = now_us();
  if (wants(o, "fig4")) run_fig4(x);
  if (wants(o, "fig5")) run_fig5(x);
  if (wants(o, "table2")) run_table2(x);
  if (wants(o, "fig6")) run_fig6(x);
  if (wants(o, "table3")) run_table3(x, limits);
  std::printf("\n%zu rows, %d failed, %.1f s\n", r.rows.size(), r.failures, (now_us() - start) / 1e6);

  if (!o.json_path.empty()) {
    json doc = ::xf::bench::stamped("xeflow-datatype-bench", device, o.commit, argc, argv);
    doc["pcie_pack_costs"] = costs_json(o.pcie);
    doc["device_pack_costs"] = costs_json(o.device);
    doc["options"] = {{"quick", o.quick},       {"min_reps", o.min_reps},
                      {"max_reps", o.max_reps}, {"point_ms", o.point_ms},
                      {"face_n", o.face_n},     {"component_bytes", o.component_bytes}};
    doc["results"] = r.rows;
    if (!::xf::bench::write_json(o.json_path, doc, "xeflow-datatype-bench")) return exit_failed;
  }
  return r.failures == 0 ? 0 : exit_failed;
}

}  // namespace
}  // namespace xf::dt::bench

int main(int argc, char** argv) {
  try {
    return xf::dt::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xeflow-datatype-bench: %s\n", e.what());
    return 1;
  }
}
