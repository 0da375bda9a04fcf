// xeflow-mpi-pingpong: the GPU MPI datatypes paper's Fig. 7. Two processes on one GPU (--gpu-per-rank:
// each on its own GPU); rank 0 sends `count` = 1 instance of a vector of doubles (blocks of 8, 32 or
// 128 B, stride two blocks) from device memory, rank 1 receives it into device memory and sends it back.
// Time per round trip / 2, median over the repetitions, for each contender in the same run:
//   engine                framework/mpi's messenger, automatic route (the row says which it took)
//   engine_staged         the messenger forced through pinned host memory, where `engine` was CUDA-aware
//   engine_device_copy    the staged route whose receiver copies each piece to device memory before
//                         unpacking it (staged_unpack::device_copy) instead of reading pinned memory
//   copy_extent_mpi_pack  what users do today: cudaMemcpy the whole extent to a pinned host buffer,
//                         MPI_Send it with the MPI derived datatype (the library's engine packs), MPI_Recv
//                         into a host extent buffer with the datatype, cudaMemcpy the extent back
//   mpi_cuda_aware        MPI_Send/MPI_Recv of the device pointer with the derived datatype, where the
//                         library is CUDA-aware (else a row saying why not)
// Before it is timed each contender's round is checked: both ranks' receive buffers (reset to a blank
// pattern) must hold host unpack of host pack of the sender's data. A mismatch is reported, that contender
// is not timed, and the exit code is 1. --host runs engine and copy_extent_mpi_pack on host buffers (memcpy
// for cudaMemcpy) without a GPU, to try the program anywhere. Exit codes: 0 ok; 1 a mismatch or a failed
// run; 2 no usable GPU; 3 bad command line.
//
//   mpirun -n 2 build-rel/bench/mpi/xeflow-mpi-pingpong --json pingpong.json
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench/common/json_output.hpp"
#include "bench/mpi/mpi_program.hpp"
#include "framework/core/cuda_buffer.hpp"
#include "framework/core/cuda_check.hpp"
#include "framework/core/units.hpp"
#include "framework/datatype/datatype.hpp"
#include "framework/datatype/pack.hpp"
#include "framework/mpi/cuda_awareness.hpp"
#include "framework/mpi/message_type.hpp"
#include "framework/mpi/messenger.hpp"
#include "framework/mpi/mpi_datatype.hpp"
#include "framework/mpi/mpi_error.hpp"

namespace xf::mpi::bench {
namespace {

using i64 = std::int64_t;
using bytes_t = std::vector<std::byte>;
using json = nlohmann::json;

constexpr int exit_failed = 1, exit_no_gpu = 2, exit_usage = 3;
constexpr std::byte blank{0x5a};

struct options {
  bool host = false;
  bool gpu_per_rank = false;  ///< rank r on GPU r (modulo the GPUs), instead of both on GPU 0
  std::vector<i64> block_bytes{8, 32, 128};
  std::vector<i64> packed_bytes;
  int min_reps = 5, max_reps = 200, warmup = 2;
  double point_ms = 300;
  i64 chunk_bytes = messenger_options{}.chunk_bytes;
  std::string json_path, commit;
};

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Memory for one rank's buffers: device memory, or (--host) host memory; pinned host memory for the
/// baseline's host side either way (cudaHostAlloc where there is a GPU).
class memory {
 public:
  explicit memory(bool host) : host_(host) {}
  bool host() const { return host_; }

  struct block {
    std::byte* data = nullptr;
    std::size_t bytes = 0;
  };
  block user(std::size_t bytes) {
    if (host_) {
      host_blocks_.emplace_back(bytes);
      return {host_blocks_.back().data(), bytes};
    }
    device_blocks_.emplace_back(bytes);
    return {device_blocks_.back().get(), bytes};
  }
  block staging(std::size_t bytes) {
    if (host_) return user(bytes);
    pinned_blocks_.emplace_back(bytes);
    return {pinned_blocks_.back().get(), bytes};
  }
  void upload(block to, const bytes_t& from) const { copy(to.data, from.data(), from.size()); }
  bytes_t download(block from) const {
    bytes_t out(from.bytes);
    copy(out.data(), from.data, from.bytes);
    return out;
  }
  /// cudaMemcpy (default direction: the runtime knows both sides), or memcpy with --host.
  void copy(void* to, const void* from, std::size_t bytes) const {
    if (host_)
      std::memcpy(to, from, bytes);
    else
      XF_CUDA_TRY(cudaMemcpy(to, from, bytes, cudaMemcpyDefault));
  }

