// xeflow-gpu-pair-bench: what moving frames from one GPU to another costs without xeflow, the ceilings a
// bridge between two ranks on two GPUs of one host is read against. Two ranks, rank r on GPU r of
// --devices; for each frame size, interleaved size by size and repeated, `bytes` moved in frames of that
// size with `window` frames in flight:
//   mpi_host      pinned host memory to pinned host memory over MPI (Isend/Irecv): what the bridge itself
//                 carries between the ranks' host-side frames
//   mpi_gpu       device memory on rank 0 to device memory on rank 1 over MPI: the device pointers
//                 themselves where the library is CUDA-aware, else staged as a program does without that
//                 (rank 0 copies each frame to pinned memory and Isends it, rank 1 Irecvs it and copies it
//                 to the device, the copies overlapping the messages)
//   ipc_copy      rank 1's device memory opened on rank 0 (cudaIpcGetMemHandle / cudaIpcOpenMemHandle) and
//                 written by rank 0's copies: a route between the two processes that leaves PCIe's host
//                 side out where the GPUs are linked
//   peer_copy     cudaMemcpyPeerAsync between the two GPUs within rank 0 (peer access enabled where the
//                 GPUs allow it): the link between the GPUs
// Each contender's destination is reset before it runs and checked after (every frame slot must hold its
// source slot's pattern); a mismatch ends the job with exit code 1. A contender the machine cannot run
// (IPC refused, no peer access) gets a row saying why. Exit codes: 0 ok; 1 a mismatch or failure; 2 fewer
// than two GPUs (or not two ranks); 3 a bad command line.
//
//   mpirun -n 2 build-rel/bench/ranks/xeflow-gpu-pair-bench --json pair.json
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bench/common/json_output.hpp"
#include "bench/mpi/mpi_program.hpp"
#include "framework/core/cuda_buffer.hpp"
#include "framework/core/cuda_check.hpp"
#include "framework/core/units.hpp"
#include "framework/mpi/cuda_awareness.hpp"
#include "framework/mpi/mpi_error.hpp"

