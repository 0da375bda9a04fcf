// xeflow-mpi-gpu-sharing: what two MPI processes on one GPU pay for GPU work between their messages. A
// two-rank ping-pong of contiguous bytes, each rank doing between receive and send either nothing (MPI
// alone, pageable and pinned buffers), a 4 KiB device-to-host copy, or an empty kernel, each synchronized.
// Without MPS each process has its own context, and a kernel of one waits for the GPU to switch from the
// other's: the ping-pong of xeflow-mpi-pingpong pays it twice a one-way trip. Run it as
//   mpirun -n 2 xeflow-mpi-gpu-sharing [--json F]
// and again under MPS (nvidia-cuda-mps-control -d) to see the difference (bench/README.md). Exit codes: 0
// done; 1 failed; 2 no usable GPU; 3 bad command line or not two ranks.
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/common/json_output.hpp"
#include "bench/mpi/gpu_sharing_kernel.hpp"
#include "bench/mpi/mpi_program.hpp"
#include "framework/core/cuda_buffer.hpp"
#include "framework/core/cuda_check.hpp"
#include "framework/mpi/mpi_error.hpp"

namespace xf::mpi::bench {
namespace {

using json = nlohmann::json;

enum class work { none_pageable, none_pinned, copy_4k, kernel };
constexpr const char* work_names[] = {"mpi_alone_pageable", "mpi_alone_pinned", "d2h_copy_4KiB",
                                      "empty_kernel"};

int run(int argc, char** argv) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CLI::App app{"xeflow-mpi-gpu-sharing: GPU work between the messages of two processes on one GPU"};
  std::string json_path, commit;
  int reps = 300;
  app.add_option("--json", json_path, "write the results here (rank 0)");
  app.add_option("--reps", reps, "round trips per point")->check(CLI::Range(10, 100000));
  app.add_option("--commit", commit, "the commit to stamp (default: git's)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (rank == 0) app.exit(e);  // prints the help or the error once
    return e.get_exit_code() == 0 ? 0 : 3;
  }
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "xeflow-mpi-gpu-sharing: run it with mpirun -n 2 (got %d)\n", size);
    return 3;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    (void)cudaGetLastError();
    if (rank == 0) std::fprintf(stderr, "xeflow-mpi-gpu-sharing: no usable GPU\n");
    return 2;
  }
  const call_site site{rank, 1 - rank};
  const std::vector<int> sizes = {16, 4096, 16384, 1 << 20};
  std::vector<std::byte> pageable(static_cast<std::size_t>(sizes.back()));
  pinned_buffer<std::byte> pinned(static_cast<std::size_t>(sizes.back()) + 4096);
  device_buffer<std::byte> device(4096);
  cuda_stream stream;
  cudaDeviceProp prop{};
  int device_id = 0;
  XF_CUDA_TRY(cudaGetDevice(&device_id));
  XF_CUDA_TRY(cudaGetDeviceProperties(&prop, device_id));

  json rows = json::array();
  if (rank == 0)
    std::printf("%s, both ranks; one-way µs (round trip / 2)\n%-20s %10s %10s %10s\n", prop.name,
                "between messages", "bytes", "median", "min");
  for (const work w : {work::none_pageable, work::none_pinned, work::copy_4k, work::kernel}) {
    const auto gpu_work = [&] {
      if (w == work::copy_4k)
        XF_CUDA_TRY(cudaMemcpyAsync(pinned.get() + sizes.back(), device.get(), 4096, cudaMemcpyDeviceToHost,
                                    stream.get()));
      else if (w == work::kernel)
        launch_empty_kernel(stream.get());
      else
        return;
      XF_CUDA_TRY(cudaStreamSynchronize(stream.get()));
    };
    std::byte* const buf = w == work::none_pageable ? pageable.data() : pinned.get();
    for (const int bytes : sizes) {
      std::vector<double> one_way;
      for (int r = 0; r < reps + 10; ++r) {
        XF_MPI_TRY(MPI_Barrier(MPI_COMM_WORLD), site);
        const double start = MPI_Wtime();
        if (rank == 0) {
          gpu_work();
          XF_MPI_TRY(MPI_Send(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD), site);
          XF_MPI_TRY(MPI_Recv(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), site);
        } else {
          XF_MPI_TRY(MPI_Recv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), site);
          gpu_work();
          XF_MPI_TRY(MPI_Send(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD), site);
        }
        if (r >= 10) one_way.push_back((MPI_Wtime() - start) / 2 * 1e6);
      }
      std::sort(one_way.begin(), one_way.end());
      const double median = one_way[one_way.size() / 2];
      if (rank == 0) {
        std::printf("%-20s %10d %10.1f %10.1f\n", work_names[static_cast<int>(w)], bytes, median,
                    one_way.front());
        std::fflush(stdout);
      }
      rows.push_back({{"between", work_names[static_cast<int>(w)]},
                      {"bytes", bytes},
                      {"median_us", median},
                      {"min_us", one_way.front()},
                      {"reps", reps}});
    }
  }
  if (rank == 0 && !json_path.empty()) {
    json doc = ::xf::bench::stamped("xeflow-mpi-gpu-sharing", std::string(prop.name) + ", both ranks", commit,
                                    argc, argv);
    doc["timing"] = "one way = round trip / 2 (rank 0's clock), median; each rank's GPU work synchronized";
    doc["results"] = rows;
    if (!::xf::bench::write_json(json_path, doc, "xeflow-mpi-gpu-sharing")) return 1;
  }
  return 0;
}

}  // namespace
}  // namespace xf::mpi::bench

int main(int argc, char** argv) {
  return xf::mpi::bench::run_mpi_program(argc, argv, "xeflow-mpi-gpu-sharing", xf::mpi::bench::run);
}
