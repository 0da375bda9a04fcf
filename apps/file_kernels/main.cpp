// xeflow-file-kernels: the end-to-end file benchmark — a PolyBench-style kernel (conv2d, gesummv, mvt,
// atax, bicg) over the float32 matrices of a file, its input read through xeflow's file cache by the
// kernel's own blocks (--input gpufs) or by the CPU I/O baseline's threads (--input cpu-io); prints seconds
// and input GB/s as a line or JSON, and checks the outputs against the CPU reference computed from the same
// file. --generate writes the file.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "apps/file_kernels/file_kernels.hpp"
#include "apps/file_kernels/kernel_spec.hpp"
#include "apps/file_kernels/matrix_file.hpp"
#include "apps/file_kernels/reference.hpp"
#include "framework/core/errors.hpp"
#include "framework/core/units.hpp"

namespace {

constexpr const char* tool = "xeflow-file-kernels";
constexpr int exit_failed = 1;
constexpr int exit_usage = 2;

/// `text` as bytes with units (0 only where `zero_ok`), or exits with the option named.
std::uint64_t bytes_of(const std::string& option, const std::string& text, bool zero_ok = false) {
  const auto bytes = xf::parse_bytes(text);
  if (!bytes || (*bytes == 0 && !zero_ok)) {
    std::cerr << tool << ": error: " << option << ": a size with units (4KiB, 1MiB), not '" << text << "'\n";
    std::exit(exit_usage);
  }
  return *bytes;
}

unsigned hardware_threads() {
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

int main(int argc, char** argv) {
  using namespace xf::file_kernels;
  std::string kernel_name, input = "gpufs", request = "1MiB", cache_size = "2GiB", page = "4KiB",
                           readahead = "64KiB";
  std::string mode = "adaptive", replacement = "lra", max_request = "256KiB", slab = "256MiB",
              direct = "auto", order = "blocked", io_chunk = "1MiB";
  run_config c;
  std::uint64_t rows = 0, cols = 0, seed = 1;
  double tolerance = 1e-5;
  bool generate = false, json = false, no_verify = false;
  std::optional<std::uint64_t> perturb;
  CLI::App app{
      "Runs a PolyBench-style kernel over the float32 matrices of a file, its input read on the GPU through "
      "xeflow's file cache (gpufs) or by host pread threads + cudaMemcpyAsync (cpu-io), and checks it "
      "against a CPU reference"};
  std::string kernel_help;
  std::vector<std::string> kernel_names;
  for (const kernel_spec& s : kernel_specs) {
    kernel_help += (kernel_help.empty() ? "" : "; ") + std::string(s.name) + ": " + std::string(s.formula);
    kernel_names.emplace_back(s.name);
  }
  app.add_option("kernel", kernel_name, kernel_help)->required()->check(CLI::IsMember(kernel_names));
  app.add_option("file", c.path,
                 "the input file: the kernel's matrices (gesummv: A then B), float32, row-major")
      ->required();
  app.add_flag("--generate", generate, "write the file (deterministic in --seed, --rows, --cols) and exit");
  app.add_option("--rows", rows, "rows of each matrix (default: 32768; gesummv 16384 — a 4 GiB file)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 31));
  app.add_option("--cols", cols, "columns of each matrix (default: 32768)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 31));
  app.add_option("--seed", seed, "the seed of the matrices and vectors");
  app.add_option("--input", input,
                 "gpufs: the kernel's blocks read the file through xeflow's file cache; cpu-io: "
                 "host pread threads + cudaMemcpyAsync, the kernel after each slab")
      ->check(CLI::IsMember({"gpufs", "cpu-io"}));
  CLI::Option* io_threads =
      app.add_option("--io-threads", c.io_threads,
                     "host I/O threads (gpufs: the cache's, by default one per hardware "
                     "thread up to 16; cpu-io: pread threads, by default 4)")
          ->check(CLI::Range(1u, 256u));
  app.add_option(
      "--request", request,
      "gpufs: bytes of whole rows a block reads at a time; cpu-io: bytes per pread and copy (4KiB multiple)");
  app.add_option("--blocks", c.blocks, "blocks of the kernel (default: 2 per SM)")
      ->check(CLI::Range(1u, 65535u));
  app.add_option("--threads", c.threads, "threads a block (a multiple of 32; default: 1024)")
      ->check(CLI::Range(32u, 1024u));
  app.add_option("--cache-size", cache_size, "gpufs: file cache bytes (device memory)");
  app.add_option("--page", page, "gpufs: cache page size, 4KiB to 64KiB");
  app.add_option("--readahead", readahead, "gpufs: the most a block reads ahead (0 = none)");
  app.add_option("--readahead-mode", mode, "gpufs: adaptive, on or off")
      ->check(CLI::IsMember({"adaptive", "on", "off"}));
  app.add_option("--replacement", replacement, "gpufs: lra (per-block queues) or global")
      ->check(CLI::IsMember({"lra", "global"}));
  app.add_option("--io-slots", c.cache.io_slots_per_block, "gpufs: requests a block may have in flight")
      ->check(CLI::Range(1u, 32u));
  app.add_option("--max-request", max_request, "gpufs: the longest request to the I/O threads");
  app.add_option("--io-chunk", io_chunk,
                 "gpufs: the longest pread of an I/O thread; a longer request is split among the threads "
                 "(a multiple of 4KiB)");
  app.add_option(
         "--tile-order", order,
         "gpufs: blocked (each block its own band of rows) or interleaved (block b takes tiles b, b + "
         "blocks, …: the reads in flight cover one stretch of the file, which a disk may serve faster)")
      ->check(CLI::IsMember({"blocked", "interleaved"}));
  app.add_option("--buffers", c.buffers, "cpu-io: pinned buffers per thread")->check(CLI::Range(1u, 64u));
  app.add_option("--slab", slab, "cpu-io: bytes read before the kernel runs on them");
  app.add_option("--direct", direct, "O_DIRECT: auto (where the filesystem allows), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  app.add_option(
         "--tolerance", tolerance,
         "an output passes where |output - reference| <= tolerance x the sum of its terms' magnitudes")
      ->check(CLI::Range(0.0, 1.0));
  app.add_flag("--no-verify", no_verify, "skip the check against the CPU reference");
  app.add_flag("--json", json, "print the result as JSON");
  app.add_option(
         "--perturb-output", perturb,
         "test seam: add 1 to element I of the kernel's last output before the check (which must then fail)")
      ->group("");
  CLI11_PARSE(app, argc, argv);

  const kernel_spec& spec = spec_of(*parse_kernel(kernel_name));
  c.kind = spec.kind;
  c.shape = default_shape(spec);
  if (rows != 0) c.shape.rows = rows;
  if (cols != 0) c.shape.cols = cols;
  if (c.shape.rows * c.shape.cols > (std::uint64_t{1} << 40)) {
    std::cerr << tool << ": error: --rows x --cols: at most 2^40 elements a matrix\n";
    return exit_usage;
  }

  if (generate) {
    try {
      const std::uint64_t bytes = generate_matrix_file(c.path, spec, c.shape, seed, hardware_threads());
      if (json)
        std::cout << nlohmann::ordered_json{{"kernel", spec.name},
                                            {"file", c.path},
                                            {"rows", c.shape.rows},
                                            {"cols", c.shape.cols},
                                            {"matrices", spec.matrices},
                                            {"seed", seed},
                                            {"bytes", bytes}}
                         .dump()
                  << std::endl;
      else
        std::printf("%s: wrote %u matrix(es) of %llu x %llu float32 (%llu bytes) for %s\n", c.path.c_str(),
                    spec.matrices, static_cast<unsigned long long>(c.shape.rows),
                    static_cast<unsigned long long>(c.shape.cols), static_cast<unsigned long long>(bytes),
                    std::string(spec.name).c_str());
      return 0;
    } catch (const std::exception& e) {
      std::cerr << tool << ": error: " << e.what() << "\n";
      return exit_failed;
    }
  }

  c.input = input == "cpu-io" ? input_mode::cpu_io : input_mode::gpufs;
  c.request = bytes_of("--request", request);
  if (c.input == input_mode::cpu_io && c.request % 4096 != 0) {
    std::cerr << tool << ": error: --request: a multiple of 4KiB with --input cpu-io, not '" << request
              << "'\n";
    return exit_usage;
  }
  c.slab = bytes_of("--slab", slab);
  c.cache.size = bytes_of("--cache-size", cache_size);
  c.cache.page_bytes = static_cast<std::uint32_t>(bytes_of("--page", page));
  c.cache.readahead = bytes_of("--readahead", readahead, true);
  c.cache.max_request = bytes_of("--max-request", max_request);
  c.cache.io_chunk = bytes_of("--io-chunk", io_chunk);
  if (c.cache.io_chunk % 4096 != 0) {
    std::cerr << tool << ": error: --io-chunk: a multiple of 4KiB, not '" << io_chunk << "'\n";
    return exit_usage;
  }
  c.cache.readahead_policy = mode == "on"    ? xf::readahead_mode::on
                             : mode == "off" ? xf::readahead_mode::off
                                             : xf::readahead_mode::adaptive;
  c.cache.replacement = replacement == "global" ? xf::page_replacement::global : xf::page_replacement::lra;
  c.order = order == "interleaved" ? tile_order::interleaved : tile_order::blocked;
  c.direct = direct == "on"    ? xf::direct_io_mode::on
             : direct == "off" ? xf::direct_io_mode::off
                               : xf::direct_io_mode::automatic;
  c.cache.direct = c.direct;
  if (io_threads->count() > 0) c.cache.io_threads = c.io_threads;  // else the cache derives its count
  if (c.input == input_mode::gpufs) c.io_threads = xf::io_threads_of(c.cache);  // the count that runs
  if (perturb && *perturb >= c.shape.length(spec.outputs[spec.output_count - 1].along)) {
    std::cerr << tool << ": error: --perturb-output: " << *perturb << " is past the end of "
              << spec.outputs[spec.output_count - 1].name << "\n";
    return exit_usage;
  }

  run_result r;
  const kernel_inputs inputs = make_inputs(spec, c.shape, seed);
  try {
    check_matrix_file(c.path, spec, c.shape);  // before the GPU: a wrong path or shape fails fast
    r = c.input == input_mode::gpufs ? run_gpufs(c, inputs) : run_cpu_io(c, inputs);
  } catch (const std::invalid_argument& e) {
    std::cerr << tool << ": error: " << e.what() << "\n";
    return exit_usage;
  } catch (const xf::precondition_error& e) {
    std::cerr << tool << ": error: " << e.what() << "\n";
    return exit_usage;
  } catch (const std::exception& e) {
    std::cerr << tool << ": error: " << e.what() << "\n";
    return exit_failed;
  }
  if (perturb) r.outputs.back()[*perturb] += 1.0f;

  std::optional<check_result> check;
  std::string mismatch_text;
  if (!no_verify) {
    try {
      const matrix_file_rows file_rows(c.path, c.shape);
      check =
          check_outputs(spec, c.shape, inputs, file_rows.reader(), r.outputs, tolerance, hardware_threads());
    } catch (const std::exception& e) {
      std::cerr << tool << ": error: the CPU reference: " << e.what() << "\n";
      return exit_failed;
    }
    if (check->first) mismatch_text = describe(spec, c.shape, *check->first, tolerance);
  }
  const bool verified = check && !check->first;
  if (json) {
    nlohmann::ordered_json j{
        {"kernel", spec.name},      {"input", input},         {"device", r.device},
        {"file", c.path},           {"rows", c.shape.rows},   {"cols", c.shape.cols},
        {"bytes", r.bytes},         {"seconds", r.seconds},   {"gbps", r.gbps()},
        {"verified", verified},     {"tolerance", tolerance}, {"io_threads", c.io_threads},
        {"request", c.request},     {"blocks", r.blocks},     {"threads", c.threads},
        {"tile_rows", r.tile_rows}, {"direct", r.direct}};
    if (c.input == input_mode::gpufs) j["tile_order"] = order;
    if (check) {
      j["max_error"] = check->max_error;
      j["elements_checked"] = check->elements;
      if (check->first) j["mismatch"] = mismatch_text;
    }
    if (c.input == input_mode::gpufs) {
      nlohmann::ordered_json io = nlohmann::ordered_json::array();
      for (const auto& t : r.io)
        io.push_back(
            {{"requests", t.requests}, {"reads", t.chunks}, {"bytes", t.bytes}, {"busy_ns", t.busy_ns}});
      j.update(nlohmann::ordered_json{{"page", c.cache.page_bytes},
                                      {"readahead", c.cache.readahead},
                                      {"readahead_mode", mode},
                                      {"replacement", replacement},
                                      {"cache_size", c.cache.size},
                                      {"max_request", c.cache.max_request},
                                      {"io_chunk", c.cache.io_chunk},
                                      {"io_slots", c.cache.io_slots_per_block},
                                      {"hits", r.fetch.hits},
                                      {"misses", r.fetch.misses},
                                      {"waits", r.fetch.waits},
                                      {"requests", r.fetch.requests},
                                      {"ahead_pages", r.fetch.ahead_pages},
                                      {"ahead_hits", r.fetch.ahead_hits},
                                      {"io", io}});
    } else {
      j.update(nlohmann::ordered_json{{"buffers", c.buffers}, {"slab", c.slab}});
    }
    std::cout << j.dump() << std::endl;
  } else {
    std::printf(
        "%s: %s over %llu x %llu (%llu bytes), %s input (%u blocks x %u threads, %llu rows a tile, %u I/O "
        "threads, %s): %.3f s, %.2f GB/s%s",
        r.device.c_str(), std::string(spec.name).c_str(), static_cast<unsigned long long>(c.shape.rows),
        static_cast<unsigned long long>(c.shape.cols), static_cast<unsigned long long>(r.bytes),
        input.c_str(), r.blocks, c.threads, static_cast<unsigned long long>(r.tile_rows), c.io_threads,
        r.direct ? "O_DIRECT" : "buffered", r.seconds, r.gbps(),
        !check     ? ""
        : verified ? ", verified"
                   : ", MISMATCH");
    if (verified) std::printf(" (max error %.3g of the scale)", check->max_error);
    std::printf("\n");
  }
  if (check && check->first) {
    std::cerr << tool << ": error: " << mismatch_text << "\n";
    return exit_failed;
  }
  return 0;
}
