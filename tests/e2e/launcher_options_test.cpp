// xeflow-run's own options as a user meets them: --version, the provenance and schema version in
// --stats json, the log level from XEFLOW_LOG_LEVEL against -v/-q, --log-file, the GPUs it shows the CUDA
// driver, and --checkpoint / --resume. Host executor, no GPU.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/run_checks.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/subprocess.hpp"

using namespace xf::test;

namespace {

/// argv for xeflow-run with XEFLOW_LOG_LEVEL set to `level` (nullptr: unset, whatever the test's
/// environment holds), through env(1).
std::vector<std::string> with_log_level(const char* level, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"/usr/bin/env"};
  if (level)
    argv.push_back(std::string("XEFLOW_LOG_LEVEL=") + level);
  else
    argv.insert(argv.end(), {"-u", "XEFLOW_LOG_LEVEL"});
  argv.push_back(xeflow_run());
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

/// A short host-executor run of pingpong.yaml with `extra` arguments.
std::vector<std::string> short_pingpong(const std::vector<std::string>& extra) {
  std::vector<std::string> args{(source_root() / "topologies/pingpong.yaml").string(), "--host", "--set",
                                "operators.source.params.total_bytes=2MiB"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// The --version line's fields: version, commit, build type, CUDA, MPI.
std::smatch version_fields(const std::string& line) {
  static const std::regex form(
      R"(xeflow-run (\S+) \(commit ([^,\s]+), (\S+) build, (CUDA [0-9]+\.[0-9]+|without CUDA), MPI (yes|no)\))");
  std::smatch fields;
  REQUIRE_MESSAGE(std::regex_match(line, fields, form), "the version line: " << line);
  return fields;
}

}  // namespace

TEST_CASE("launcher.version_is_one_line_and_exits_0") {
  const auto r = run_process({xeflow_run(), "--version"}, std::chrono::seconds(60));
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  REQUIRE(!r.out.empty());
  CHECK(r.out.back() == '\n');
  const std::string line = r.out.substr(0, r.out.size() - 1);
  CHECK(line.find('\n') == std::string::npos);
  const std::smatch fields = version_fields(line);
  CHECK(fields[1] == env("XF_PROJECT_VERSION"));
  CHECK(fields[3] == env("XF_BUILD_TYPE"));
  // The commit git gave at build time: a hash, "-dirty" when the checkout had changes; "unknown" outside
  // a checkout.
  const std::string commit = fields[2];
  CHECK(std::regex_match(commit, std::regex("[0-9a-f]{7,40}(-dirty)?|unknown")));
#if defined(XF_HAVE_CUDA)
  CHECK(fields[4] != "without CUDA");
#else
  CHECK(fields[4] == "without CUDA");
#endif
  CHECK(fields[5] == env("XF_HAVE_MPI"));
  // In a git checkout the hash names a commit of it (not necessarily HEAD: a commit made since the
  // build would not be in this binary). Where git is missing, env(1) exits 127 and this is not checked.
  if (commit != "unknown") {
    const std::string hash = commit.substr(0, commit.find('-'));
    const auto git = run_process(
        {"/usr/bin/env", "git", "-C", source_root().string(), "cat-file", "-e", hash + "^{commit}"},
        std::chrono::seconds(60));
    INFO(git.err);
    if (git.exit_code == 127)
      MESSAGE("git not found: the commit " << hash << " is not looked up");
    else
      CHECK(git.exit_code == 0);
  }
}

TEST_CASE("launcher.stats_json_carries_the_schema_version_and_provenance") {
  const auto version = run_process({xeflow_run(), "--version"}, std::chrono::seconds(60));
  REQUIRE(version.exit_code == 0);
  const std::string line = version.out.substr(0, version.out.find('\n'));
  const std::smatch fields = version_fields(line);
  const auto r = run_process(with_log_level(nullptr, short_pingpong({"-q", "--stats", "json"})),
                             std::chrono::seconds(120));
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  const nlohmann::json doc = parse_json(r);
  CHECK(doc["status"] == "completed");
  REQUIRE(doc.contains("schema_version"));
  CHECK(doc["schema_version"].is_number_integer());
  CHECK(doc["schema_version"] == 1);
  REQUIRE(doc.contains("provenance"));
  const nlohmann::json& p = doc["provenance"];
  REQUIRE(p.is_object());
  CHECK(p.size() == 7);
  CHECK(p["version"] == fields[1].str());
  CHECK(p["commit"] == fields[2].str());
  CHECK(p["build_type"] == fields[3].str());
#if defined(XF_HAVE_CUDA)
  // The runtime's version needs no GPU; the driver's is null where no driver is installed.
  REQUIRE(p["cuda_runtime"].is_string());
  CHECK("CUDA " + p["cuda_runtime"].get<std::string>() == fields[4].str());
  CHECK((p["cuda_driver"].is_string() || p["cuda_driver"].is_null()));
#else
  CHECK(p["cuda_runtime"].is_null());
  CHECK(p["cuda_driver"].is_null());
#endif
  CHECK(p["gpu"].is_null());  // the host executor ran it
  char host[HOST_NAME_MAX + 1] = {};
  REQUIRE(::gethostname(host, sizeof host - 1) == 0);
  CHECK(p["host"] == std::string(host));
}

TEST_CASE("launcher.log_level_from_the_environment") {
  const std::vector<std::string> args = short_pingpong({"--stats", "json"});
  SUBCASE("debug shows the operators' debug lines") {
    const auto r = run_process(with_log_level("debug", args), std::chrono::seconds(120));
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.err, "xeflow: debug: operator 'source' (sequence_source): 2 CPU worker threads\n"));
    CHECK(contains(r.err, "xeflow: debug: operator 'verify' (verify_sink): "));
    CHECK(contains(r.err, "xeflow: debug: phase 'run': "));
    CHECK_FALSE(contains(r.err, "trace:"));
  }
  SUBCASE("any case; trace shows the workers' trace lines") {
    const auto r = run_process(with_log_level("TRACE", args), std::chrono::seconds(120));
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.err, "xeflow: trace: operator 'verify': a worker thread reached its stream's end\n"));
  }
  SUBCASE("unset: info, no debug lines") {
    const auto r = run_process(with_log_level(nullptr, args), std::chrono::seconds(120));
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.err, "xeflow: info: "));
    CHECK_FALSE(contains(r.err, "debug:"));
  }
  SUBCASE("off: nothing logged") {
    const auto r = run_process(with_log_level("off", args), std::chrono::seconds(120));
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
    CHECK(parse_json(r)["status"] == "completed");
  }
  SUBCASE("-q and -v win over it") {
    std::vector<std::string> quiet = args;
    quiet.push_back("-q");
    const auto q = run_process(with_log_level("debug", quiet), std::chrono::seconds(120));
    INFO(q.err);
    CHECK(q.exit_code == 0);
    CHECK_FALSE(contains(q.err, "debug:"));
    CHECK_FALSE(contains(q.err, "info:"));
    std::vector<std::string> verbose = args;
    verbose.push_back("-v");
    const auto v = run_process(with_log_level("error", verbose), std::chrono::seconds(120));
    INFO(v.err);
    CHECK(v.exit_code == 0);
    CHECK(contains(v.err, "xeflow: debug: operator 'source'"));
  }
}

