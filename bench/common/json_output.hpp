// A benchmark program's JSON: the stamp every recording starts with, and the write that says where it went
// or why it could not. Header-only, shared by the C++ benchmark programs that write nlohmann::json.
#pragma once

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "bench/common/run_stamp.hpp"

namespace xf::bench {

/// {"benchmark", "device", "date", "commit", "command_line"}: `commit` as given on the command line, else
/// git's.
inline nlohmann::json stamped(const std::string& benchmark, const std::string& device,
                              const std::string& commit, int argc, char** argv) {
  nlohmann::json doc;
  doc["benchmark"] = benchmark;
  doc["device"] = device;
  doc["date"] = utc_now();
  doc["commit"] = commit.empty() ? git_commit() : commit;
  doc["command_line"] = command_line(argc, argv);
  return doc;
}

/// Writes `doc` to `path` (one space of indent a level) and says so on stdout; false, with the reason on
/// stderr, where the file cannot be written.
inline bool write_json(const std::string& path, const nlohmann::json& doc, const std::string& program) {
  std::ofstream out(path);
  out << doc.dump(1) << "\n";
  if (!out) {
    std::fprintf(stderr, "%s: cannot write %s\n", program.c_str(), path.c_str());
    return false;
  }
  std::printf("wrote %s\n", path.c_str());
  return true;
}

}  // namespace xf::bench
