// xeflow-baseline's host side without a GPU: the command line (per-stage --fma-iterations, the concurrent
// mode, exit codes), the per-stage operator chain the expected checksums replay, and the JSON record of
// what ran. With a GPU, every mode also streams per-stage FMA batches verified (skipped visibly without).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/baselines/baselines.hpp"
#include "apps/baselines/command_line.hpp"
#include "apps/baselines/host_side.hpp"
#include "apps/baselines/report.hpp"
#include "framework/plan/device_probe.hpp"
#include "operators/frame_checksum.hpp"
#include "tests/support/subprocess.hpp"

using namespace xf::baselines;

namespace {

struct parsed {
  command_line cl;
  std::string out, err;
};

/// parse_command_line over `args` (the program name added), capturing what it prints.
parsed parse(std::vector<std::string> args) {
  args.insert(args.begin(), "xeflow-baseline");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  parsed p{parse_command_line(static_cast<int>(argv.size()), argv.data(), out, err), "", ""};
  p.out = out.str();
  p.err = err.str();
  return p;
}

/// A small fma configuration (u32, a = 3, b = 1) with the given per-stage counts.
config fma_config(shape s, std::vector<std::uint32_t> iterations) {
  config cfg;
  cfg.shape = s;
  cfg.stages = static_cast<std::uint32_t>(iterations.size());
  cfg.op.kind = op_kind::fma;
  cfg.op.fma.a = 3;
  cfg.op.fma.b = 1;
  cfg.fma_iterations = std::move(iterations);
  cfg.batch_bytes = 515 * 4;  // odd element count
  cfg.total_bytes = 4 * cfg.batch_bytes;
  cfg.dataset_frames = 2;
  return cfg;
}

std::vector<std::uint32_t> chain_iterations(const config& cfg) {
  std::vector<std::uint32_t> v;
  for (const op_config& op : host_chain(cfg)) v.push_back(op.fma.iterations);
  return v;
}

/// The checksum of dataset batch p after `total` plain steps v = 3v + 1 (mod 2^32), written out here.
std::uint64_t plain_checksum(const config& cfg, std::uint64_t p, std::uint32_t total) {
  const std::uint64_t count = batch_elements(cfg);
  std::vector<std::uint32_t> v(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    auto x = static_cast<std::uint32_t>(static_cast<std::uint64_t>(cfg.seed) + p * count + i);
    for (std::uint32_t k = 0; k < total; ++k) x = x * 3u + 1u;
    v[i] = x;
  }
  return xf::frame_checksum(v.data(), cfg.batch_bytes);
}

std::vector<std::uint64_t> expected_of(const config& cfg) {
  const std::uint32_t frames = dataset_frames(cfg);
  std::vector<std::uint32_t> dataset(std::uint64_t{frames} * batch_elements(cfg));
  fill_dataset(cfg, dataset.data(), frames);
  return expected_checksums(cfg, dataset.data(), frames);
}

const xf::device_status& gpu() {
  static const xf::device_status status = xf::probe_device();
  return status;
}
bool no_gpu() {
  return !gpu().usable;
}

std::string baseline_binary() {
  const char* path = std::getenv("XF_BASELINE");
  REQUIRE_MESSAGE(path != nullptr,
                  "XF_BASELINE (the xeflow-baseline binary) is not set; run through meson test");
  return path;
}

}  // namespace

TEST_CASE("baselines.fma_iterations_parse") {
  CHECK(parse_fma_iterations("4,64") == std::vector<std::uint32_t>{4, 64});
  CHECK(parse_fma_iterations("16") == std::vector<std::uint32_t>{16});
  CHECK(parse_fma_iterations(" 4, 64 ,1") == std::vector<std::uint32_t>{4, 64, 1});
  // Zero and out-of-range counts parse: their range is validate's, which names the stage.
  CHECK(parse_fma_iterations("0,5000") == std::vector<std::uint32_t>{0, 5000});
  for (const char* bad :
       {"", ",", "4,", ",4", "4,,64", "x", "4;64", "-4", "+4", "4.5", "0x10", "99999999999"}) {
    INFO("--fma-iterations '" << bad << "'");
    try {
      parse_fma_iterations(bad);
      FAIL("accepted");
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()).find("--fma-iterations") != std::string::npos);
    }
  }
}