TEST_CASE("launcher.a_run_shows_the_cuda_driver_only_the_gpus_up_to_its_kernels") {
  // Through env(1): CUDA_VISIBLE_DEVICES unset, or the user's own. Without a GPU the kernel's operators fall
  // back to the host executor, after the variable is set; with one they run on GPU 0.
  const auto run_with = [](std::vector<std::string> env, const std::vector<std::string>& extra) {
    std::vector<std::string> argv{"/usr/bin/env"};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.push_back(xeflow_run());
    std::vector<std::string> args{(source_root() / "topologies/pingpong.yaml").string(), "-v", "--set",
                                  "operators.source.params.total_bytes=2MiB"};
    args.insert(args.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv, std::chrono::seconds(120));
  };
  const std::string set_line = "xeflow: debug: CUDA_VISIBLE_DEVICES=0: the kernel runs on GPU 0";
  const auto unset = run_with({"-u", "CUDA_VISIBLE_DEVICES"}, {});
  INFO(unset.err);
  CHECK(unset.exit_code == 0);
  CHECK(contains(unset.err, set_line));
  // Before the first CUDA call, which the version line makes.
  CHECK(unset.err.find(set_line) < unset.err.find("xeflow: debug: xeflow-run "));
  const auto users = run_with({"CUDA_VISIBLE_DEVICES=0"}, {});
  INFO(users.err);
  CHECK(users.exit_code == 0);
  CHECK_FALSE(contains(users.err, "CUDA_VISIBLE_DEVICES"));
  const auto host = run_with({"-u", "CUDA_VISIBLE_DEVICES"}, {"--host"});
  INFO(host.err);
  CHECK(host.exit_code == 0);
  CHECK_FALSE(contains(host.err, "CUDA_VISIBLE_DEVICES"));
}