 private:
  bool host_;
  std::vector<bytes_t> host_blocks_;
  std::vector<device_buffer<std::byte>> device_blocks_;
  std::vector<pinned_buffer<std::byte>> pinned_blocks_;
};

/// One point: the vector type, its extent and the two ranks' buffers.
struct point {
  i64 block_bytes = 0, packed = 0, extent = 0;
  dt::datatype type = dt::primitive::f64;
  bytes_t original;  ///< the sender's extent (same seed on both ranks)
  bytes_t expected;  ///< a blank extent after receiving it: host unpack of host pack
};

point make_point(i64 block_bytes, i64 packed) {
  point p;
  p.block_bytes = block_bytes;
  p.packed = packed;
  const i64 block = block_bytes / 8, blocks = packed / block_bytes;
  p.type = dt::vector(blocks, block, 2 * block, dt::primitive::f64);
  p.extent = p.type.true_ub() - p.type.true_lb();
  p.original.resize(static_cast<std::size_t>(p.extent));
  std::mt19937_64 rng(static_cast<std::uint64_t>(block_bytes * 131 + packed));
  for (std::size_t i = 0; i < p.original.size(); i += 8) {
    const std::uint64_t v = rng();
    std::memcpy(p.original.data() + i, &v, std::min<std::size_t>(8, p.original.size() - i));
  }
  const dt::committed_type c = dt::commit(p.type);
  bytes_t packed_bytes(static_cast<std::size_t>(packed));
  dt::pack(c, 1, p.original.data(), packed_bytes.data());
  p.expected.assign(p.original.size(), blank);
  dt::unpack(c, 1, packed_bytes.data(), p.expected.data());
  return p;
}

struct rank_info {
  int rank = 0;
  int peer = 1;
};

/// A contender's round trip: rank 0's send and receive, rank 1's receive and send. `route` and `packing`
/// are what the engine reports (empty for the baselines).
struct contender {
  std::string name;
  std::function<void(contender& self, int tag)> round;
  std::string route, packing;
};

class recorder {
 public:
  recorder(const rank_info& me) : me_(me) {}
  json rows = json::array();
  int failures = 0;

  void header() const {
    if (me_.rank != 0) return;
    std::printf("%8s %10s %10s  %-22s %-10s %11s %11s %9s %8s\n", "block_B", "packed", "extent", "contender",
                "route", "median_us", "min_us", "MB/s", "speedup");
    std::fflush(stdout);
  }
  void add(json row) {
    if (row.contains("verified") && !row["verified"].get<bool>()) ++failures;
    if (me_.rank == 0) {
      const auto size = [](i64 b) { return format_bytes(static_cast<std::uint64_t>(b)); };
      std::string timing;
      char text[160];
      if (row.contains("skipped")) {
        timing = "skipped: " + row["skipped"].get<std::string>();
      } else if (!row["verified"].get<bool>()) {
        timing = "MISMATCH: not timed";
      } else {
        const double median = row["median_us"], best = row["min_us"];
        std::snprintf(text, sizeof text, "%11.1f %11.1f %9.0f", median, best,
                      static_cast<double>(row["packed_bytes"].get<i64>()) / median);
        timing = text;
        if (row.contains("speedup_vs_copy_extent")) {
          std::snprintf(text, sizeof text, " %7.2fx", row["speedup_vs_copy_extent"].get<double>());
          timing += text;
        }
      }
      std::printf("%8lld %10s %10s  %-22s %-10s %s\n", static_cast<long long>(row["block_bytes"].get<i64>()),
                  size(row["packed_bytes"]).c_str(), size(row["extent_bytes"]).c_str(),
                  row["contender"].get<std::string>().c_str(), row.value("route", std::string("-")).c_str(),
                  timing.c_str());
      std::fflush(stdout);
    }
    rows.push_back(std::move(row));
  }

