// xeflow-kmeans-gpu-baseline: one K-means assignment pass over a particle file the way users stream data
// larger than the GPU today (single buffer, double buffering, managed memory), for the prefetch-source
// benchmark. Writes each particle's cluster into the file, as xeflow's pass and the CPU reference do.
#include <iostream>

#include "apps/dataset_support/dataset_file.hpp"
#include "apps/dataset_support/tool_cli.hpp"
#include "apps/kmeans/gpu_baseline.hpp"

int main(int argc, char** argv) {
  using namespace xf::apps;
  using namespace xf::apps::kmeans;
  std::string path, mode = "double";
  gpu_baseline_config cfg;
  bool json = false;
  CLI::App app{
      "xeflow-kmeans-gpu-baseline: one K-means assignment pass (centres: the first K particles) over a "
      "particle file, memory-mapped, streamed to the GPU in chunks of whole records; writes each particle's "
      "cluster id into the file."};
  app.option_defaults()->always_capture_default();
  app.add_option("file", path, "particle file (read and written in place)")->required();
  app.add_option("--mode", mode,
                 "single (one buffer), double (two buffers on two streams), managed "
                 "(cudaMemPrefetchAsync of managed chunks)")
      ->check(CLI::IsMember({"single", "double", "managed"}));
  app.add_option("--clusters", cfg.clusters, "K")->check(CLI::Range(1u, 32u));
  app.add_option("--chunk", cfg.chunk_particles, "particles per transfer")
      ->check(CLI::Range(1ull, 1ull << 26));
  app.add_option("--threads", cfg.threads, "CPU threads staging records and storing ids")
      ->check(CLI::Range(1u, 1024u));
  app.add_flag("--json", json, "print one JSON object");
  if (const auto code = parse_or_exit(app, argc, argv, std::cout, std::cerr)) return *code;
  cfg.mode = mode == "single"    ? transfer_mode::single
             : mode == "managed" ? transfer_mode::managed
                                 : transfer_mode::double_buffer;

  return run_tool("xeflow-kmeans-gpu-baseline", std::cerr, [&] {
    const mapped_file file = mapped_file::open(path, map_access::read_write);
    const std::uint64_t size = file.size();
    if (size % particle_bytes != 0)
      throw dataset_error(path, size - size % particle_bytes, "truncated particle record");
    const std::span<std::byte> bytes = file.writable_bytes();
    const gpu_baseline_result r =
        assign_pass_on_gpu({reinterpret_cast<particle*>(bytes.data()), size / particle_bytes}, cfg);
    file.sync();
    const double gbps = r.seconds > 0 ? static_cast<double>(size) / r.seconds / 1e9 : 0;
    if (json) {
      nlohmann::json j{{"app", "kmeans_assign"},
                       {"mode", name_of(cfg.mode)},
                       {"particles", r.particles},
                       {"clusters", cfg.clusters},
                       {"chunk_particles", cfg.chunk_particles},
                       {"threads", cfg.threads},
                       {"seconds", r.seconds},
                       {"dataset_bytes", size},
                       {"gb_per_s", gbps},
                       {"bytes_to_device", r.bytes_to_device},
                       {"bytes_to_host", r.bytes_to_host},
                       {"ids_crc", hex32(r.ids_crc)}};
      std::cout << j.dump() << "\n";
      return;
    }
    std::cout << r.particles << " particles, " << cfg.clusters << " clusters, mode " << name_of(cfg.mode)
              << ": " << r.seconds << " s, " << gbps << " GB/s of dataset; ids CRC " << hex32(r.ids_crc)
              << "\n";
  });
}