TEST_CASE("launcher.unknown_log_level_exits_2_naming_the_variable") {
  for (const char* extra : {"--stats", "--validate"}) {
    CAPTURE(extra);
    std::vector<std::string> args = short_pingpong({extra});
    if (std::string(extra) == "--stats") args.push_back("json");
    const auto r = run_process(with_log_level("bogus", args), std::chrono::seconds(60));
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());  // nothing ran
    CHECK(
        r.err ==
        "xeflow-run: error: XEFLOW_LOG_LEVEL='bogus' is not a log level: trace, debug, info, warn, error or "
        "off\n");
  }
}

TEST_CASE("launcher.log_file_gets_the_log_as_well_as_stderr") {
  const scratch_dir dir;
  const std::string path = dir.file("run.log");
  std::ofstream(path) << "an older run's log\n";
  const auto r = run_process(with_log_level(nullptr, short_pingpong({"-v", "--log-file", path})),
                             std::chrono::seconds(120));
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  const std::string log = read_all(path);
  INFO(log);
  CHECK_FALSE(contains(log, "an older run's log"));  // truncated
  // Each line as on stderr, after a timestamp.
  static const std::regex stamped(
      R"(\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] xeflow: debug: operator 'scale' \(scale\): in the kernel's \d+ blocks, \d+ warps each)");
  CHECK(std::regex_search(log, stamped));
  CHECK(contains(log, "] xeflow: debug: xeflow-run "));
  CHECK(contains(log, "] xeflow: info: executor: host"));
  CHECK(contains(r.err, "xeflow: debug: operator 'scale' (scale): in the kernel's "));
  CHECK(contains(r.err, "xeflow: info: executor: host"));
}

TEST_CASE("launcher.log_file_that_cannot_be_opened_exits_2_naming_it") {
  const scratch_dir dir;
  for (const std::string& path : {dir.file("no/such/dir/run.log"), dir.file("")}) {
    CAPTURE(path);
    const auto r =
        run_process(with_log_level(nullptr, short_pingpong({"--log-file", path, "--stats", "json"})),
                    std::chrono::seconds(60));
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());  // nothing ran
    CHECK(r.err.rfind("xeflow-run: error: cannot open the log file '" + path + "' for writing: ", 0) == 0);
  }
  CHECK_FALSE(std::filesystem::exists(dir.file("no")));  // no directory made on the way
}

TEST_CASE("launcher.set_takes_one_value_so_the_topology_may_follow") {
  // --set before the topology's path: each --set takes its PATH=VALUE only, never the path after it.
  const std::string topology = (source_root() / "topologies/pingpong.yaml").string();
  const auto r = run_process(
      {xeflow_run(), "--set", "name=renamed", "--set", "runtime.executor=host", topology, "--validate"},
      std::chrono::seconds(60));
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.rfind(topology + ": ok (", 0) == 0);
  // Each --set is applied: an override's bad value is reported at it, with the topology still read.
  const auto bad = run_process({xeflow_run(), "--set", "runtime.executor=gpu", topology, "--validate"},
                               std::chrono::seconds(60));
  REQUIRE_FALSE(bad.timed_out);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.rfind("--set runtime.executor=gpu:1:18: error: runtime: executor must be one of", 0) == 0);
}

