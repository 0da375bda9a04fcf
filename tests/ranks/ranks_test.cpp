// Ranked runs as a user starts them: `mpirun -n N xeflow-run topology.yaml` (and the faulty launcher, a
// user's own launcher with an operator that throws), host executor, over 2 and 4 ranks on one machine.
// Fan-out across ranks, chains through several, a bridge of one slot, a failure on each rank, an
// interrupt, placement errors, the ledger of a ranked run against one process's, the provenance in the
// stats and a log file per rank. On a GPU: two ranks sharing one GPU; on a machine with two: GPU stages on
// both bridged, a fan-out to both, a failed frame on either.
#include <dirent.h>
#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "framework/plan/device_probe.hpp"
#include "tests/support/graph_text.hpp"
#include "tests/support/run_checks.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/subprocess.hpp"

namespace fs = std::filesystem;
using namespace xf::test;

namespace {

std::string mpirun() {
  return env("XF_MPIRUN");
}

/// argv for `mpirun -n ranks program args...` on this machine: oversubscribed (CI has 2 cores), shared
/// memory between the ranks.
std::vector<std::string> ranked(int ranks, const std::string& program, const std::vector<std::string>& args) {
  std::vector<std::string> argv{
      mpirun(),     "-n",   std::to_string(ranks), "--oversubscribe", "--bind-to", "none", "--mca", "btl",
      "self,vader", program};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

/// Every rank's stats of a ranked run's `--stats json`.
std::vector<nlohmann::json> rank_stats(const process_result& r, int ranks) {
  const nlohmann::json doc = parse_json(r);
  REQUIRE(doc["ranks"] == ranks);
  REQUIRE(doc["per_rank"].size() == static_cast<std::size_t>(ranks));
  return doc["per_rank"].get<std::vector<nlohmann::json>>();
}

const nlohmann::json* find_operator(const std::vector<nlohmann::json>& stats, const std::string& name) {
  for (const nlohmann::json& rank : stats)
    for (const nlohmann::json& op : rank["operators"])
      if (op["name"] == name) return &op;
  return nullptr;
}

/// The run completed on every rank, and every verify sink of every rank saw frames and no anomaly.
void check_ranks_verified(const std::vector<nlohmann::json>& stats) {
  int verify_sinks = 0;
  for (std::size_t r = 0; r < stats.size(); ++r) {
    INFO("rank " << r);
    CHECK(stats[r]["status"] == "completed");
    CHECK(stats[r]["rank"] == r);
    for (const auto& op : stats[r]["operators"]) {
      if (op["class"] != "verify_sink") continue;
      ++verify_sinks;
      INFO("operator " << op["name"]);
      CHECK(op["counters"]["frames"].get<std::uint64_t>() > 0);
      for (const char* k : {"lost", "duplicated", "reordered", "corrupt"}) CHECK(op["counters"][k] == 0);
    }
  }
  CHECK(verify_sinks > 0);
}

/// Runs `topology` (removed after) over `ranks` ranks on the host executor and checks that every rank
/// completed with every verify sink clean; returns every rank's stats.
std::vector<nlohmann::json> run_verified(int ranks, const fs::path& topology) {
  const auto r =
      run_process(ranked(ranks, xeflow_run(), {topology.string(), "--host", "-q", "--stats", "json"}),
                  std::chrono::seconds(120));
  fs::remove(topology);
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  const std::vector<nlohmann::json> stats = rank_stats(r, ranks);
  check_ranks_verified(stats);
  return stats;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The processes whose parent is `parent` (mpirun's ranks).
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> children;
  for (const fs::directory_entry& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid …: comm may hold spaces, so read after its closing parenthesis.
    const std::size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) children.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return children;
}

// A source on rank 0, a GPU map (the host executor here) on rank 1, each topic read on both ranks: both
// bridges fan out to a local group and a remote one.
constexpr const char* kFanOut = R"(name: ranked_fanout
topics:
  raw: {frame_size: 64KiB, capacity: 16, element: f32}
  scaled: {frame_size: 64KiB, capacity: 8, element: f32}
operators:
  source: {class: random_source, rank: 0, threads: 2, outputs: [raw], params: {total_bytes: 16MiB, seed: 42}}
  scale: {class: scale, on: gpu, rank: 1, inputs: [raw], outputs: [scaled], params: {factor: 0.5}}
  verify_raw_here: {class: verify_sink, rank: 0, inputs: [raw]}
  verify_raw: {class: verify_sink, rank: 1, inputs: [raw]}
  verify_scaled: {class: verify_sink, rank: 0, inputs: [scaled]}
  count: {class: null_sink, rank: 1, inputs: [scaled]}
)";

}  // namespace

TEST_CASE("ranks.fan_out_across_two_ranks_delivers_what_one_process_does") {
  const fs::path topology = write_temp("fanout.yaml", kFanOut);
  const fs::path ranked_ledger = write_temp("fanout-ranked.ledger", ""),
                 one_ledger = write_temp("fanout-one.ledger", "");
  const auto r = run_process(
      ranked(2, xeflow_run(),
             {topology.string(), "--host", "-q", "--stats", "json", "--ledger", ranked_ledger.string()}),
      std::chrono::seconds(120));
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  const std::vector<nlohmann::json> stats = rank_stats(r, 2);
  check_ranks_verified(stats);
  // Each topic crossed once, every offset of it (the source's 256 frames, and the void offsets its two
  // threads closed with), the same count at both ends.
  for (const nlohmann::json& rank : stats) {
    REQUIRE(rank["bridges"].size() == 2);
    for (const nlohmann::json& b : rank["bridges"]) {
      CHECK(b["frames"].get<std::uint64_t>() >= 256);
      for (const nlohmann::json& t : rank["topics"])
        if (t["name"] == b["topic"]) CHECK(b["frames"] == t["end_offset"]);
    }
  }
  CHECK((*find_operator(stats, "count"))["frames_in"] == 256);
  // One process running the same topology (every operator, whatever its rank): the same frames at the
  // same offsets in every group.
  const auto one =
      run_process({xeflow_run(), topology.string(), "--host", "-q", "--ledger", one_ledger.string()},
                  std::chrono::seconds(120));
  CHECK(one.exit_code == 0);
  const std::string ranked_text = read_file(ranked_ledger), one_text = read_file(one_ledger);
  CHECK(std::count(ranked_text.begin(), ranked_text.end(), '\n') >= 4 * 256);
  CHECK(ranked_text == one_text);
  fs::remove(topology);
  fs::remove(ranked_ledger);
  fs::remove(one_ledger);
}

TEST_CASE("ranks.a_chain_through_four_ranks_and_back") {
  const fs::path topology = write_temp("chain4.yaml", R"(name: ranked_chain
topics:
  raw: {frame_size: 16KiB, capacity: 8, element: f32}
  scaled: {frame_size: 16KiB, capacity: 8, element: f32}
  fused: {frame_size: 16KiB, capacity: 4, element: f32}
operators:
  source: {class: sequence_source, rank: 0, outputs: [raw], params: {total_bytes: 8MiB}}
  scale: {class: scale, on: gpu, rank: 1, inputs: [raw], outputs: [scaled], params: {factor: 2}}
  fma: {class: fma, on: gpu, rank: 2, inputs: [scaled], outputs: [fused], params: {iterations: 4}}
  verify: {class: verify_sink, rank: 3, inputs: [fused]}
  back: {class: verify_sink, rank: 0, inputs: [fused]}
runtime: {ranks: {ingest: 0, last: 3}}
)");
  const std::vector<nlohmann::json> stats = run_verified(4, topology);
  CHECK((*find_operator(stats, "verify"))["frames_in"] == 512);
  CHECK((*find_operator(stats, "back"))["frames_in"] == 512);
  // fused leaves rank 2 twice: to rank 3 and back to rank 0.
  CHECK(stats[2]["bridges"].size() == 3);
}

TEST_CASE("ranks.a_bridge_of_one_slot_on_either_side") {
  const fs::path topology = write_temp("narrow.yaml", R"(name: ranked_narrow
topics:
  raw: {frame_size: 4KiB, capacity: 1}
  copied: {frame_size: 4KiB, capacity: 1}
operators:
  source: {class: sequence_source, rank: 1, outputs: [raw], params: {total_bytes: 2MiB}}
  copy: {class: scale, on: gpu, rank: 0, inputs: [raw], outputs: [copied], params: {factor: 1}}
  verify: {class: verify_sink, rank: 1, inputs: [copied]}
)");
  const std::vector<nlohmann::json> stats = run_verified(2, topology);
  CHECK((*find_operator(stats, "verify"))["frames_in"] == 512);
}

TEST_CASE("ranks.a_failure_on_any_rank_ends_every_rank_naming_the_site") {
  for (int failing : {0, 1}) {
    CAPTURE(failing);
    const std::string other = std::to_string(1 - failing);
    const fs::path topology = write_temp("faulty.yaml",
                                         R"(topics:
  t0: {frame_size: 16KiB, capacity: 8}
  t1: {frame_size: 16KiB, capacity: 8}
operators:
  source: {class: sequence_source, rank: )" + other +
                                             R"(, outputs: [t0], params: {total_bytes: 64GiB}}
  boom: {class: throw_at, rank: )" + std::to_string(failing) +
                                             R"(, inputs: [t0], outputs: [t1], params: {at: 300}}
  sink: {class: null_sink, rank: )" + other + R"(, inputs: [t1]}
)");
    const auto r = run_process(ranked(2, faulty_launcher(), {topology.string(), "--host", "-q"}),
                               std::chrono::seconds(60));
    fs::remove(topology);
    INFO(r.err);
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("rank " + std::to_string(failing) + ": operator 'boom', topic 't0', offset 300") !=
          std::string::npos);
    CHECK(r.err.find("deliberate failure") != std::string::npos);
    // A 64 GiB stream: only the failure, spread to the other rank, can have ended it this soon.
    CHECK(r.seconds < 30);
  }
}

