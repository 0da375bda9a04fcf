// What a benchmark program stamps its JSON with, besides the device: the UTC date, the tree's commit and
// its own command line. Header-only, shared by the C++ benchmark programs.
#pragma once

#include <cstdio>
#include <ctime>
#include <string>

namespace xf::bench {

/// "2026-11-27T14:30:15Z".
inline std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

/// `git rev-parse --short HEAD` of the working directory, or "" where there is no git or no repository
/// (a copied tree: pass the commit on the command line instead).
inline std::string git_commit() {
  std::FILE* p = popen("git rev-parse --short HEAD 2>/dev/null", "r");
  if (!p) return "";
  char text[64] = {};
  const bool got = std::fgets(text, sizeof text, p) != nullptr;
  pclose(p);
  std::string s = got ? text : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

/// The program's arguments as a shell would take them back (arguments with spaces or quotes quoted).
inline std::string command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (i > 0) s += ' ';
    s += a.find_first_of(" \t'\"") == std::string::npos ? a : "'" + a + "'";
  }
  return s;
}

}  // namespace xf::bench
