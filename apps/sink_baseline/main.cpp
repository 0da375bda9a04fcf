// xeflow-sink-baseline: a topology of one CPU source and one GPU sink (word count, affinity) run the way
// users stream data larger than the GPU today, for the prefetch-source benchmark (sink_baseline.hpp).
#include <iostream>

#include "apps/dataset_support/tool_cli.hpp"
#include "apps/sink_baseline/sink_baseline.hpp"

int main(int argc, char** argv) {
  using namespace xf::apps;
  sink_baseline_config cfg;
  std::string mode = "double";
  bool json = false;
  CLI::App app{
      "xeflow-sink-baseline: runs a topology's CPU source and GPU sink (e.g. topologies/wordcount.yaml) "
      "with a conventional transport instead of xeflow's: chunks of frames copied from one pinned buffer "
      "(single), two buffers on two streams (double) or managed memory prefetched (managed), one launch of "
      "the sink's compute per frame. Prints the sink's counters, as xeflow-run does."};
  app.option_defaults()->always_capture_default();
  app.add_option("topology", cfg.topology, "topology YAML")->required();
  app.add_option("--set", cfg.overrides, "override a field: path=value (as xeflow-run)");
  app.add_option("--mode", mode, "single, double or managed")
      ->check(CLI::IsMember({"single", "double", "managed"}));
  app.add_option("--frames-per-chunk", cfg.frames_per_chunk, "frames per transfer")
      ->check(CLI::Range(1u, 4096u));
  app.add_option("--blocks", cfg.blocks, "blocks per launch (0: as many as fit on the GPU at once)");
  app.add_option("--threads-per-block", cfg.threads, "threads per block")->check(CLI::Range(32u, 1024u));
  app.add_flag("--json", json, "print one JSON object");
  if (const auto code = parse_or_exit(app, argc, argv, std::cout, std::cerr)) return *code;
  cfg.mode = mode == "single"    ? sink_transfer::single
             : mode == "managed" ? sink_transfer::managed
                                 : sink_transfer::double_buffer;
  return run_tool("xeflow-sink-baseline", std::cerr, [&] {
    const sink_baseline_result r = run_sink_baseline(cfg);
    if (json) {
      std::cout << to_json(r).dump() << "\n";
      return;
    }
    std::cout << r.frames << " frames, " << r.bytes_to_device << " bytes to the device, mode " << r.mode
              << ": " << r.seconds << " s, " << static_cast<double>(r.bytes_to_device) / r.seconds / 1e9
              << " GB/s\n";
    for (const auto& [name, value] : r.sink_counters) std::cout << "  " << name << " " << value << "\n";
  });
}
