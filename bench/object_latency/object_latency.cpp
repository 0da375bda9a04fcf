// xeflow-object-latency: how soon a shared object's new version reaches the readers inside the running
// kernel. A CPU writer publishes version n of a table at offset o + 1 after its frame o, every `every`
// frames, while table_lookup — a GPU operator in the persistent kernel — waits at frame o + 1 for it (the
// writer promises nothing ahead, so the horizon stops there). The writer times each publish from the call
// to the moment it sees the version taken up: the lane that resolves it stores its number into the table's
// words in host memory (version_table_view::saw) and the writer polls them. That is an upper bound of the
// one-way latency: it includes the copies of the changed blocks to the GPU, the lane's next look at the
// horizon, the store crossing PCIe back, and the writer's own poll.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "bench/common/run_stamp.hpp"
#include "framework/core/units.hpp"
#include "framework/kernel/kernel_program.hpp"
#include "framework/launch/launcher.hpp"
#include "framework/model/spec_validation.hpp"
#include "framework/model/topology_builder.hpp"
#include "framework/runtime/executor.hpp"
#include "operators/builtin.hpp"
#include "operators/builtin_gpu.hpp"
#include "operators/sinks/table_versions.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

struct probe_sample {
  double publish_us = 0;  ///< publish() from call to return (copies included)
  double reach_us = 0;    ///< from the call until a reader took the version up
};

/// The samples of the run (one probe per run).
std::mutex samples_mutex;
std::vector<probe_sample> samples;

/// table_writer's versions, timed: a CPU sink with one thread that publishes after every `every`-th frame
/// and waits (spinning, at most a second) until a reader has taken the version up.
class version_probe final : public xf::cpu_sink {
 public:
  using params = xf::table_versions_params;
  static void describe(xf::operator_schema<params>& s) {
    s.describe(
         "publishes table versions like table_writer, without promising ahead, and times each one "
         "until a reader took it up")
        .not_replayable();
    s.param(&params::every, "every", "frames between two versions", params{}.every, 1);
    s.param(&params::entries, "entries", "table entries each version changes", params{}.entries, 1, 65536);
    s.shared("table", xf::object_access::write, "the table", xf::element_set{xf::element_type::u32});
  }
  explicit version_probe(const params& p) : params_(p) {}
  void on_start(const xf::operator_setup& setup) override { table_ = setup.objects.at(0); }
  void on_frame(std::uint64_t offset, const xf::frame_in&) override {
    const auto every = static_cast<std::uint64_t>(params_.every);
    if ((offset + 1) % every != 0) return;
    const std::uint64_t v = (offset + 1) / every;
    const std::span<std::uint32_t> table = table_->edit_as<std::uint32_t>();
    for (std::uint32_t j = 0; j < params_.entries; ++j) table[j] = xf::table_version_entry(v, j);
    const auto start = clock_type::now();
    const std::uint64_t n = table_->publish(offset + 1);
    const auto published = clock_type::now();
    const auto deadline = start + std::chrono::seconds(1);
    while (table_->highest_version_seen() < n && clock_type::now() < deadline) {
    }
    const auto reached = clock_type::now();
    if (table_->highest_version_seen() < n) return;  // the stream ended before a reader needed it
    std::lock_guard lock(samples_mutex);
    samples.push_back({std::chrono::duration<double, std::micro>(published - start).count(),
                       std::chrono::duration<double, std::micro>(reached - start).count()});
  }

 private:
  params params_;
  xf::object_port* table_ = nullptr;
};