namespace xf::mpi::bench {
namespace {

using json = nlohmann::json;
using u64 = std::uint64_t;

constexpr int exit_failed = 1, exit_no_gpus = 2, exit_usage = 3;
constexpr int tag_frames = 1, tag_control = 2;

struct options {
  std::vector<u64> sizes;
  u64 bytes = u64{1} << 30;
  int window = 16, repeats = 3;
  std::vector<int> devices{0, 1};
  std::string json_path, commit;
};

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// The byte every byte of frame slot `k` holds at the source.
unsigned char pattern(int k) {
  return static_cast<unsigned char>(0x31 + 7 * k);
}

/// One rank's side of a size: its frame slots on its GPU, in pinned host memory, and what it needs to
/// run and check the contenders.
struct side {
  int rank = 0, peer = 1;
  int device = 0;
  u64 frame = 0;
  int window = 0;
  device_buffer<unsigned char> gpu;   // `window` frames
  pinned_buffer<unsigned char> host;  // `window` frames
  cuda_stream stream;
  std::deque<cuda_event> copied;  // one per slot (a deque: events do not move)
  call_site site() const { return {rank, peer, tag_frames}; }
  unsigned char* gpu_slot(int k) const { return gpu.get() + static_cast<u64>(k) * frame; }
  unsigned char* host_slot(int k) const { return host.get() + static_cast<u64>(k) * frame; }
};

/// Before a contender: the slots it sends from hold their patterns (on the GPU, `gpu_source`; in host
/// memory, `host_source`), every other slot is blank, so that only what the contender moved can pass
/// the check.
void reset(side& s, bool gpu_source, bool host_source) {
  for (int k = 0; k < s.window; ++k) {
    XF_CUDA_TRY(cudaMemset(s.gpu_slot(k), gpu_source ? pattern(k) : 0, s.frame));
    std::memset(s.host_slot(k), host_source ? pattern(k) : 0, s.frame);
  }
  XF_CUDA_TRY(cudaDeviceSynchronize());
}

/// The receiver's slots (on the GPU, or in host memory) all hold their patterns; else the first slot
/// that does not.
std::string check(const side& s, bool on_gpu) {
  std::vector<unsigned char> copy(s.frame);
  for (int k = 0; k < s.window; ++k) {
    if (on_gpu)
      XF_CUDA_TRY(cudaMemcpy(copy.data(), s.gpu_slot(k), s.frame, cudaMemcpyDeviceToHost));
    else
      std::memcpy(copy.data(), s.host_slot(k), s.frame);
    const auto bad = std::find_if(copy.begin(), copy.end(), [&](unsigned char b) { return b != pattern(k); });
    if (bad != copy.end())
      return "slot " + std::to_string(k) + " byte " + std::to_string(bad - copy.begin()) + " is " +
             std::to_string(*bad) + ", expected " + std::to_string(pattern(k));
  }
  return "";
}

/// `frames` messages from rank 0's `slot(k)` to rank 1's, `window` in flight, slot k = frame % window.
void stream_messages(side& s, u64 frames, const std::function<unsigned char*(int)>& slot) {
  std::vector<MPI_Request> pending(static_cast<std::size_t>(s.window), MPI_REQUEST_NULL);
  for (u64 i = 0; i < frames; ++i) {
    const int k = static_cast<int>(i % static_cast<u64>(s.window));
    XF_MPI_TRY(MPI_Wait(&pending[k], MPI_STATUS_IGNORE), s.site());
    if (s.rank == 0)
      XF_MPI_TRY(
          MPI_Isend(slot(k), static_cast<int>(s.frame), MPI_BYTE, 1, tag_frames, MPI_COMM_WORLD, &pending[k]),
          s.site());
    else
      XF_MPI_TRY(
          MPI_Irecv(slot(k), static_cast<int>(s.frame), MPI_BYTE, 0, tag_frames, MPI_COMM_WORLD, &pending[k]),
          s.site());
  }
  XF_MPI_TRY(MPI_Waitall(s.window, pending.data(), MPI_STATUSES_IGNORE), s.site());
}

/// Device to device through pinned memory: rank 0 copies frame i to its host slot and sends it once
/// copied; rank 1 receives into a host slot and copies it to its device slot, posting the slot's next
/// receive once that copy is done. Up to `lag` copies run ahead of the messages on each side.
void stream_staged(side& s, u64 frames) {
  const int lag = std::max(1, s.window / 2);
  std::vector<MPI_Request> pending(static_cast<std::size_t>(s.window), MPI_REQUEST_NULL);
  std::deque<u64> copying;  // frames whose copy is issued and whose slot is not yet handed on
  const auto slot_of = [&](u64 i) { return static_cast<int>(i % static_cast<u64>(s.window)); };
  if (s.rank == 0) {
    // Hands the oldest copied frame to MPI.
    const auto send_front = [&] {
      const u64 i = copying.front();
      copying.pop_front();
      const int k = slot_of(i);
      XF_CUDA_TRY(cudaEventSynchronize(s.copied[k].get()));
      XF_MPI_TRY(MPI_Isend(s.host_slot(k), static_cast<int>(s.frame), MPI_BYTE, 1, tag_frames, MPI_COMM_WORLD,
                           &pending[k]),
                 s.site());
    };
    for (u64 i = 0; i < frames; ++i) {
      const int k = slot_of(i);
      XF_MPI_TRY(MPI_Wait(&pending[k], MPI_STATUS_IGNORE), s.site());  // frame i - window has left
      XF_CUDA_TRY(
          cudaMemcpyAsync(s.host_slot(k), s.gpu_slot(k), s.frame, cudaMemcpyDeviceToHost, s.stream.get()));
      XF_CUDA_TRY(cudaEventRecord(s.copied[k].get(), s.stream.get()));
      copying.push_back(i);
      while (!copying.empty() && (static_cast<int>(copying.size()) > lag ||
                                  cudaEventQuery(s.copied[slot_of(copying.front())].get()) == cudaSuccess))
        send_front();
    }
    while (!copying.empty()) send_front();
  } else {
    const auto post = [&](u64 i) {
      const int k = slot_of(i);
      XF_MPI_TRY(MPI_Irecv(s.host_slot(k), static_cast<int>(s.frame), MPI_BYTE, 0, tag_frames, MPI_COMM_WORLD,
                           &pending[k]),
                 s.site());
    };
    // Frees the oldest copied slot for its next frame.
    const auto repost_front = [&] {
      const u64 i = copying.front();
      copying.pop_front();
      XF_CUDA_TRY(cudaEventSynchronize(s.copied[slot_of(i)].get()));
      if (i + static_cast<u64>(s.window) < frames) post(i + static_cast<u64>(s.window));
    };
    for (u64 i = 0; i < std::min<u64>(frames, static_cast<u64>(s.window)); ++i) post(i);
    for (u64 i = 0; i < frames; ++i) {
      const int k = slot_of(i);
      XF_MPI_TRY(MPI_Wait(&pending[k], MPI_STATUS_IGNORE), s.site());
      XF_CUDA_TRY(
          cudaMemcpyAsync(s.gpu_slot(k), s.host_slot(k), s.frame, cudaMemcpyHostToDevice, s.stream.get()));
      XF_CUDA_TRY(cudaEventRecord(s.copied[k].get(), s.stream.get()));
      copying.push_back(i);
      while (!copying.empty() && (static_cast<int>(copying.size()) > lag ||
                                  cudaEventQuery(s.copied[slot_of(copying.front())].get()) == cudaSuccess))
        repost_front();
    }
    while (!copying.empty()) repost_front();
  }
  XF_CUDA_TRY(cudaStreamSynchronize(s.stream.get()));
}

/// Device-to-device copies of `frames` frames from rank 0's slots into `to` (a peer GPU's memory), slot k
/// = frame % window, on rank 0's stream; returns when the last is done.
void copy_frames(side& s, u64 frames, unsigned char* to, int to_device) {
  for (u64 i = 0; i < frames; ++i) {
    const int k = static_cast<int>(i % static_cast<u64>(s.window));
    unsigned char* dst = to + static_cast<u64>(k) * s.frame;
    if (to_device >= 0)
      XF_CUDA_TRY(cudaMemcpyPeerAsync(dst, to_device, s.gpu_slot(k), s.device, s.frame, s.stream.get()));
    else
      XF_CUDA_TRY(cudaMemcpyAsync(dst, s.gpu_slot(k), s.frame, cudaMemcpyDeviceToDevice, s.stream.get()));
  }
  XF_CUDA_TRY(cudaStreamSynchronize(s.stream.get()));
}

/// Both ranks agree: the smaller of their flags.
bool both(bool mine, const side& s) {
  int in = mine ? 1 : 0, out = 0;
  XF_MPI_TRY(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), s.site());
  return out == 1;
}

std::string cuda_reason(cudaError_t e) {
  (void)cudaGetLastError();
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

struct outcome {
  double seconds = 0;    // the slower rank's, from the barrier to its end
  std::string skipped;   // why the machine could not run it
  std::string mismatch;  // what the check found wrong
};

/// Runs one contender on both ranks: the destination reset, a barrier, `body`, each rank's time, the
/// check on rank 1 (or on rank 0, for `peer_copy`'s destination on rank 0's peer GPU).
outcome timed(side& s, const std::function<void()>& body, const std::function<std::string()>& verify) {
  XF_MPI_TRY(MPI_Barrier(MPI_COMM_WORLD), s.site());
  const double start = now_s();
  body();
  double mine = now_s() - start, slowest = 0;
  XF_MPI_TRY(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), s.site());
  outcome o;
  o.seconds = slowest;
  const std::string found = verify ? verify() : "";
  if (!found.empty()) std::fprintf(stderr, "rank %d: %s\n", s.rank, found.c_str());
  // Rank 0 learns that rank 1 found something.
  int length = static_cast<int>(found.size());
  XF_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &length, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), s.site());
  if (length > 0) o.mismatch = found.empty() ? "the other rank's check failed" : found;
  return o;
}