TEST_CASE("ranks.an_interrupt_on_one_rank_drains_every_rank") {
  const fs::path topology = write_temp("endless.yaml", R"(name: ranked_endless
topics:
  raw: {frame_size: 16KiB, capacity: 8}
operators:
  source: {class: sequence_source, rank: 0, outputs: [raw], params: {total_bytes: 1TiB}}
  verify: {class: verify_sink, rank: 1, inputs: [raw]}
)");
  child_process child(ranked(2, xeflow_run(), {topology.string(), "--host", "-q", "--stats", "json"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  // The rank that runs the sink: its SIGINT reaches the source on rank 0 through the session.
  std::vector<pid_t> ranks = children_of(child.pid());
  REQUIRE(ranks.size() == 2);
  std::sort(ranks.begin(), ranks.end());
  kill(ranks.back(), SIGINT);
  const auto r = child.wait(std::chrono::seconds(60));
  fs::remove(topology);
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 130);
  const std::vector<nlohmann::json> stats = rank_stats(r, 2);
  for (const nlohmann::json& rank : stats) CHECK(rank["status"] == "interrupted");
  const nlohmann::json& verify = *find_operator(stats, "verify");
  CHECK(verify["frames_in"].get<std::uint64_t>() > 0);
  for (const char* k : {"lost", "duplicated", "reordered", "corrupt"}) CHECK(verify["counters"][k] == 0);
}

TEST_CASE("ranks.placement_problems_are_reported_once_with_their_position") {
  const fs::path topology = write_temp("too_far.yaml", R"(topics:
  t0: {frame_size: 16KiB, capacity: 8}
operators:
  source: {class: sequence_source, outputs: [t0], params: {total_bytes: 1MiB}}
  sink: {class: null_sink, rank: 2, inputs: [t0]}
)");
  const auto r =
      run_process(ranked(2, xeflow_run(), {topology.string(), "--host"}), std::chrono::seconds(60));
  INFO(r.err);
  CHECK(r.exit_code == 2);
  const std::string where = topology.string() + ":5:";
  const std::size_t first = r.err.find(where);
  REQUIRE(first != std::string::npos);
  CHECK(r.err.find(where, first + 1) == std::string::npos);  // rank 0 says it; rank 1 does not repeat it
  CHECK(r.err.find("placed on rank 2, but this run has 2 ranks") != std::string::npos);

  // Two ranks given different topologies (MPMD): refused before anything runs.
  const fs::path other = write_temp("other.yaml", kFanOut);
  std::vector<std::string> argv =
      ranked(1, xeflow_run(), {topology.string(), "--host", "--set", "operators.sink.rank=0"});
  for (const std::string& a : {std::string(":"), std::string("-n"), std::string("1"), xeflow_run(),
                               other.string(), std::string("--host")})
    argv.push_back(a);
  const auto mixed = run_process(argv, std::chrono::seconds(60));
  INFO(mixed.err);
  CHECK(mixed.exit_code == 2);
  CHECK(mixed.err.find("rank 1 loaded a different topology than rank 0") != std::string::npos);
  fs::remove(topology);
  fs::remove(other);
}

TEST_CASE("ranks.sigterm_from_mpirun_drains_every_rank") {
  // What mpirun sends its ranks on Ctrl-C: the rank that runs the source drains, and tells the other.
  const fs::path topology = write_temp("endless_term.yaml", R"(name: ranked_endless
topics:
  raw: {frame_size: 16KiB, capacity: 8}
operators:
  source: {class: sequence_source, rank: 0, outputs: [raw], params: {total_bytes: 1TiB}}
  verify: {class: verify_sink, rank: 1, inputs: [raw]}
)");
  child_process child(ranked(2, xeflow_run(), {topology.string(), "--host", "-q", "--stats", "json"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  std::vector<pid_t> ranks = children_of(child.pid());
  REQUIRE(ranks.size() == 2);
  std::sort(ranks.begin(), ranks.end());
  kill(ranks.front(), SIGTERM);
  const auto r = child.wait(std::chrono::seconds(60));
  fs::remove(topology);
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 130);
  const std::vector<nlohmann::json> stats = rank_stats(r, 2);
  for (const nlohmann::json& rank : stats) CHECK(rank["status"] == "interrupted");
  const nlohmann::json& verify = *find_operator(stats, "verify");
  for (const char* k : {"lost", "duplicated", "reordered", "corrupt"}) CHECK(verify["counters"][k] == 0);
}

TEST_CASE("ranks.validate_shows_the_placement") {
  const fs::path topology = write_temp("placed.yaml", kFanOut);
  const auto one = run_process({xeflow_run(), topology.string(), "--validate"}, std::chrono::seconds(60));
  const auto two =
      run_process(ranked(2, xeflow_run(), {topology.string(), "--validate"}), std::chrono::seconds(60));
  fs::remove(topology);
  INFO(one.out << two.out << two.err);
  CHECK(one.exit_code == 0);
  CHECK(two.exit_code == 0);
  CHECK(one.out.find("  rank 0: source verify_raw_here verify_scaled\n  rank 1: scale verify_raw count\n") !=
        std::string::npos);
  CHECK(two.out.find("6 operators, 2 ranks)") != std::string::npos);
  CHECK(two.out.find("  rank 1: scale verify_raw count") != std::string::npos);
}

TEST_CASE("ranks.plan_shows_each_ranks_part") {
  const fs::path topology = write_temp("plan.yaml", kFanOut);
  const auto r = run_process(ranked(2, xeflow_run(), {topology.string(), "--host", "--plan", "-q"}),
                             std::chrono::seconds(60));
  fs::remove(topology);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("rank 0 of 2: executor: host") != std::string::npos);
  CHECK(r.out.find("rank 1 of 2: executor: host") != std::string::npos);
  CHECK(r.out.find("topic raw: carried to rank 1") != std::string::npos);
  CHECK(r.out.find("topic scaled: carried from rank 1") != std::string::npos);
}

TEST_CASE("ranks.stats_json_gives_the_provenance_once_and_each_rank_its_machine") {
  const fs::path topology = write_temp("provenance.yaml", kFanOut);
  const auto r = run_process(ranked(2, xeflow_run(), {topology.string(), "--host", "-q", "--stats", "json"}),
                             std::chrono::seconds(120));
  fs::remove(topology);
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  const nlohmann::json doc = parse_json(r);
  CHECK(doc["schema_version"] == 1);
  const nlohmann::json& p = doc["provenance"];
  REQUIRE(p.is_object());
  for (const char* key : {"version", "commit", "build_type", "host"}) CHECK(p[key].is_string());
  CHECK(p["gpu"].is_null());
  const std::vector<nlohmann::json> stats = rank_stats(r, 2);
  check_ranks_verified(stats);
  // The build once, at the top; each rank its machine (one host here, no GPU on the host executor).
  for (const nlohmann::json& rank : stats) {
    CHECK_FALSE(rank.contains("schema_version"));
    REQUIRE(rank["provenance"].is_object());
    CHECK(rank["provenance"].size() == 3);
    CHECK(rank["provenance"]["host"] == p["host"]);
    CHECK(rank["provenance"]["gpu"].is_null());
    CHECK(rank["provenance"]["cuda_driver"] == p["cuda_driver"]);
  }
}

TEST_CASE("ranks.log_file_is_one_per_rank") {
  const fs::path topology = write_temp("logged.yaml", kFanOut);
  const scratch_dir dir;
  const std::string log = dir.file("run.log");
  const auto r = run_process(ranked(2, xeflow_run(), {topology.string(), "--host", "-v", "--log-file", log}),
                             std::chrono::seconds(120));
  fs::remove(topology);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_FALSE(fs::exists(log));
  const std::string zero = read_file(log + ".rank0"), one = read_file(log + ".rank1");
  INFO(zero << one);
  // Each rank's file holds its own operators' lines.
  CHECK(zero.find("] xeflow[rank 0]: debug: operator 'source' (random_source): 2 CPU worker threads\n") !=
        std::string::npos);
  CHECK(zero.find("operator 'scale'") == std::string::npos);
  CHECK(one.find("] xeflow[rank 1]: debug: operator 'scale' (scale): in the kernel's ") != std::string::npos);
  CHECK(one.find("operator 'source'") == std::string::npos);
}

TEST_CASE("ranks.the_graph_has_every_ranks_plan_and_run") {
  // Each rank plans and runs its part: rank 0 draws what every rank planned (--plan --graph) and measured
  // (--graph-stats), the bridges with their sending ends' rates.
  const fs::path topology = write_temp("graph.yaml", kFanOut), drawn = write_temp("graph.dot", "");
  const auto planned =
      run_process(ranked(2, xeflow_run(), {topology.string(), "--host", "--plan", "--graph", "dot"}),
                  std::chrono::seconds(60));
  const auto run = run_process(ranked(2, xeflow_run(),
                                      {topology.string(), "--host", "-q", "--stats", "json", "--graph-stats",
                                       drawn.string(), "--graph", "mermaid"}),
                               std::chrono::seconds(120));
  const std::string run_graph = read_file(drawn);
  fs::remove(topology);
  fs::remove(drawn);
  INFO(planned.out << planned.err << run.err);
  REQUIRE(planned.exit_code == 0);
  REQUIRE(run.exit_code == 0);
  check_ranks_verified(rank_stats(run, 2));
  const drawn_graph plan_graph = parse_dot(planned.out);
  const drawn_graph g = parse_mermaid(run_graph);
  for (const drawn_graph* graph : {&plan_graph, &g}) {
    const bool measured = graph == &g;
    CAPTURE(measured);
    const std::string scale = graph->node("scale").label;
    CHECK(scale.find("\nrank 1\n") != std::string::npos);
    CHECK(scale.find(" blocks on the host executor") != std::string::npos);  // rank 1's plan, drawn by rank 0
    CHECK(graph->node("source").label.find("\n2 threads") != std::string::npos);
    // Each subscriber's edge: a bridge where it is on another rank than the topic's publisher.
    const std::map<std::string, std::string> bridged{{"scale", "bridge rank 0 -> 1"},
                                                     {"verify_raw", "bridge rank 0 -> 1"},
                                                     {"verify_raw_here", ""},
                                                     {"verify_scaled", "bridge rank 1 -> 0"},
                                                     {"count", ""}};
    CHECK(graph->edges_from(graph->id_of("raw")).size() == 3);
    CHECK(graph->edges_from(graph->id_of("scaled")).size() == 2);
    for (const auto& entry : bridged) {
      const std::string &reader = entry.first, &bridge = entry.second;
      CAPTURE(reader);
      const std::vector<drawn_edge> in = graph->edges_to(graph->id_of(reader));
      REQUIRE(in.size() == 1);
      if (bridge.empty()) {
        if (measured) {
          CHECK(in[0].style == "-->");
          CHECK(in[0].label.find(" GB/s") != std::string::npos);
        } else {
          CHECK(in[0].label.empty());
        }
      } else if (measured) {
        // Rank 0's graph holds the rates of both ranks' sending ends.
        CHECK(in[0].label.rfind(bridge + "\n", 0) == 0);
        CHECK(in[0].label.find(" GB/s") != std::string::npos);
        CHECK(in[0].style == "-.->");
      } else {
        CHECK(in[0].label == bridge);
        CHECK(in[0].style.find("style=dashed") != std::string::npos);
      }
    }
  }
  // Every CPU operator's shares, measured on either rank.
  for (const char* op : {"source", "verify_raw_here", "verify_raw", "verify_scaled", "count"})
    CHECK(g.node(op).label.find("% of the wall time") != std::string::npos);
}

TEST_CASE("ranks.two_ranks_share_one_gpu_each_with_its_own_kernel [gpu]") {
  if (!xf::probe_device().usable) {
    MESSAGE("skipped: no usable GPU (" << xf::probe_device().reason << ")");
    return;
  }
  const fs::path topology = write_temp("gpu.yaml", R"(name: ranked_gpu
topics:
  raw: {frame_size: 256KiB, capacity: 32, element: f32}
  scaled: {frame_size: 256KiB, capacity: 32, element: f32}
  fused: {frame_size: 256KiB, capacity: 32, element: f32}
operators:
  source: {class: random_source, rank: 0, threads: 2, outputs: [raw], params: {total_bytes: 1GiB, seed: 7}}
  scale: {class: scale, on: gpu, rank: 0, device: 0, inputs: [raw], outputs: [scaled], params: {factor: 0.5}}
  fma: {class: fma, on: gpu, rank: 1, device: 0, inputs: [scaled], outputs: [fused], params: {iterations: 16}}
  verify_scaled: {class: verify_sink, rank: 1, inputs: [scaled]}
  verify_fused: {class: verify_sink, rank: 0, inputs: [fused]}
runtime: {executor: device}
)");
  const auto r = run_process(ranked(2, xeflow_run(), {topology.string(), "-q", "--stats", "json"}),
                             std::chrono::seconds(240));
  fs::remove(topology);
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  const std::vector<nlohmann::json> stats = rank_stats(r, 2);
  check_ranks_verified(stats);
  for (const nlohmann::json& rank : stats) CHECK(rank["gpu"] == 0);
  CHECK((*find_operator(stats, "verify_fused"))["frames_in"] == 4096);
}

namespace {

/// Whether this machine has the two GPUs a case needs; says why it is skipped when it has fewer.
bool two_gpus() {
  const std::uint32_t gpus = xf::probe_device().usable ? xf::device_count() : 0;
  if (gpus >= 2) return true;
  MESSAGE("skipped: needs two GPUs (this machine has " << gpus << ")");
  return false;
}

/// Runs `topology` (removed after) over two ranks on the device executor and checks that every rank
/// completed on its own GPU (rank r on GPU r) with every verify sink clean; returns every rank's stats.
std::vector<nlohmann::json> run_on_two_gpus(const fs::path& topology) {
  const auto r = run_process(ranked(2, xeflow_run(), {topology.string(), "-q", "--stats", "json"}),
                             std::chrono::seconds(240));
  fs::remove(topology);
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  const std::vector<nlohmann::json> stats = rank_stats(r, 2);
  check_ranks_verified(stats);
  for (std::size_t rank = 0; rank < stats.size(); ++rank) CHECK(stats[rank]["gpu"] == rank);
  return stats;
}

}  // namespace

TEST_CASE("ranks.gpu_stages_on_two_gpus_bridged_between_them [gpu]") {
  if (!two_gpus()) return;
  // C(G)4C: two GPU stages on GPU 0 (rank 0), the bridge, two more on GPU 1 (rank 1); the last topic is
  // verified on rank 1 and carried back to rank 0 and verified there, the middle one verified on rank 1.
  for (const char* transfer : {"mapped", "dma"}) {
    CAPTURE(transfer);
    const std::string t = std::string(", transfer: ") + transfer + "}";
    const fs::path topology = write_temp("two_gpus.yaml", R"(name: two_gpus_chain
topics:
  raw: {frame_size: 256KiB, capacity: 32, element: f32)" + t + R"(
  scaled: {frame_size: 256KiB, capacity: 32, element: f32)" + t +
                                                              R"(
  fused: {frame_size: 256KiB, capacity: 32, element: f32)" + t +
                                                              R"(
  rescaled: {frame_size: 256KiB, capacity: 32, element: f32)" +
                                                              t + R"(
  out: {frame_size: 256KiB, capacity: 32, element: f32)" + t + R"(
operators:
  source: {class: random_source, rank: 0, threads: 2, outputs: [raw], params: {total_bytes: 1GiB, seed: 11}}
  scale: {class: scale, on: gpu, rank: 0, device: 0, inputs: [raw], outputs: [scaled], params: {factor: 0.5}}
  fma: {class: fma, on: gpu, rank: 0, device: 0, inputs: [scaled], outputs: [fused], params: {iterations: 8}}
  rescale: {class: scale, on: gpu, rank: 1, device: 1, inputs: [fused], outputs: [rescaled], params: {factor: 3}}
  fma_again: {class: fma, on: gpu, rank: 1, device: 1, inputs: [rescaled], outputs: [out], params: {iterations: 4}}
  verify_fused: {class: verify_sink, rank: 1, inputs: [fused]}
  verify_out: {class: verify_sink, rank: 1, inputs: [out]}
  verify_back: {class: verify_sink, rank: 0, inputs: [out]}
runtime: {executor: device}
)");
    const std::vector<nlohmann::json> stats = run_on_two_gpus(topology);
    for (const char* sink : {"verify_fused", "verify_out", "verify_back"})
      CHECK((*find_operator(stats, sink))["frames_in"] == 4096);
  }
}

TEST_CASE("ranks.a_topic_fans_out_to_both_gpus [gpu]") {
  if (!two_gpus()) return;
  // One source on rank 0; a GPU operator on each GPU reads its topic; each result is verified on the
  // other rank, and the source's topic on rank 1 as well.
  const fs::path topology = write_temp("fan_out_gpus.yaml", R"(name: two_gpus_fan_out
topics:
  raw: {frame_size: 128KiB, capacity: 32, element: f32}
  on_gpu0: {frame_size: 128KiB, capacity: 32, element: f32}
  on_gpu1: {frame_size: 128KiB, capacity: 32, element: f32}
operators:
  source: {class: random_source, rank: 0, threads: 2, outputs: [raw], params: {total_bytes: 512MiB, seed: 5}}
  scale: {class: scale, on: gpu, rank: 0, device: 0, inputs: [raw], outputs: [on_gpu0], params: {factor: 2}}
  fma: {class: fma, on: gpu, rank: 1, device: 1, inputs: [raw], outputs: [on_gpu1], params: {iterations: 8}}
  verify_gpu0: {class: verify_sink, rank: 1, inputs: [on_gpu0]}
  verify_gpu1: {class: verify_sink, rank: 0, inputs: [on_gpu1]}
  verify_raw: {class: verify_sink, rank: 1, inputs: [raw]}
runtime: {executor: device}
)");
  const std::vector<nlohmann::json> stats = run_on_two_gpus(topology);
  for (const char* sink : {"verify_gpu0", "verify_gpu1", "verify_raw"})
    CHECK((*find_operator(stats, sink))["frames_in"] == 4096);
}

TEST_CASE("ranks.a_failed_gpu_frame_on_either_gpu_ends_both_ranks [gpu]") {
  if (!two_gpus()) return;
  for (int failing : {0, 1}) {
    CAPTURE(failing);
    const std::string f = std::to_string(failing), other = std::to_string(1 - failing);
    // The failing GPU operator runs on its rank's GPU; the other rank runs a GPU stage of its own after it.
    const fs::path topology =
        write_temp("two_gpus_fail.yaml", R"(topics:
  t0: {frame_size: 64KiB, capacity: 16, element: f32}
  t1: {frame_size: 64KiB, capacity: 16, element: f32}
  t2: {frame_size: 64KiB, capacity: 16, element: f32}
operators:
  source: {class: sequence_source, rank: )" + other +
                                             R"(, outputs: [t0], params: {total_bytes: 64GiB}}
  boom: {class: fail_at, on: gpu, rank: )" + f +
                                             ", device: " + f +
                                             R"(, inputs: [t0], outputs: [t1], params: {at: 300}}
  pass: {class: pass_through, on: gpu, rank: )" +
                                             other + ", device: " + other +
                                             R"(, inputs: [t1], outputs: [t2]}
  sink: {class: null_sink, rank: )" + other + R"(, inputs: [t2]}
runtime: {executor: device}
)");
    const auto r =
        run_process(ranked(2, faulty_launcher(), {topology.string(), "-q"}), std::chrono::seconds(120));
    fs::remove(topology);
    INFO(r.err);
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("rank " + f + ": operator 'boom', topic 't0', offset 300") != std::string::npos);
    CHECK(r.err.find("failed the frame (code 7)") != std::string::npos);
    // A 64 GiB stream: only the failure, spread to the other rank, can have ended it this soon.
    CHECK(r.seconds < 60);
  }
}
