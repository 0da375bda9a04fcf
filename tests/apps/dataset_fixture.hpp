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

#include "tests/support/scratch_dir.hpp"
#include "tests/support/subprocess.hpp"

namespace xf::test {

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
