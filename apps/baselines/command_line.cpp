// xeflow-baseline's options (CLI11), their help, and the checks that turn them into a config.
#include "apps/baselines/command_line.hpp"

#include <CLI/CLI.hpp>
#include <charconv>
#include <map>
#include <ostream>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include "apps/baselines/host_side.hpp"
#include "framework/core/units.hpp"

namespace xf::baselines {
namespace {

template <class E>
E parse_choice(const std::map<std::string, E>& choices, const std::string& text) {
  return choices.at(text);  // CLI::IsMember already admitted only the keys
}

std::uint64_t parse_byte_option(const char* option, const std::string& text) {
  if (const auto bytes = xf::parse_bytes(text)) return *bytes;
  throw std::invalid_argument(std::string(option) + " '" + text + "': " + xf::bytes_syntax_problem(text));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

std::vector<std::uint32_t> parse_fma_iterations(const std::string& text) {
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument("--fma-iterations '" + text + "': " + why +
                                " (give one count for every GPU stage, or one per stage: 4,64)");
  };
  std::vector<std::uint32_t> counts;
  std::string_view rest = text;
  for (;;) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    const std::string position = "value " + std::to_string(counts.size() + 1);
    if (item.empty()) fail(position + " is empty");
    std::uint32_t v = 0;
    const auto [end, err] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (err == std::errc::result_out_of_range)
      fail(position + " '" + std::string(item) + "' is out of range");
    if (err != std::errc() || end != item.data() + item.size())
      fail(position + " '" + std::string(item) + "' is not a whole number");
    counts.push_back(v);
    if (comma == std::string_view::npos) return counts;
    rest.remove_prefix(comma + 1);
  }
}

command_line parse_command_line(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  command_line cl;
  config& cfg = cl.cfg;
  std::string mode_name, shape_name = "g", op_name = "scale", verify_name = "checksum";
  std::string batch_text = "64KiB", total_text = "4GiB", fma_iterations_text;

  const std::map<std::string, mode> modes = {{"ckc-pageable", mode::ckc_pageable},
                                             {"ckc-pinned", mode::ckc_pinned},
                                             {"ckc-hq", mode::ckc_hq},
                                             {"koum", mode::koum},
                                             {"graph", mode::graph},
                                             {"concurrent", mode::concurrent}};
  const std::map<std::string, shape> shapes = {{"g", shape::g}, {"gc", shape::gc}};
  const std::map<std::string, op_kind> ops = {{"scale", op_kind::scale},
                                              {"fma", op_kind::fma},
                                              {"raid6", op_kind::raid6},
                                              {"aes-ecb", op_kind::aes_ecb},
                                              {"aes-ctr", op_kind::aes_ctr}};
  const std::map<std::string, verify_kind> verifies = {{"checksum", verify_kind::checksum},
                                                       {"none", verify_kind::none}};

  CLI::App app{
      "xeflow-baseline: streams a dataset CPU->GPU->CPU the conventional ways (copy-kernel-copy, Hyper-Q "
      "streams, unified memory, CUDA graphs, concurrent kernels) with xeflow's operators, data and checksum "
      "verification, and reports throughput and per-batch latency."};
  app.option_defaults()->always_capture_default();
  app.add_option(
         "--mode", mode_name,
         "ckc-pageable | ckc-pinned | ckc-hq (S streams) | koum (managed memory) | graph (S streams) | "
         "concurrent (shape g; S buffer sets, GPU stage k of every batch on stage k's own stream, "
         "ordered by events)")
      ->check(CLI::IsMember(modes));
  app.add_option("--streams", cfg.streams,
                 "buffer sets / streams in flight (default: 4 for ckc-hq, 8 for graph and concurrent, 1 for "
                 "koum; ckc-pageable and ckc-pinned use 1)")
      ->check(CLI::Range(1u, max_streams))
      ->default_str("mode default");
  app.add_option("--shape", shape_name, "g = C(G)nC (n kernels between one H2D and one D2H); gc = C(GC)n")
      ->check(CLI::IsMember(shapes));
  app.add_option("--stages", cfg.stages, "n, GPU stages per batch")->check(CLI::Range(1u, max_stages));
  CLI::Option* op_option =
      app.add_option(
             "--op", op_name,
             "operator of every stage: scale or fma (u32 elements); raid6 (P and Q of a stripe of --k "
             "blocks), aes-ecb or aes-ctr (AES-128, the FIPS-197 example key): bytes, one stage")
          ->check(CLI::IsMember(ops));
  app.add_option("--factor", cfg.op.scale.factor, "scale: multiplier (truncated to an integer for u32)");
  CLI::Option* iterations_option =
      app.add_option("--iterations", cfg.op.fma.iterations, "fma: multiply-adds per element, every stage")
          ->check(CLI::Range(fma_op::min_iterations, fma_op::max_iterations));
  app.add_option("--fma-iterations", fma_iterations_text,
                 "fma: multiply-adds per element of each GPU stage, comma-separated, one per stage (4,64 for "
                 "--stages 2) or one for all; " +
                     std::to_string(fma_op::min_iterations) + ".." + std::to_string(fma_op::max_iterations) +
                     " each. Implies --op fma; in gc the CPU stage after GPU stage k runs stage k's count")
      ->excludes(iterations_option);
  app.add_option("--k", cfg.op.raid6.k, "raid6: data blocks a batch (one stripe) holds, 2..255");
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
  app.add_option("--verify-threads", cfg.verify_threads,
                 "worker threads verifying output batches; 0 = on the issuing thread (modes with one buffer "
                 "set always verify there)");
  app.add_option("--cpu-stage-threads", cfg.cpu_stage_threads,
                 "worker threads running gc's CPU stages; 0 = on the issuing thread");
  app.add_option("--warmup-batches", cfg.warmup_batches,
                 "untimed batches streamed first (default: max(4, 2 x streams))")
      ->default_str("mode default");
  app.add_option("--device", cfg.device, "CUDA device ordinal");
  app.add_flag("--json", cl.json, "print one JSON object instead of the table");
  app.add_flag("--self-check", cl.self_check,
               "check the host-side code (dataset, CPU stage, expected checksums, verification) against an "
               "independent computation, without a GPU, and exit");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e, out, err);
    cl.exit_code = code == 0 ? 0 : exit_usage;
    return cl;
  }
  if (cl.self_check) return cl;

  try {
    if (mode_name.empty()) throw std::invalid_argument("--mode is required (see --help)");
    cfg.mode = parse_choice(modes, mode_name);
    cfg.shape = parse_choice(shapes, shape_name);
    cfg.op.kind = parse_choice(ops, op_name);
    if (is_encoding(cfg.op.kind)) cfg.element = element_type::u8;
    cfg.verify = parse_choice(verifies, verify_name);
    cfg.batch_bytes = parse_byte_option("--batch-bytes", batch_text);
    cfg.total_bytes = parse_byte_option("--total-bytes", total_text);
    if (!fma_iterations_text.empty() || app.count("--fma-iterations") > 0) {
      cfg.fma_iterations = parse_fma_iterations(fma_iterations_text);
      if (op_option->count() == 0) cfg.op.kind = op_kind::fma;  // an explicit --op scale is validate's error
    }
    validate(cfg);
  } catch (const std::exception& e) {
    err << "xeflow-baseline: error: " << e.what() << "\n";
    cl.exit_code = exit_usage;
  }
  return cl;
}

}  // namespace xf::baselines
