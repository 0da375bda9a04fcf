// Fixtures the BigKernel applications' tests share: a scratch directory removed afterwards, whole-file
// read/write, and running one of the tools (its path from the environment meson test sets).
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/subprocess.hpp"

namespace xf::test {

/// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction.
class scratch_dir {
 public:
  scratch_dir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && *tmp != 0 ? tmp : "/tmp") + "/xeflow-apps-test-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = pattern;
  }
  ~scratch_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE_MESSAGE(out.good(), "cannot write " << path);
}

/// Runs the tool whose path the environment variable `env` holds (set by meson test), with `args`.
inline process_result run_tool(const char* env, const std::vector<std::string>& args) {
  const char* tool = std::getenv(env);
  REQUIRE_MESSAGE(tool != nullptr, env << " (the tool's path) is not set; run through meson test");
  std::vector<std::string> argv{tool};
  argv.insert(argv.end(), args.begin(), args.end());
  const process_result r = run_process(argv, std::chrono::seconds(60));
  REQUIRE_FALSE(r.timed_out);
  return r;
}

}  // namespace xf::test
