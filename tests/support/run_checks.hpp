// What the end-to-end suites (tests/e2e on the host executor, tests/gpu on the device) share: the tools'
// paths from meson's environment, the stats JSON of a run, the "every verify sink saw frames and no
// anomaly" check, and temporary topology files.
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/subprocess.hpp"

namespace xf::test {

/// A variable meson test sets (XF_SOURCE_ROOT, XF_RUN, XF_TUNE, XF_FAULTY_RUN, XF_GEN_KMEANS, XF_KMEANS_CPU,
/// XF_KMEANS_GPU_BASELINE, XF_KMEANS_XEFLOW, XF_GEN_WORDCOUNT, XF_WORDCOUNT_CPU,
/// XF_GEN_AFFINITY, XF_AFFINITY_CPU, XF_SETQUERY_GEN, XF_SETQUERY_REF).
inline std::string env(const char* name) {
  const char* v = std::getenv(name);
  REQUIRE_MESSAGE(v != nullptr, "environment variable " << name << " is set by meson test");
  return v;
}
inline std::filesystem::path source_root() {
  return env("XF_SOURCE_ROOT");
}
inline std::string xeflow_run() {
  return env("XF_RUN");
}
inline std::string xeflow_tune() {
  return env("XF_TUNE");
}
inline std::string faulty_launcher() {
  return env("XF_FAULTY_RUN");
}
inline std::string gen_kmeans() {
  return env("XF_GEN_KMEANS");
}
inline std::string kmeans_cpu() {
  return env("XF_KMEANS_CPU");
}
inline std::string kmeans_gpu_baseline() {
  return env("XF_KMEANS_GPU_BASELINE");
}
inline std::string kmeans_xeflow() {
  return env("XF_KMEANS_XEFLOW");
}
inline std::string gen_wordcount() {
  return env("XF_GEN_WORDCOUNT");
}
inline std::string wordcount_cpu() {
  return env("XF_WORDCOUNT_CPU");
}
inline std::string gen_affinity() {
  return env("XF_GEN_AFFINITY");
}
inline std::string affinity_cpu() {
  return env("XF_AFFINITY_CPU");
}
inline std::string gen_setquery() {
  return env("XF_SETQUERY_GEN");
}
inline std::string setquery_reference() {
  return env("XF_SETQUERY_REF");
}
/// xeflow-setquery-ckc, or "" in a build without CUDA (where it does not exist).
inline std::string setquery_ckc() {
  return env("XF_SETQUERY_CKC");
}
/// xeflow-sink-baseline, or "" in a build without CUDA (where it does not exist).
inline std::string sink_baseline() {
  return env("XF_SINK_BASELINE");
}

/// The run's `--stats json` output.
inline nlohmann::json parse_json(const process_result& r) {
  INFO("stdout: " << r.out);
  INFO("stderr: " << r.err);
  nlohmann::json doc;
  REQUIRE_NOTHROW(doc = nlohmann::json::parse(r.out));
  return doc;
}

/// Every verify sink in the stats saw frames and no anomaly.
inline void check_verified(const nlohmann::json& doc) {
  int verify_sinks = 0;
  for (const auto& op : doc["operators"]) {
    if (op["class"] != "verify_sink") continue;
    ++verify_sinks;
    INFO("operator " << op["name"]);
    const auto& c = op["counters"];
    CHECK(c["frames"].get<std::uint64_t>() > 0);
    for (const char* k : {"lost", "duplicated", "reordered", "corrupt"})
      CHECK(c[k].get<std::uint64_t>() == 0);
  }
  CHECK(verify_sinks > 0);
}

/// `text` in a fresh file under the temporary directory, named after this process and `name`.
inline std::filesystem::path write_temp(const std::string& name, const std::string& text) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("xeflow-test-" + std::to_string(getpid()) + "-" + name);
  std::ofstream(path) << text;
  return path;
}

}  // namespace xf::test