TEST_CASE("baselines.command_line_takes_per_stage_fma_iterations") {
  SUBCASE("one count per stage; --op fma implied") {
    const auto p = parse({"--mode", "concurrent", "--stages", "2", "--fma-iterations", "4,64"});
    REQUIRE_MESSAGE(!p.cl.exit_code, p.err);
    CHECK(p.cl.cfg.mode == mode::concurrent);
    CHECK(p.cl.cfg.op.kind == op_kind::fma);
    CHECK(p.cl.cfg.fma_iterations == std::vector<std::uint32_t>{4, 64});
    const config r = resolve(p.cl.cfg);
    CHECK(r.streams == 8);
    CHECK(stage_op(r, 0).fma.iterations == 4);
    CHECK(stage_op(r, 1).fma.iterations == 64);
  }
  SUBCASE("one count: every stage, as --iterations") {
    const auto p = parse({"--mode", "ckc-hq", "--stages", "3", "--op", "fma", "--fma-iterations", "32"});
    REQUIRE_MESSAGE(!p.cl.exit_code, p.err);
    const config r = resolve(p.cl.cfg);
    CHECK(r.fma_iterations == std::vector<std::uint32_t>{32, 32, 32});
    CHECK(r.op.fma.iterations == 32);
  }
  SUBCASE("without the option every stage runs --iterations") {
    const auto p =
        parse({"--mode", "graph", "--shape", "gc", "--stages", "2", "--op", "fma", "--iterations", "9"});
    REQUIRE_MESSAGE(!p.cl.exit_code, p.err);
    CHECK(p.cl.cfg.fma_iterations.empty());
    CHECK(resolve(p.cl.cfg).fma_iterations == std::vector<std::uint32_t>{9, 9});
  }
  SUBCASE("scale keeps no per-stage counts") {
    const auto p = parse({"--mode", "ckc-pinned", "--stages", "2"});
    REQUIRE_MESSAGE(!p.cl.exit_code, p.err);
    CHECK(resolve(p.cl.cfg).fma_iterations.empty());
  }
}

TEST_CASE("baselines.command_line_rejects_bad_fma_iterations_with_exit_2") {
  const std::vector<std::vector<std::string>> bad = {
      {"--stages", "2", "--fma-iterations", "4,64,8"},  // more values than stages
      {"--stages", "3", "--fma-iterations", "4,64"},    // fewer
      {"--stages", "2", "--fma-iterations", "4,0"},     // zero
      {"--stages", "2", "--fma-iterations", "4,abc"},   // not a number
      {"--stages", "2", "--fma-iterations", "4,4097"},  // above fma_op::max_iterations
      {"--stages", "2", "--fma-iterations", ""},
      {"--stages", "2", "--op", "scale", "--fma-iterations", "4,64"},
      {"--stages", "2", "--iterations", "8", "--fma-iterations", "4,64"},  // one or the other
  };
  for (auto args : bad) {
    args.insert(args.begin(), {"--mode", "ckc-hq"});
    std::string line;
    for (const auto& a : args) line += a + " ";
    INFO(line);
    const auto p = parse(args);
    CHECK(p.cl.exit_code == exit_usage);
    CHECK(p.err.find("--fma-iterations") != std::string::npos);
  }
}

TEST_CASE("baselines.concurrent_mode_runs_shape_g_only") {
  const auto gc = parse({"--mode", "concurrent", "--shape", "gc", "--stages", "2"});
  CHECK(gc.cl.exit_code == exit_usage);
  CHECK(gc.err.find("concurrent runs --shape g only") != std::string::npos);
  config cfg;
  cfg.mode = mode::concurrent;
  cfg.shape = shape::gc;
  CHECK_THROWS_AS(run_baseline(cfg), std::invalid_argument);  // refused before any GPU is touched

  const auto g = parse({"--mode", "concurrent", "--stages", "3", "--streams", "2"});
  REQUIRE_MESSAGE(!g.cl.exit_code, g.err);
  CHECK(name_of(g.cl.cfg.mode) == "concurrent");
  CHECK(resolve(g.cl.cfg).streams == 2);
}

TEST_CASE("baselines.help_shows_the_fma_iterations_option_and_the_concurrent_mode") {
  const auto p = parse({"--help"});
  CHECK(p.cl.exit_code == 0);
  CHECK(p.out.find("--fma-iterations") != std::string::npos);
  CHECK(p.out.find("concurrent") != std::string::npos);
}

TEST_CASE("baselines.host_chain_runs_each_stage_with_its_own_parameters") {
  CHECK(chain_iterations(fma_config(shape::g, {4, 64})) == std::vector<std::uint32_t>{4, 64});
  // gc: the CPU stage after GPU stage k runs stage k's count; the last CPU stage only verifies.
  CHECK(chain_iterations(fma_config(shape::gc, {4, 64, 1})) == std::vector<std::uint32_t>{4, 4, 64, 64, 1});
  CHECK(chain_iterations(fma_config(shape::gc, {7})) == std::vector<std::uint32_t>{7});
  config one = fma_config(shape::g, {5});
  one.stages = 3;  // one value for three stages
  CHECK(chain_iterations(one) == std::vector<std::uint32_t>{5, 5, 5});
  config none = fma_config(shape::gc, {});
  none.stages = 2;
  none.op.fma.iterations = 6;
  CHECK(chain_iterations(none) == std::vector<std::uint32_t>{6, 6, 6});
  // Resolving spells the counts out without changing the chain.
  const config per_stage = fma_config(shape::gc, {4, 64, 1});
  CHECK(chain_iterations(resolve(per_stage)) == chain_iterations(per_stage));
}