TEST_CASE("launcher.topology_that_is_no_regular_file_exits_2_at_once") {
  // A directory, a FIFO no writer opens and an endless device: refused by what they are, without a read.
  const scratch_dir dir;
  const std::string fifo = dir.file("topology.yaml");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const auto& refused :
       {std::pair{dir.file(""), std::string("Is a directory")},
        std::pair{fifo, std::string("it is a FIFO, not a regular file")},
        std::pair{std::string("/dev/zero"), std::string("it is a character device, not a regular file")}}) {
    // Named copies, not a structured binding: clang 14 does not let CAPTURE's lambda refer to one.
    const std::string& path = refused.first;
    const std::string& what = refused.second;
    CAPTURE(path);
    const auto r = run_process({xeflow_run(), path, "--validate"}, std::chrono::seconds(60));
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == path + ": error: cannot read topology: " + what + "\n");
  }
}

// ---- --checkpoint and --resume ------------------------------------------------------------------------

namespace {

constexpr std::uint64_t checkpoint_frame_bytes = 64 * 1024;  // topologies/checkpoint_file.yaml's frames

/// argv of a host run of topologies/checkpoint_file.yaml streaming `bytes` into `out`, with `extra`.
std::vector<std::string> checkpoint_run(const std::string& out, std::uint64_t bytes,
                                        const std::vector<std::string>& extra) {
  std::vector<std::string> argv{xeflow_run(),
                                (source_root() / "topologies/checkpoint_file.yaml").string(),
                                "--host",
                                "--set",
                                "operators.source.params.total_bytes=" + std::to_string(bytes),
                                "--set",
                                "operators.out.params.path=" + out};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

nlohmann::json read_json(const std::string& path) {
  return nlohmann::json::parse(read_all(path));
}

std::uint64_t committed_of(const nlohmann::json& checkpoint, const std::string& sink) {
  for (const auto& s : checkpoint.at("sinks"))
    if (s.at("name") == sink) return s.at("committed").get<std::uint64_t>();
  FAIL("no sink '" << sink << "' in the checkpoint");
  return 0;
}

/// A completed reference run's output (no checkpoint).
std::string reference_output(const scratch_dir& dir, std::uint64_t bytes) {
  const std::string path = dir.file("reference.bin");
  const auto r = run_process(checkpoint_run(path, bytes, {"-q"}), std::chrono::seconds(120));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return read_all(path);
}

}  // namespace

TEST_CASE("launcher.checkpoint_commits_every_sink_atomically_and_says_complete") {
  scratch_dir dir;
  const std::string out = dir.file("out.bin"), checkpoint = dir.file("run.ckpt");
  // 64 frames and a short 65th: the last frame's bytes are in the file and the commit.
  const std::uint64_t bytes = 64 * checkpoint_frame_bytes + 4100;
  const auto r =
      run_process(checkpoint_run(out, bytes, {"-q", "--checkpoint", checkpoint, "--checkpoint-ms", "5"}),
                  std::chrono::seconds(120));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(std::filesystem::file_size(out) == bytes);
  CHECK_FALSE(std::filesystem::exists(out + ".partial"));  // renamed onto the path once complete
  CHECK_FALSE(std::filesystem::exists(checkpoint + ".tmp"));
  const nlohmann::json c = read_json(checkpoint);
  CHECK(c.at("format") == "xeflow-checkpoint");
  CHECK(c.at("version") == 1);
  CHECK(c.at("topology") == "checkpoint_file");
  CHECK(std::regex_match(c.at("topology_hash").get<std::string>(), std::regex("[0-9a-f]{16}")));
  CHECK(c.at("complete") == true);
  REQUIRE(c.at("sinks").size() == 2);
  // The end offset: 65 frames and a void from each of the source's two threads (each claims one more).
  CHECK(committed_of(c, "out") == 67);
  CHECK(committed_of(c, "verify") == 67);
  REQUIRE(c.at("sources").size() == 1);
  CHECK(c.at("sources")[0].at("name") == "source");
  CHECK(c.at("sources")[0].at("stream") == "c2g");
  CHECK(c.at("sources")[0].at("restart_offset") == 67);
  // A completed run's checkpoint leaves nothing to resume.
  const auto again =
      run_process(checkpoint_run(out, bytes, {"--resume", checkpoint}), std::chrono::seconds(60));
  CHECK(again.exit_code == 0);
  CHECK(contains(again.err, "nothing to resume"));
}

TEST_CASE("launcher.resume_rewrites_the_exact_file_and_verifies_from_the_resume_point") {
  scratch_dir dir;
  const std::uint64_t bytes = 64 * checkpoint_frame_bytes + 1028;
  const std::string reference = reference_output(dir, bytes);
  const std::string out = dir.file("out.bin"), checkpoint = dir.file("run.ckpt");
  auto r =
      run_process(checkpoint_run(out, bytes, {"-q", "--checkpoint", checkpoint}), std::chrono::seconds(120));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  // What a crash after a commit at offset 20 leaves: the partial output with frames 20.. torn or missing
  // (here: frames 20-29 garbage, the rest never written), and a checkpoint whose verify sink was ahead.
  std::filesystem::rename(out, out + ".partial");
  {
    std::fstream f(out + ".partial", std::ios::in | std::ios::out | std::ios::binary);
    const std::string garbage(10 * checkpoint_frame_bytes, '\xaa');
    f.seekp(static_cast<std::streamoff>(20 * checkpoint_frame_bytes));
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  std::filesystem::resize_file(out + ".partial", 30 * checkpoint_frame_bytes);
  nlohmann::json c = read_json(checkpoint);
  c["complete"] = false;
  for (auto& s : c["sinks"]) s["committed"] = s["name"] == "out" ? 20 : 40;
  c["sources"][0]["restart_offset"] = 20;
  std::ofstream(checkpoint) << c.dump(1);
  r = run_process(checkpoint_run(out, bytes, {"--resume", checkpoint, "--stats", "json"}),
                  std::chrono::seconds(120));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(contains(r.err, "source 'source' restarts its stream 'c2g' at offset 20"));
  CHECK(read_all(out) == reference);
  CHECK_FALSE(std::filesystem::exists(out + ".partial"));
  // The verify sink checked offsets 20 to 64 (45 frames) and counted nothing lost below 20.
  const nlohmann::json stats = nlohmann::json::parse(r.out);
  for (const auto& o : stats.at("operators"))
    if (o.at("name") == "verify") {
      CHECK(o.at("counters").at("frames") == 45);
      CHECK(o.at("counters").at("lost") == 0);
    }
  const nlohmann::json after = read_json(checkpoint);
  CHECK(after.at("complete") == true);
  CHECK(committed_of(after, "out") == 67);  // 65 frames, two voids
}

TEST_CASE("launcher.kill_9_then_resume_gives_the_uninterrupted_output") {
  scratch_dir dir;
  const std::uint64_t bytes = 8 << 20;
  const std::string reference = reference_output(dir, bytes);
  const std::string out = dir.file("out.bin"), checkpoint = dir.file("run.ckpt");
  {
    child_process run(checkpoint_run(out, bytes, {"-q", "--checkpoint", checkpoint, "--checkpoint-ms", "2"}));
    // SIGKILL once something is committed (or the run ended first: then the resume has nothing to do).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline && ::kill(run.pid(), 0) == 0) {
      if (std::filesystem::exists(checkpoint) && committed_of(read_json(checkpoint), "out") > 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    run.signal(SIGKILL);
    run.wait(std::chrono::seconds(30));
  }
  REQUIRE(std::filesystem::exists(checkpoint));
  const auto r =
      run_process(checkpoint_run(out, bytes, {"-q", "--resume", checkpoint}), std::chrono::seconds(120));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(read_all(out) == reference);
}

TEST_CASE("launcher.resume_refuses_another_topology_a_bad_file_and_stateful_sinks") {
  scratch_dir dir;
  const std::string out = dir.file("out.bin"), checkpoint = dir.file("run.ckpt");
  const std::uint64_t bytes = 1 << 20;
  auto r =
      run_process(checkpoint_run(out, bytes, {"-q", "--checkpoint", checkpoint}), std::chrono::seconds(60));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  nlohmann::json c = read_json(checkpoint);
  c["complete"] = false;
  std::ofstream(checkpoint) << c.dump(1);
  // The same file with another override is another topology.
  r = run_process(
      checkpoint_run(out, bytes, {"--resume", checkpoint, "--set", "operators.scale.params.factor=5"}),
      std::chrono::seconds(60));
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "is of another topology"));
  std::ofstream(dir.file("bad.ckpt")) << "{\"format\": \"xeflow-checkpoint\", \"version\": 7}";
  r = run_process(checkpoint_run(out, bytes, {"--resume", dir.file("bad.ckpt")}), std::chrono::seconds(60));
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "version 7"));
  r = run_process(checkpoint_run(out, bytes, {"--resume", dir.file("missing.ckpt")}),
                  std::chrono::seconds(60));
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "missing.ckpt"));
  r = run_process(checkpoint_run(out, bytes, {"--checkpoint", "/nonexistent-xeflow-dir/run.ckpt"}),
                  std::chrono::seconds(60));
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "cannot write the checkpoint '/nonexistent-xeflow-dir/run.ckpt'"));
  r = run_process(checkpoint_run(out, bytes, {"--checkpoint-ms", "10"}), std::chrono::seconds(60));
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "--checkpoint-ms goes with --checkpoint or --resume"));
  // Sinks that fold the stream into state, and shared objects: refused before anything runs, named.
  const auto refused = [&](const std::string& topology, const std::string& named) {
    CAPTURE(topology);
    const auto rr = run_process({xeflow_run(), (source_root() / "topologies" / topology).string(), "--host",
                                 "--checkpoint", dir.file("refused.ckpt")},
                                std::chrono::seconds(60));
    CHECK(rr.exit_code == 2);
    CHECK(contains(rr.err, "--checkpoint and --resume refuse this topology"));
    CHECK_MESSAGE(contains(rr.err, named), rr.err);
    CHECK_FALSE(std::filesystem::exists(dir.file("refused.ckpt")));
  };
  refused("wordcount.yaml", "operator 'count' (word_count) folds the stream into an accumulator");
  refused("table_versions.yaml", "shared object 'table'");
  refused("kmeans_assign.yaml", "(prefetch_writeback) is a sink that does not say it can be restarted");
}