/// The first GPU's name as nvidia-smi gives it ("none" without one).
std::string gpu_name() {
  std::FILE* p = popen("nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1", "r");
  if (p == nullptr) return "none";
  char text[256] = {};
  const bool got = std::fgets(text, sizeof text, p) != nullptr;
  pclose(p);
  std::string s = got ? text : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.empty() ? "none" : s;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5))];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"xeflow-object-latency: how soon a shared object's new version reaches its GPU readers"};
  std::uint64_t versions = 200, every = 16, entries = 256, capacity = 8;
  std::string frame_size = "64KiB", object_size = "4KiB", json_path, commit;
  bool host = false;
  app.add_option("--versions", versions, "versions to publish")->check(CLI::Range(1, 100000));
  app.add_option("--every", every, "frames between two versions")->check(CLI::Range(2, 1 << 20));
  app.add_option("--entries", entries, "table entries each version changes")->check(CLI::Range(1, 65536));
  app.add_option("--object-size", object_size, "the table's size (a multiple of 4 bytes)");
  app.add_option("--frame-size", frame_size, "the keys' frames");
  app.add_option("--capacity", capacity, "frames in flight per topic")->check(CLI::Range(2, 4096));
  app.add_flag("--host", host, "the host executor (CPU threads run the kernel's round)");
  app.add_option("--json", json_path, "write the samples and their percentiles here");
  app.add_option("--commit", commit, "the commit to stamp (default: git rev-parse --short HEAD)");
  CLI11_PARSE(app, argc, argv);

  const std::uint64_t frame_bytes = xf::parse_bytes(frame_size).value();
  const std::uint64_t table_bytes = xf::parse_bytes(object_size).value();
  if (table_bytes < entries * 4) {
    std::cerr << "xeflow-object-latency: --object-size holds fewer than --entries u32 entries\n";
    return 2;
  }
  xf::operator_registry registry;
  xf::register_builtin_operators(registry);
  registry.add<version_probe>("version_probe");
  xf::topology_builder b{"object_latency"};
  b.shared_object("table").element(xf::element_type::u32).bytes(table_bytes).versions(2);
  for (const char* topic : {"keys", "looked_up"})
    b.topic(topic)
        .frame_bytes(frame_bytes)
        .capacity(static_cast<std::uint32_t>(capacity))
        .element(xf::element_type::u32);
  const std::uint64_t frames = versions * every + 1;
  b.link({}, xf::op("source", "sequence_source").param("total_bytes", frames * frame_bytes), {"keys"});
  b.link({"keys"},
         xf::op("writer", "version_probe")
             .param("every", static_cast<std::int64_t>(every))
             .param("entries", static_cast<std::int64_t>(entries))
             .shared("table", "table"),
         {});
  b.link({"keys"},
         xf::op("lookup", "table_lookup")
             .on(xf::placement::gpu)
             .param("entries", static_cast<std::int64_t>(entries))
             .shared("table", "table"),
         {"looked_up"});
  b.link({"looked_up"}, xf::op("sink", "null_sink"), {});
  b.runtime().executor(host ? xf::executor_kind::host : xf::executor_kind::automatic);
  xf::topology_spec spec = b.build();
  xf::validate_topology(spec, registry);
  const xf::plan p =
      xf::plan_for_this_machine(spec, registry, host, xf::compiled_kernel<xf::builtin_gpu_operators>());
  xf::run_control control;
  xf::run_options options;
  options.kernel = xf::compiled_kernel<xf::builtin_gpu_operators>();
  const xf::run_stats stats = xf::run_topology(p, spec, control, options);
  if (stats.status != xf::run_status::completed) {
    std::cerr << "xeflow-object-latency: the run " << xf::name_of(stats.status) << ": " << stats.error
              << '\n';
    return 1;
  }
  std::vector<double> reach, publish, notice;
  for (const probe_sample& s : samples) {
    reach.push_back(s.reach_us);
    publish.push_back(s.publish_us);
    notice.push_back(s.reach_us - s.publish_us);
  }
  std::printf("executor: %s\nversions timed: %zu of %llu (object %llu bytes, %llu entries changed each)\n",
              stats.executor.c_str(), samples.size(), static_cast<unsigned long long>(versions),
              static_cast<unsigned long long>(table_bytes), static_cast<unsigned long long>(entries));
  std::printf("%-28s %10s %10s %10s %10s\n", "us", "p50", "p90", "p99", "max");
  for (const auto& [name, v] :
       {std::pair{"publish (copies included)", &publish}, {"publish -> reader took it", &reach}})
    std::printf("%-28s %10.1f %10.1f %10.1f %10.1f\n", name, percentile(*v, 0.5), percentile(*v, 0.9),
                percentile(*v, 0.99), percentile(*v, 1.0));
  const xf::object_stats& table = stats.objects.at(0);
  const double per_version =
      table.publishes.versions ? 1.0 / static_cast<double>(table.publishes.versions) : 0;
  std::printf(
      "per publish (the run's counters): %.1f us, of which %.1f us waiting for readers to leave the "
      "buffer; %.0f bytes moved\n",
      static_cast<double>(table.publishes.publish_ns) * per_version / 1e3,
      static_cast<double>(table.publishes.wait_ns) * per_version / 1e3,
      static_cast<double>(table.publishes.bytes_moved) * per_version);
  if (!json_path.empty()) {
    nlohmann::json j;
    j["benchmark"] = "object_latency";
    j["executor"] = stats.executor;
    j["device"] = gpu_name();
    j["date"] = xf::bench::utc_now();
    j["commit"] = commit.empty() ? xf::bench::git_commit() : commit;
    j["command_line"] = xf::bench::command_line(argc, argv);
    j["object_bytes"] = table_bytes;
    j["entries"] = entries;
    j["every"] = every;
    j["frame_bytes"] = frame_bytes;
    j["capacity"] = capacity;
    j["versions_timed"] = samples.size();
    j["publish_mean_us"] = static_cast<double>(table.publishes.publish_ns) * per_version / 1e3;
    j["publish_wait_mean_us"] = static_cast<double>(table.publishes.wait_ns) * per_version / 1e3;
    j["bytes_moved_per_version"] = static_cast<double>(table.publishes.bytes_moved) * per_version;
    for (const auto& [name, v] :
         {std::pair{"publish_us", &publish}, {"reach_us", &reach}, {"after_publish_us", &notice}})
      j[name] = {{"p50", percentile(*v, 0.5)},
                 {"p90", percentile(*v, 0.9)},
                 {"p99", percentile(*v, 0.99)},
                 {"max", percentile(*v, 1.0)},
                 {"samples", *v}};
    std::ofstream(json_path) << j.dump(1) << '\n';
  }
  return samples.empty() ? 1 : 0;
}
