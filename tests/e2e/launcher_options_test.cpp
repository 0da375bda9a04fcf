// xeflow-run's own options as a user meets them: --version, the provenance and schema version in
// --stats json, the log level from XEFLOW_LOG_LEVEL against -v/-q, and --log-file. Host executor, no GPU.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
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
  for (const auto& [path, what] :
       {std::pair{dir.file(""), std::string("Is a directory")},
        std::pair{fifo, std::string("it is a FIFO, not a regular file")},
        std::pair{std::string("/dev/zero"), std::string("it is a character device, not a regular file")}}) {
    CAPTURE(path);
    const auto r = run_process({xeflow_run(), path, "--validate"}, std::chrono::seconds(60));
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == path + ": error: cannot read topology: " + what + "\n");
  }
}