 private:
  rank_info me_;
};

/// Runs `c` once on blank receive buffers and checks both ranks' (agreed over MPI), then times it: warm-up
/// rounds, one round to size the repetitions to --point-ms (rank 0 decides, rank 1 follows), the rest
/// timed by rank 0 round by round. One-way time is half the round trip.
json measure(const options& o, const rank_info& me, contender& c, const point& p,
             const std::function<bool()>& reset_and_check_setup, const std::function<bool()>& check) {
  json row{{"block_bytes", p.block_bytes},
           {"packed_bytes", p.packed},
           {"extent_bytes", p.extent},
           {"contender", c.name}};
  int ok = reset_and_check_setup() ? 1 : 0;
  c.round(c, 0);
  ok = ok && check() ? 1 : 0;
  int all_ok = 0;
  XF_MPI_TRY(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), call_site{me.rank});
  if (!c.route.empty()) row["route"] = c.route;
  if (!c.packing.empty()) row["packing"] = c.packing;
  row["verified"] = all_ok == 1;
  if (!all_ok) return row;
  for (int w = 0; w < o.warmup; ++w) c.round(c, 1 + w);
  XF_MPI_TRY(MPI_Barrier(MPI_COMM_WORLD), call_site{me.rank});
  double start = now_us();
  c.round(c, o.warmup + 1);
  const double first = now_us() - start;
  int reps = std::clamp(static_cast<int>(o.point_ms * 1e3 / std::max(first, 1.0)), o.min_reps, o.max_reps);
  XF_MPI_TRY(MPI_Bcast(&reps, 1, MPI_INT, 0, MPI_COMM_WORLD), call_site{me.rank});
  std::vector<double> one_way;
  one_way.reserve(static_cast<std::size_t>(reps));
  for (int r = 0; r < reps; ++r) {
    start = now_us();
    c.round(c, o.warmup + 2 + r);
    one_way.push_back((now_us() - start) / 2);
  }
  std::sort(one_way.begin(), one_way.end());
  const std::size_t n = one_way.size();
  row["median_us"] = n % 2 ? one_way[n / 2] : (one_way[n / 2 - 1] + one_way[n / 2]) / 2;
  row["min_us"] = one_way.front();
  row["reps"] = reps;
  return row;
}

int run(int argc, char** argv) {
  rank_info me;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  me.peer = 1 - me.rank;

  options o;
  std::string blocks = "8,32,128", sizes = "4KiB,16KiB,64KiB,256KiB,1MiB,4MiB,16MiB", chunk;
  CLI::App app{"xeflow-mpi-pingpong: ping-pong of a vector type in GPU memory (run with mpirun -n 2)"};
  app.add_option("--json", o.json_path, "write the results here (rank 0)");
  app.add_flag("--host", o.host, "host buffers, no GPU: engine against copy_extent_mpi_pack with memcpy");
  app.add_flag("--gpu-per-rank", o.gpu_per_rank,
               "rank r on GPU r (modulo the GPUs): the ping-pong between two GPUs (default: both on GPU 0)");
  app.add_option("--blocks", blocks, "block sizes in bytes (multiples of 8)");
  app.add_option("--sizes", sizes, "packed message sizes (multiples of every block size)");
  app.add_option("--min-reps", o.min_reps, "repetitions at least");
  app.add_option("--max-reps", o.max_reps, "repetitions at most");
  app.add_option("--warmup", o.warmup, "untimed rounds before each contender's timing");
  app.add_option("--point-ms", o.point_ms, "time budget of one contender at one point");
  app.add_option("--chunk-bytes", chunk, "the messenger's wire chunk (default: the library's)");
  app.add_option("--commit", o.commit,
                 "the commit to stamp (default: git rev-parse of the working directory)");
  try {
    app.parse(argc, argv);
    const auto byte_list = [](const std::string& text, const char* flag) {
      std::vector<i64> out;
      std::stringstream s(text);
      for (std::string item; std::getline(s, item, ',');) {
        const auto v = parse_bytes(item);
        if (!v || *v == 0) throw CLI::ValidationError(flag, bytes_syntax_problem(item));
        out.push_back(static_cast<i64>(*v));
      }
      return out;
    };
    o.block_bytes = byte_list(blocks, "--blocks");
    o.packed_bytes = byte_list(sizes, "--sizes");
    if (!chunk.empty()) o.chunk_bytes = byte_list(chunk, "--chunk-bytes").front();
    for (i64 b : o.block_bytes)
      for (i64 s : o.packed_bytes)
        if (b % 8 != 0 || s % b != 0)
          throw CLI::ValidationError(
              "--blocks/--sizes",
              "a block of " + std::to_string(b) + " B and a message of " + std::to_string(s) + " B");
    if (o.min_reps < 1 || o.max_reps < o.min_reps || o.warmup < 0)
      throw CLI::ValidationError("--min-reps/--max-reps/--warmup", "out of range");
  } catch (const CLI::ParseError& e) {
    return me.rank == 0 ? (app.exit(e) == 0 ? 0 : exit_usage) : (e.get_exit_code() == 0 ? 0 : exit_usage);
  }
  if (size != 2) {
    if (me.rank == 0)
      std::fprintf(stderr, "xeflow-mpi-pingpong: run it with mpirun -n 2 (got %d ranks)\n", size);
    return exit_usage;
  }

  std::string device = "host (--host)";
  if (!o.host) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
      (void)cudaGetLastError();
      if (me.rank == 0)
        std::fprintf(stderr, "xeflow-mpi-pingpong: no usable GPU (--host runs without one)\n");
      return exit_no_gpu;
    }
    // Both processes on the same GPU, as the paper's Fig. 7; or each on its own.
    const int ordinal = o.gpu_per_rank ? me.rank % devices : 0;
    XF_CUDA_TRY(cudaSetDevice(ordinal));
    cudaDeviceProp prop{};
    XF_CUDA_TRY(cudaGetDeviceProperties(&prop, ordinal));
    device = std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) +
             (o.gpu_per_rank && devices > 1 ? ", rank r on GPU r)" : ", both ranks on GPU 0)");
  }
  char library[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int library_length = 0;
  MPI_Get_library_version(library, &library_length);
  std::string library_version(library, static_cast<std::size_t>(library_length));
  while (!library_version.empty() && (library_version.back() == '\n' || library_version.back() == '\0'))
    library_version.pop_back();
  const cuda_awareness awareness = detect_cuda_awareness();
  if (me.rank == 0) {
    std::printf("%s; %s\nMPI library %s; %s\n", device.c_str(), o.host ? "host buffers" : "device buffers",
                library_version.substr(0, library_version.find(',')).c_str(), awareness.reason.c_str());
    std::fflush(stdout);
  }

  messenger automatic(MPI_COMM_WORLD, {.chunk_bytes = o.chunk_bytes});
  messenger staged(MPI_COMM_WORLD, {.chunk_bytes = o.chunk_bytes, .device = device_route::staged});
  messenger device_copy(
      MPI_COMM_WORLD,
      {.chunk_bytes = o.chunk_bytes, .device = device_route::staged, .unpack = staged_unpack::device_copy});
  recorder r(me);
  r.header();
  const double start = now_us();
  for (i64 block_bytes : o.block_bytes)
    for (i64 packed : o.packed_bytes) {
      const point p = make_point(block_bytes, packed);
      const i64 origin = -p.type.true_lb();  // 0 for these vectors; kept for any lower bound
      memory mem(o.host);
      // Rank 0 sends `data` and receives the echo into `back`; rank 1 receives into `data` and echoes it.
      const memory::block data = mem.user(p.original.size()), back = mem.user(p.original.size());
      // The baseline's host extents: rank 0 sends from one and receives the echo into another (blank
      // where the datatype leaves gaps, as the device buffer it is copied to expects); rank 1 uses one.
      const memory::block host_extent = mem.staging(p.original.size()),
                          host_back = mem.staging(p.original.size());
      const message_type type(p.type);
      const mpi_datatype mpi_type = to_mpi_datatype(p.type);
      std::byte* const data_buf = data.data + origin;
      std::byte* const back_buf = back.data + origin;
      const call_site site{me.rank, me.peer};

      const auto reset = [&] {
        mem.upload(data, me.rank == 0 ? p.original : bytes_t(p.original.size(), blank));
        if (me.rank == 0) mem.upload(back, bytes_t(p.original.size(), blank));
        std::memset(host_extent.data, static_cast<int>(blank), host_extent.bytes);
        std::memset(host_back.data, static_cast<int>(blank), host_back.bytes);
        return true;
      };
      // Rank 0's echo and rank 1's receive both hold what a receive of the packed data leaves.
      const auto check = [&] { return mem.download(me.rank == 0 ? back : data) == p.expected; };

      std::optional<double> copy_extent_us;
      const auto engine_with = [&](messenger& m, const char* name) {
        contender c{name, nullptr, "", ""};
        c.round = [&](contender& self, int tag) {
          if (me.rank == 0) {
            const transfer_report s = m.send(type, 1, data_buf, 1, tag);
            m.recv(type, 1, back_buf, 1, tag);
            self.route = std::string(name_of(s.taken));
            self.packing = s.packing;
          } else {
            m.recv(type, 1, data_buf, 0, tag);
            m.send(type, 1, data_buf, 0, tag);
          }
        };
        return c;
      };
      contender engine = engine_with(automatic, "engine");
      json engine_row = measure(o, me, engine, p, reset, check);

      contender copy_extent{"copy_extent_mpi_pack", nullptr, "", ""};
      copy_extent.round = [&](contender&, int tag) {
        std::byte* const host_buf = host_extent.data + origin;
        const auto to_host = [&](const memory::block& from) {
          mem.copy(host_extent.data, from.data, from.bytes);
        };
        const auto from_host = [&](const memory::block& to) {
          mem.copy(to.data, host_extent.data, to.bytes);
        };
        if (me.rank == 0) {
          to_host(data);
          XF_MPI_TRY(MPI_Send(host_buf, 1, mpi_type.get(), 1, tag, MPI_COMM_WORLD), site);
          XF_MPI_TRY(
              MPI_Recv(host_back.data + origin, 1, mpi_type.get(), 1, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              site);
          mem.copy(back.data, host_back.data, back.bytes);
        } else {
          XF_MPI_TRY(MPI_Recv(host_buf, 1, mpi_type.get(), 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), site);
          from_host(data);
          to_host(data);
          XF_MPI_TRY(MPI_Send(host_buf, 1, mpi_type.get(), 0, tag, MPI_COMM_WORLD), site);
        }
      };
      json copy_row = measure(o, me, copy_extent, p, reset, check);
      if (copy_row.contains("median_us")) copy_extent_us = copy_row["median_us"].get<double>();
      const auto with_speedup = [&](json row) {
        if (copy_extent_us && row.contains("median_us"))
          row["speedup_vs_copy_extent"] = *copy_extent_us / row["median_us"].get<double>();
        return row;
      };
      r.add(with_speedup(engine_row));
      if (!o.host) {
        if (engine.route == name_of(route::cuda_aware)) {
          contender forced = engine_with(staged, "engine_staged");
          r.add(with_speedup(measure(o, me, forced, p, reset, check)));
        } else {
          r.add({{"block_bytes", p.block_bytes},
                 {"packed_bytes", p.packed},
                 {"extent_bytes", p.extent},
                 {"contender", "engine_staged"},
                 {"skipped", "engine took the staged route already"}});
        }
        contender copying = engine_with(device_copy, "engine_device_copy");
        r.add(with_speedup(measure(o, me, copying, p, reset, check)));
      }
      r.add(copy_row);
      if (!o.host) {
        if (awareness.aware) {
          contender direct{"mpi_cuda_aware", nullptr, "", ""};
          direct.round = [&](contender&, int tag) {
            if (me.rank == 0) {
              XF_MPI_TRY(MPI_Send(data_buf, 1, mpi_type.get(), 1, tag, MPI_COMM_WORLD), site);
              XF_MPI_TRY(MPI_Recv(back_buf, 1, mpi_type.get(), 1, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                         site);
            } else {
              XF_MPI_TRY(MPI_Recv(data_buf, 1, mpi_type.get(), 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                         site);
              XF_MPI_TRY(MPI_Send(data_buf, 1, mpi_type.get(), 0, tag, MPI_COMM_WORLD), site);
            }
          };
          r.add(with_speedup(measure(o, me, direct, p, reset, check)));
        } else {
          r.add({{"block_bytes", p.block_bytes},
                 {"packed_bytes", p.packed},
                 {"extent_bytes", p.extent},
                 {"contender", "mpi_cuda_aware"},
                 {"skipped", awareness.reason}});
        }
      }
    }
  if (me.rank == 0)
    std::printf("\n%zu rows, %d failed, %.1f s\n", r.rows.size(), r.failures, (now_us() - start) / 1e6);

  if (me.rank == 0 && !o.json_path.empty()) {
    json doc = ::xf::bench::stamped("xeflow-mpi-pingpong", device, o.commit, argc, argv);
    doc["mpi_library"] = library_version;
    doc["cuda_awareness"] = {{"aware", awareness.aware}, {"reason", awareness.reason}};
    if (awareness.compiled) doc["cuda_awareness"]["compiled"] = *awareness.compiled;
    if (awareness.queried) doc["cuda_awareness"]["queried"] = *awareness.queried;
    doc["options"] = {{"host", o.host},
                      {"gpu_per_rank", o.gpu_per_rank},
                      {"min_reps", o.min_reps},
                      {"max_reps", o.max_reps},
                      {"warmup", o.warmup},
                      {"point_ms", o.point_ms},
                      {"chunk_bytes", o.chunk_bytes > 0 ? json(o.chunk_bytes)
                                                        : json("automatic: a quarter of the message "
                                                               "within [64 KiB, 4 MiB]")},
                      {"timing", "one way = round trip / 2, median; rank 0's wall clock"}};
    doc["results"] = r.rows;
    if (!::xf::bench::write_json(o.json_path, doc, "xeflow-mpi-pingpong")) return exit_failed;
  }
  return r.failures == 0 ? 0 : exit_failed;
}

}  // namespace
}  // namespace xf::mpi::bench

int main(int argc, char** argv) {
  return xf::mpi::bench::run_mpi_program(argc, argv, "xeflow-mpi-pingpong", xf::mpi::bench::run);
}