TEST_CASE("launcher.resume_through_a_kernel_operator_that_shares_frames") {
  // RAID-6 parity of a file, the input ring one frame deep: the host executor's two blocks share each
  // frame (parts = 2), so the encoder's group takes items 2·K and 2·K + 1 first on a resume from K.
  scratch_dir dir;
  const std::string data = dir.file("data.bin");
  {
    std::ofstream f(data, std::ios::binary);
    std::uint32_t x = 36;
    for (std::uint64_t i = 0; i < (3u << 20) / 4; ++i) {
      x = x * 1664525u + 1013904223u;
      f.write(reinterpret_cast<const char*>(&x), sizeof x);
    }
  }
  const auto raid6 = [&](const std::string& parity, const std::vector<std::string>& extra) {
    std::vector<std::string> argv{xeflow_run(),
                                  (source_root() / "topologies/raid6_file.yaml").string(),
                                  "--host",
                                  "--set",
                                  "operators.source.params.path=" + data,
                                  "--set",
                                  "operators.sink.params.path=" + parity,
                                  "--set",
                                  "topics.data.capacity=1"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run_process(argv, std::chrono::seconds(120));
  };
  auto r = raid6(dir.file("reference.bin"), {"-q"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::string out = dir.file("parity.bin"), checkpoint = dir.file("run.ckpt");
  r = raid6(out, {"-q", "--checkpoint", checkpoint});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  // A crash after a commit at offset 2 of 6 (512 KiB data frames, 128 KiB of parity each).
  std::filesystem::rename(out, out + ".partial");
  std::filesystem::resize_file(out + ".partial", 3 * 128 * 1024);
  nlohmann::json c = read_json(checkpoint);
  c["complete"] = false;
  for (auto& s : c["sinks"]) s["committed"] = 2;
  std::ofstream(checkpoint) << c.dump(1);
  r = raid6(out, {"--resume", checkpoint});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(contains(r.err, "restarts its stream 'data' at offset 2"));
  CHECK(read_all(out) == read_all(dir.file("reference.bin")));
}