int run(int argc, char** argv) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  options o;
  std::string sizes = "64KiB,256KiB,1MiB,4MiB,16MiB", bytes = "1GiB", devices = "0,1";
  CLI::App app{"xeflow-gpu-pair-bench: GPU to GPU over MPI, CUDA IPC and peer copies (mpirun -n 2)"};
  app.add_option("--json", o.json_path, "write the results here (rank 0)");
  app.add_option("--sizes", sizes, "frame sizes");
  app.add_option("--bytes", bytes, "bytes moved per measurement");
  app.add_option("--window", o.window, "frames in flight (the frame slots of each side)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--repeats", o.repeats, "measurements of each contender at each size")
      ->check(CLI::Range(1, 100));
  app.add_option("--devices", devices, "rank 0's GPU and rank 1's, as CUDA ordinals");
  app.add_option("--commit", o.commit,
                 "the commit to stamp (default: git rev-parse of the working directory)");
  try {
    app.parse(argc, argv);
    std::stringstream list(sizes);
    for (std::string item; std::getline(list, item, ',');) {
      const auto v = parse_bytes(item);
      if (!v || *v == 0 || *v > (u64{1} << 30))
        throw CLI::ValidationError("--sizes", item + ": 1 B to 1 GiB");
      o.sizes.push_back(*v);
    }
    const auto b = parse_bytes(bytes);
    if (!b || *b == 0) throw CLI::ValidationError("--bytes", bytes_syntax_problem(bytes));
    o.bytes = *b;
    o.devices.clear();
    std::stringstream ds(devices);
    for (std::string item; std::getline(ds, item, ',');) o.devices.push_back(std::stoi(item));
    if (o.devices.size() != 2 || o.devices[0] == o.devices[1] || o.devices[0] < 0 || o.devices[1] < 0)
      throw CLI::ValidationError("--devices", "two different ordinals, as 0,1");
  } catch (const CLI::ParseError& e) {
    return rank == 0 ? (app.exit(e) == 0 ? 0 : exit_usage) : (e.get_exit_code() == 0 ? 0 : exit_usage);
  } catch (const std::invalid_argument&) {
    if (rank == 0) std::fprintf(stderr, "--devices: two ordinals, as 0,1\n");
    return exit_usage;
  }
  if (size != 2) {
    if (rank == 0)
      std::fprintf(stderr, "xeflow-gpu-pair-bench: run it with mpirun -n 2 (got %d ranks)\n", size);
    return exit_usage;
  }
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) {
    (void)cudaGetLastError();
    gpus = 0;
  }
  const int highest = std::max(o.devices[0], o.devices[1]);
  if (gpus <= highest) {
    if (rank == 0)
      std::fprintf(stderr, "xeflow-gpu-pair-bench: needs GPUs %d and %d; this machine has %d\n", o.devices[0],
                   o.devices[1], gpus);
    return exit_no_gpus;
  }

  // The rank's GPU is current before its side's stream and events exist: they belong to the device
  // current when they are made.
  XF_CUDA_TRY(cudaSetDevice(o.devices[static_cast<std::size_t>(rank)]));
  side s;
  s.rank = rank;
  s.peer = 1 - rank;
  s.device = o.devices[static_cast<std::size_t>(rank)];
  std::vector<std::string> names;
  for (int d : o.devices) {
    cudaDeviceProp prop{};
    XF_CUDA_TRY(cudaGetDeviceProperties(&prop, d));
    names.push_back("GPU " + std::to_string(d) + ": " + prop.name);
  }
  int can_peer = 0;
  XF_CUDA_TRY(cudaDeviceCanAccessPeer(&can_peer, o.devices[0], o.devices[1]));
  const cuda_awareness awareness = detect_cuda_awareness();
  const std::string device = names[0] + " to " + names[1];
  if (rank == 0) {
    std::printf("%s; peer access %s; %s\n", device.c_str(), can_peer ? "yes" : "no",
                awareness.reason.c_str());
    std::printf("%10s  %14s  %14s  %14s  %14s   (GB/s, median of %d; %s a measurement, %d in flight)\n",
                "frame", "mpi_host", awareness.aware ? "mpi_gpu(aware)" : "mpi_gpu(staged)", "ipc_copy",
                "peer_copy", o.repeats, format_bytes(o.bytes).c_str(), o.window);
    std::fflush(stdout);
  }
  // Rank 0 enables peer access to rank 1's GPU (for peer_copy; IPC maps the memory itself).
  if (rank == 0 && can_peer) {
    const cudaError_t e = cudaDeviceEnablePeerAccess(o.devices[1], 0);
    if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
      throw std::runtime_error("cudaDeviceEnablePeerAccess: " + cuda_reason(e));
    (void)cudaGetLastError();
  }

  json rows = json::array();
  int failures = 0;
  std::map<std::string, std::string> not_run;  // contenders this machine could not run, and why
  for (const u64 frame : o.sizes) {
    s.frame = frame;
    s.window = o.window;
    s.gpu = device_buffer<unsigned char>(frame * static_cast<u64>(o.window));
    s.host = pinned_buffer<unsigned char>(frame * static_cast<u64>(o.window));
    s.copied.clear();
    for (int k = 0; k < o.window; ++k) s.copied.emplace_back();
    const u64 frames = std::max<u64>(1, o.bytes / frame);
    const double moved = static_cast<double>(frames * frame);

    // rank 1's device slots opened on rank 0 (for ipc_copy); its buffer, peer_copy's destination on
    // rank 0 (allocated on GPU 1 from rank 0).
    std::string ipc_refused;
    unsigned char* ipc_target = nullptr;
    {
      cudaIpcMemHandle_t handle{};
      int ok = 1;
      if (rank == 1) {
        const cudaError_t e = cudaIpcGetMemHandle(&handle, s.gpu.get());
        if (e != cudaSuccess) {
          ipc_refused = "cudaIpcGetMemHandle: " + cuda_reason(e);
          ok = 0;
        }
        XF_MPI_TRY(MPI_Send(&handle, sizeof handle, MPI_BYTE, 0, tag_control, MPI_COMM_WORLD), s.site());
      } else {
        XF_MPI_TRY(
            MPI_Recv(&handle, sizeof handle, MPI_BYTE, 1, tag_control, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
            s.site());
      }
      if (!both(ok == 1, s)) {
        if (ipc_refused.empty()) ipc_refused = "rank 1 could not export its memory";
      } else if (rank == 0) {
        void* opened = nullptr;
        const cudaError_t e = cudaIpcOpenMemHandle(&opened, handle, cudaIpcMemLazyEnablePeerAccess);
        if (e != cudaSuccess)
          ipc_refused = "cudaIpcOpenMemHandle: " + cuda_reason(e);
        else
          ipc_target = static_cast<unsigned char*>(opened);
      }
      if (!both(ipc_refused.empty(), s) && ipc_refused.empty()) ipc_refused = "rank 0 could not open it";
    }
    device_buffer<unsigned char> peer_target;
    if (rank == 0 && can_peer) {
      XF_CUDA_TRY(cudaSetDevice(o.devices[1]));
      peer_target = device_buffer<unsigned char>(frame * static_cast<u64>(o.window));
      XF_CUDA_TRY(cudaSetDevice(s.device));
    }

    std::vector<std::string> contenders{"mpi_host", "mpi_gpu", "ipc_copy", "peer_copy"};
    std::map<std::string, std::vector<double>> gbps;
    std::map<std::string, std::string> skipped;
    if (!ipc_refused.empty()) skipped["ipc_copy"] = ipc_refused;
    if (!can_peer) skipped["peer_copy"] = "cudaDeviceCanAccessPeer says no";
    for (int r = 0; r < o.repeats; ++r) {
      for (const std::string& c : contenders) {
        if (skipped.count(c)) continue;
        reset(s, rank == 0, rank == 0 && c == "mpi_host");
        if (rank == 0 && c == "peer_copy") XF_CUDA_TRY(cudaMemset(peer_target.get(), 0, peer_target.size()));
        outcome out;
        if (c == "mpi_host") {
          out = timed(
              s, [&] { stream_messages(s, frames, [&](int k) { return s.host_slot(k); }); },
              [&] { return rank == 1 ? check(s, false) : std::string(); });
        } else if (c == "mpi_gpu") {
          out = timed(
              s,
              [&] {
                if (awareness.aware)
                  stream_messages(s, frames, [&](int k) { return s.gpu_slot(k); });
                else
                  stream_staged(s, frames);
              },
              [&] { return rank == 1 ? check(s, true) : std::string(); });
        } else if (c == "ipc_copy") {
          out = timed(s,
                      [&] {
                        if (rank == 0) copy_frames(s, frames, ipc_target, -1);
                        // Rank 1's memory is written behind its back: the barrier in `timed` orders its check
                        // after rank 0's copies are done.
                      },
                      {});
          XF_MPI_TRY(MPI_Barrier(MPI_COMM_WORLD), s.site());
          const std::string found = rank == 1 ? check(s, true) : "";
          if (!both(found.empty(), s)) out.mismatch = found.empty() ? "rank 1's check failed" : found;
        } else {
          out = timed(
              s,
              [&] {
                if (rank == 0) copy_frames(s, frames, peer_target.get(), o.devices[1]);
              },
              [&] {
                if (rank != 0) return std::string();
                std::vector<unsigned char> copy(s.frame);
                for (int k = 0; k < s.window; ++k) {
                  XF_CUDA_TRY(cudaMemcpy(copy.data(), peer_target.get() + static_cast<u64>(k) * s.frame,
                                         s.frame, cudaMemcpyDeviceToHost));
                  if (std::any_of(copy.begin(), copy.end(), [&](unsigned char b) { return b != pattern(k); }))
                    return "peer slot " + std::to_string(k) + " does not hold its pattern";
                }
                return std::string();
              });
        }
        if (!out.mismatch.empty()) {
          ++failures;
          skipped[c] = "MISMATCH: " + out.mismatch;
          if (rank == 0)
            std::fprintf(stderr, "%s at %s: %s\n", c.c_str(), format_bytes(frame).c_str(),
                         out.mismatch.c_str());
          continue;
        }
        gbps[c].push_back(moved / out.seconds / 1e9);
      }
    }
    for (const auto& [c, why] : skipped)
      if (why.rfind("MISMATCH", 0) != 0) not_run.emplace(c, why);
    if (rank == 0 && ipc_target) XF_CUDA_TRY(cudaIpcCloseMemHandle(ipc_target));
    XF_MPI_TRY(MPI_Barrier(MPI_COMM_WORLD), s.site());  // rank 1 frees its slots only once closed

    if (rank == 0) {
      std::printf("%10s", format_bytes(frame).c_str());
      for (const std::string& c : contenders) {
        json row{{"frame_bytes", frame}, {"contender", c}, {"frames", frames}};
        if (c == "mpi_gpu") row["route"] = awareness.aware ? "cuda_aware" : "staged";
        if (skipped.count(c)) {
          row["skipped"] = skipped[c];
          std::printf("  %14s", skipped[c].rfind("MISMATCH", 0) == 0 ? "MISMATCH" : "n/a");
        } else {
          std::vector<double> v = gbps[c];
          row["gb_per_second"] = v;
          std::sort(v.begin(), v.end());
          row["median_gb_per_second"] = v[v.size() / 2];
          std::printf("  %14.2f", v[v.size() / 2]);
        }
        rows.push_back(row);
      }
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  if (rank == 0) {
    for (const auto& [c, why] : not_run) std::printf("%s: not run: %s\n", c.c_str(), why.c_str());
    if (!o.json_path.empty()) {
      json doc = ::xf::bench::stamped("xeflow-gpu-pair-bench", device, o.commit, argc, argv);
      char library[MPI_MAX_LIBRARY_VERSION_STRING] = {};
      int length = 0;
      MPI_Get_library_version(library, &length);
      const std::string version(library, static_cast<std::size_t>(length));
      doc["mpi_library"] = version.substr(0, version.find_first_of(std::string("\n\0", 2)));
      doc["cuda_awareness"] = {{"aware", awareness.aware}, {"reason", awareness.reason}};
      doc["peer_access"] = can_peer != 0;
      doc["options"] = {{"bytes", o.bytes},
                        {"window", o.window},
                        {"repeats", o.repeats},
                        {"devices", o.devices},
                        {"timing", "from a barrier to the slower rank's end; GB/s = 1e9 bytes a second"}};
      doc["results"] = rows;
      if (!::xf::bench::write_json(o.json_path, doc, "xeflow-gpu-pair-bench")) return exit_failed;
    }
  }
  return failures == 0 ? 0 : exit_failed;
}

}  // namespace
}  // namespace xf::mpi::bench

int main(int argc, char** argv) {
  return xf::mpi::bench::run_mpi_program(argc, argv, "xeflow-gpu-pair-bench", xf::mpi::bench::run);
}
