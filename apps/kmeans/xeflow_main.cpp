// xeflow-kmeans: K-means (Lloyd's algorithm) over a particle file, each assignment pass streamed through
// xeflow (on the GPU when there is one) and the centres moved on the CPU; the reference's results exactly.
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "apps/dataset_support/tool_cli.hpp"
#include "apps/kmeans/xeflow_kmeans.hpp"
#include "framework/runtime/logging.hpp"

int main(int argc, char** argv) {
  using namespace xf::apps;
  kmeans::xeflow_options opt;
  std::string path, frame_size = "64KiB";
  bool json = false;
  int verbose = 0;
  CLI::App app{
      "xeflow-kmeans: K-means (Lloyd's algorithm, a fixed number of iterations, the first K particles as "
      "initial centres) over a particle file from xeflow-gen-kmeans. Each assignment pass is an xeflow run "
      "(prefetch_source -> kmeans_assign on the GPU, or on the host executor without one or with --host -> "
      "prefetch_writeback into the file); the CPU moves the centres. Centres, ids and digest are those of "
      "xeflow-kmeans-cpu with the same --clusters and --iterations, for any --threads."};
  app.option_defaults()->always_capture_default();
  app.add_option("file", path, "particle file (read and written in place)")->required();
  app.add_option("--clusters", opt.lloyd.clusters, "K (kmeans_assign takes at most 32)")
      ->check(CLI::Range(1u, 1u << 16));
  app.add_option("--iterations", opt.lloyd.iterations, "assignment + update steps")
      ->check(CLI::Range(1u, 1u << 20));
  add_threads_option(app, opt.lloyd.threads)
      ->description(
          "threads of each of the prefetch source, the write-back and the centre update (default: "
          "the hardware's threads)");
  app.add_flag("--host", opt.force_host, "assign on the host executor even when a GPU is usable");
  app.add_flag("--per-iteration", opt.per_iteration,
               "one xeflow run per iteration, the update after it (default: every iteration in one run, the "
               "centres a shared object the update publishes while the next pass streams)");
  app.add_option("--frame-size", frame_size,
                 "frame size of the topics (a multiple of 4 KiB): frame_size / 12 particles per frame");
  app.add_flag("--json", json,
               "print one JSON object (centres, digest, per-iteration times, changed particles)");
  app.add_flag("-v,--verbose", verbose, "log the executor and plan of each pass (-vv: debug)");
  if (const auto code = parse_or_exit(app, argc, argv, std::cout, std::cerr)) return *code;
  xf::configure_logging(verbose - 1);  // warnings only unless asked: one pass's plan per iteration

  return run_tool("xeflow-kmeans", std::cerr, [&] {
    opt.frame_bytes = parse_byte_size("--frame-size", frame_size);
    kmeans::xeflow_result r;
    try {
      r = kmeans::run_xeflow(path, opt);
    } catch (const kmeans::wedged_device_error& e) {
      // Returning would tear down the CUDA context, which waits for the hung kernel: end here.
      std::cerr << "xeflow-kmeans: error: " << e.what() << "\n";
      std::fflush(nullptr);
      std::_Exit(exit_failed);
    }
    if (json) {
      std::cout << kmeans::to_json(r, opt).dump() << "\n";
      return;
    }
    for (std::size_t i = 0; i < r.iterations.size(); ++i) {
      const kmeans::iteration_stats& it = r.iterations[i];
      if (r.one_run)
        std::cout << "iteration " << i + 1 << ": " << it.assign_seconds
                  << " s (assignment and update, in the run), " << it.changed << " changed\n";
      else
        std::cout << "iteration " << i + 1 << ": assignment " << it.assign_seconds << " s (stream "
                  << it.stream_seconds << " s), update " << it.update_seconds << " s, " << it.changed
                  << " changed\n";
    }
    kmeans::print_result(std::cout, r.lloyd,
                         std::to_string(r.lloyd.iterations) + " passes, " + std::to_string(r.lloyd.threads) +
                             " threads, assigned on " + r.executor +
                             (r.one_run ? ", in one run" : ", one run per iteration"));
  });
}
