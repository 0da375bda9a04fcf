// xeflow-baseline: runs one conventional CPU→GPU→CPU streaming baseline (see baselines.cu) with xeflow's
// operators, data and verification, and prints throughput and per-batch latency as a table line or JSON.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "apps/baselines/baselines.hpp"
#include "apps/baselines/host_side.hpp"
#include "framework/units.hpp"

namespace {

using namespace xf::baselines;

// Exit codes: 0 ok; 1 the run failed (no GPU, CUDA error, mismatching output); 2 the command line or
// configuration cannot run (as xeflow-run does for config errors).
constexpr int exit_failed = 1;
constexpr int exit_usage = 2;

template <class E>
E parse_choice(const std::map<std::string, E>& choices, const std::string& text) {
  return choices.at(text);  // CLI::IsMember already admitted only the keys
}

std::uint64_t parse_byte_option(const char* option, const std::string& text) {
  if (const auto bytes = xf::parse_bytes(text)) return *bytes;
  throw std::invalid_argument(std::string(option) + " '" + text + "': " + xf::bytes_syntax_problem(text));
}

nlohmann::json to_json(const result& r) {
  const config& c = r.cfg;
  nlohmann::json op_params;
  if (c.op.kind == op_kind::scale) {
    op_params = {{"factor", c.op.scale.factor}};
  } else {
    op_params = {{"iterations", c.op.fma.iterations}, {"a", c.op.fma.a}, {"b", c.op.fma.b}};
  }
  return {
      {"mode", std::string(name_of(c.mode))},
      {"streams", c.streams},
      {"shape", std::string(name_of(c.shape))},
      {"stages", c.stages},
      {"op", std::string(name_of(c.op.kind))},
      {"op_params", op_params},
      {"element", std::string(xf::name_of(c.element))},
      {"batch_bytes", c.batch_bytes},
      {"total_bytes", r.streamed_bytes},
      {"requested_total_bytes", c.total_bytes},
      {"dataset_frames", r.dataset_frames},
      {"warmup_batches", c.warmup_batches},
      {"seed", c.seed},
      {"verify", std::string(name_of(c.verify))},
      {"verify_threads", c.verify_threads},
      {"cpu_stage_threads", c.cpu_stage_threads},
      {"batches", r.batches},
      {"seconds", r.seconds},
      {"gbps", r.gbps},
      {"latency_p50_us", r.latency_p50_us},
      {"latency_p99_us", r.latency_p99_us},
      {"latency_mean_us", r.latency_mean_us},
      {"latency_max_us", r.latency_max_us},
      {"mismatches", r.mismatches},
      {"device", r.device},
  };
}

void print_table(const result& r) {
  const config& c = r.cfg;
  std::printf("%-13s %7s %5s %6s %5s %10s %10s %8s %9s %8s %10s %10s %10s  %s\n", "mode", "streams", "shape",
              "stages", "op", "batch", "total", "batches", "seconds", "GB/s", "p50_us", "p99_us",
              "mismatches", "device");
  std::printf("%-13s %7u %5s %6u %5s %10s %10s %8llu %9.4f %8.3f %10.1f %10.1f %10llu  %s\n",
              std::string(name_of(c.mode)).c_str(), c.streams, std::string(name_of(c.shape)).c_str(),
              c.stages, std::string(name_of(c.op.kind)).c_str(), xf::format_bytes(c.batch_bytes).c_str(),
              xf::format_bytes(r.streamed_bytes).c_str(), static_cast<unsigned long long>(r.batches),
              r.seconds, r.gbps, r.latency_p50_us, r.latency_p99_us,
              static_cast<unsigned long long>(r.mismatches), r.device.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  config cfg;
  std::string mode_name, shape_name = "g", op_name = "scale", verify_name = "checksum";
  std::string batch_text = "64KiB", total_text = "4GiB";
  bool json = false, self_check = false;

  const std::map<std::string, mode> modes = {{"ckc-pageable", mode::ckc_pageable},
                                             {"ckc-pinned", mode::ckc_pinned},
                                             {"ckc-hq", mode::ckc_hq},
                                             {"koum", mode::koum},
                                             {"graph", mode::graph}};
  const std::map<std::string, shape> shapes = {{"g", shape::g}, {"gc", shape::gc}};
  const std::map<std::string, op_kind> ops = {{"scale", op_kind::scale}, {"fma", op_kind::fma}};
  const std::map<std::string, verify_kind> verifies = {{"checksum", verify_kind::checksum},
                                                       {"none", verify_kind::none}};

  CLI::App app{
      "xeflow-baseline: streams a dataset CPU->GPU->CPU the conventional ways (copy-kernel-copy, Hyper-Q "
      "streams, unified memory, CUDA graphs) with xeflow's operators, data and checksum verification, and "
      "reports throughput and per-batch latency."};
  app.option_defaults()->always_capture_default();
  app.add_option("--mode", mode_name,
                 "ckc-pageable | ckc-pinned | ckc-hq (S streams) | koum (managed memory) | graph (S streams)")
      ->check(CLI::IsMember(modes));
  app.add_option(
         "--streams", cfg.streams,
         "buffer sets / streams in flight (default: 4 for ckc-hq, 8 for graph, 1 for koum; ckc-pageable "
         "and ckc-pinned use 1)")
      ->check(CLI::Range(1u, max_streams))
      ->default_str("mode default");
  app.add_option("--shape", shape_name, "g = C(G)nC (n kernels between one H2D and one D2H); gc = C(GC)n")
      ->check(CLI::IsMember(shapes));
  app.add_option("--stages", cfg.stages, "n, GPU stages per batch")->check(CLI::Range(1u, max_stages));
  app.add_option("--op", op_name, "operator of every stage: scale or fma")->check(CLI::IsMember(ops));
  app.add_option("--factor", cfg.op.scale.factor, "scale: multiplier (truncated to an integer for u32)");
  app.add_option("--iterations", cfg.op.fma.iterations, "fma: multiply-adds per element")
      ->check(CLI::Range(xf::fma_op::min_iterations, xf::fma_op::max_iterations));
  app.add_option("--a", cfg.op.fma.a, "fma: multiplier of each step (truncated to an integer for u32)");
  app.add_option("--b", cfg.op.fma.b, "fma: addend of each step (truncated to an integer for u32)");
  app.add_option("--batch-bytes", batch_text, "bytes per batch (units: KiB, MiB, GiB, ...)");
  app.add_option("--total-bytes", total_text, "bytes streamed in the timed run: total / batch batches");
  app.add_option("--dataset-frames", cfg.dataset_frames,
                 "P distinct batches pre-filled before timing; batch b is dataset batch b % P")
      ->check(CLI::PositiveNumber);
  app.add_option("--seed", cfg.seed, "sequence content: element i of the stream is seed + i");
  app.add_option("--verify", verify_name, "checksum (every output batch) or none (diagnosis only)")
      ->check(CLI::IsMember(verifies));
  app.add_option(
      "--verify-threads", cfg.verify_threads,
      "worker threads verifying output batches; 0 = on the issuing thread (modes with one buffer set "
      "always verify there)");
  app.add_option("--cpu-stage-threads", cfg.cpu_stage_threads,
                 "worker threads running gc's CPU stages; 0 = on the issuing thread");
  app.add_option("--warmup-batches", cfg.warmup_batches,
                 "untimed batches streamed first (default: max(4, 2 x streams))")
      ->default_str("mode default");
  app.add_option("--device", cfg.device, "CUDA device ordinal");
  app.add_flag("--json", json, "print one JSON object instead of the table");
  app.add_flag("--self-check", self_check,
               "check the host-side code (dataset, CPU stage, expected checksums, verification) against an "
               "independent computation, without a GPU, and exit");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : exit_usage;
  }

  if (self_check) return run_self_check(std::cout);

  result r;
  try {
    if (mode_name.empty()) throw std::invalid_argument("--mode is required (see --help)");
    cfg.mode = parse_choice(modes, mode_name);
    cfg.shape = parse_choice(shapes, shape_name);
    cfg.op.kind = parse_choice(ops, op_name);
    cfg.verify = parse_choice(verifies, verify_name);
    cfg.batch_bytes = parse_byte_option("--batch-bytes", batch_text);
    cfg.total_bytes = parse_byte_option("--total-bytes", total_text);
    validate(cfg);
  } catch (const std::exception& e) {
    std::cerr << "xeflow-baseline: error: " << e.what() << "\n";
    return exit_usage;
  }

  try {
    r = run_baseline(cfg);
  } catch (const std::invalid_argument& e) {
    std::cerr << "xeflow-baseline: error: " << e.what() << "\n";
    return exit_usage;
  } catch (const std::exception& e) {
    std::cerr << "xeflow-baseline: error: " << name_of(cfg.mode) << ": " << e.what() << "\n";
    return exit_failed;
  }

  if (json) {
    std::cout << to_json(r).dump() << std::endl;
  } else {
    print_table(r);
  }
  if (r.mismatches != 0) {
    std::cerr << "xeflow-baseline: error: " << r.mismatches
              << " output batch(es) did not match the expected checksum\n";
    for (const auto& report : r.mismatch_reports) std::cerr << "  " << report << "\n";
    return exit_failed;
  }
  return 0;
}