TEST_CASE("baselines.expected_checksums_replay_the_per_stage_chain") {
  // g: 4 then 64 steps of the same map; gc adds a CPU stage with 4 steps after the first GPU stage.
  const config g = fma_config(shape::g, {4, 64});
  const config gc = fma_config(shape::gc, {4, 64});
  const auto g_sums = expected_of(g), gc_sums = expected_of(gc);
  REQUIRE(g_sums.size() == 2);
  REQUIRE(gc_sums.size() == 2);
  for (std::uint64_t p = 0; p < 2; ++p) {
    CHECK(g_sums[p] == plain_checksum(g, p, 4 + 64));
    CHECK(gc_sums[p] == plain_checksum(gc, p, 4 + 4 + 64));
  }
  // The order of the stages matters in gc (the CPU stage repeats the first), and the counts at all in g.
  CHECK(expected_of(fma_config(shape::gc, {64, 4}))[0] == plain_checksum(gc, 0, 64 + 64 + 4));
  CHECK(expected_of(fma_config(shape::g, {64, 64}))[0] != g_sums[0]);
}

TEST_CASE("baselines.self_check_agrees") {
  std::ostringstream out;
  CHECK_MESSAGE(run_self_check(out) == 0, out.str());
}

TEST_CASE("baselines.json_records_each_stage_parameters") {
  result r;
  r.cfg = resolve(fma_config(shape::g, {4, 64}));
  auto doc = to_json(r);
  REQUIRE(doc["stage_params"].size() == 2);
  CHECK(doc["stage_params"][0]["iterations"] == 4);
  CHECK(doc["stage_params"][1]["iterations"] == 64);
  CHECK(doc["stage_params"][1]["a"] == 3.0);
  CHECK_FALSE(doc["op_params"].contains("iterations"));  // they differ: no shared count
  CHECK(doc["op_params"]["b"] == 1.0);

  r.cfg = resolve(fma_config(shape::g, {8, 8}));
  doc = to_json(r);
  CHECK(doc["op_params"]["iterations"] == 8);
  CHECK(doc["stage_params"][1]["iterations"] == 8);

  config scale;
  scale.stages = 2;
  r.cfg = resolve(scale);
  doc = to_json(r);
  REQUIRE(doc["stage_params"].size() == 2);
  CHECK(doc["stage_params"][0]["factor"] == doc["op_params"]["factor"]);
}

TEST_CASE("baselines.bad_option_exits_2_and_no_gpu_fails_cleanly") {
  using namespace std::chrono_literals;
  const std::string bin = baseline_binary();
  const auto bad =
      xf::test::run_process({bin, "--mode", "concurrent", "--stages", "2", "--fma-iterations", "4,0"}, 30s);
  REQUIRE_FALSE(bad.timed_out);
  CHECK(bad.exit_code == exit_usage);
  CHECK(bad.err.find("--fma-iterations") != std::string::npos);
  if (!no_gpu()) return;  // the run itself is the GPU case below
  const auto run = xf::test::run_process(
      {bin, "--mode", "concurrent", "--stages", "2", "--fma-iterations", "4,64", "--total-bytes", "1MiB"},
      30s);
  REQUIRE_FALSE(run.timed_out);
  CHECK(run.exit_code == exit_failed);
  CHECK(run.err.find("no usable CUDA device") != std::string::npos);
}

TEST_CASE("baselines.every_mode_verifies_per_stage_fma_on_the_gpu" * doctest::skip(no_gpu())) {
  using namespace std::chrono_literals;
  MESSAGE("GPU: " << gpu().description);
  const std::string bin = baseline_binary();
  struct run_case {
    std::string mode, shape, iterations;
  };
  std::vector<run_case> cases;
  for (const char* m : {"ckc-pageable", "ckc-pinned", "ckc-hq", "koum", "graph", "concurrent"}) {
    for (const char* s : {"g", "gc"}) {
      if (std::string(m) == "concurrent" && std::string(s) == "gc") continue;
      cases.push_back({m, s, "4,64"});
    }
  }
  cases.push_back({"concurrent", "g", "64,4,16"});
  cases.push_back({"graph", "gc", "1,33,4"});
  for (const auto& c : cases) {
    const auto stages = std::to_string(1 + std::count(c.iterations.begin(), c.iterations.end(), ','));
    const std::vector<std::string> args{
        bin,    "--mode",           c.mode,       "--shape",       c.shape, "--stages",
        stages, "--fma-iterations", c.iterations, "--a",           "3",     "--b",
        "1",    "--batch-bytes",    "64KiB",      "--total-bytes", "8MiB",  "--json"};
    INFO(c.mode << " " << c.shape << " " << c.iterations);
    const auto r = xf::test::run_process(args, 120s);
    INFO("stderr: " << r.err);
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 0);
    if (r.exit_code != 0) continue;
    const auto doc = nlohmann::json::parse(r.out);
    CHECK(doc["mismatches"] == 0);
    CHECK(doc["mode"] == c.mode);
    REQUIRE(doc["stage_params"].size() == std::stoul(stages));
    CHECK(doc["stage_params"][0]["iterations"] == std::stoul(c.iterations.substr(0, c.iterations.find(','))));
  }
}
