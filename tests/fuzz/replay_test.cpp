// Replays every fuzz target's corpus through the target (tests/fuzz/targets.txt names them and their seed
// folders): the seeds, and each input a fuzzer once crashed on, saved as a regression. Runs in every build,
// without libFuzzer, so a defect fuzzing found stays fixed. Inputs of defects not fixed yet wait in
// tests/fuzz/pending/<target>/, outside the corpus, until their fix moves them in.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_target.hpp"
#include "tests/support/run_checks.hpp"

namespace {

namespace fs = std::filesystem;

using target_function = int (*)(xf::fuzz::input);

const std::map<std::string, target_function>& targets() {
  static const std::map<std::string, target_function> table = {
      {"topology", xf::fuzz::topology},           {"overrides", xf::fuzz::overrides},
      {"datatype_yaml", xf::fuzz::datatype_yaml}, {"datatype_load", xf::fuzz::datatype_load},
      {"table_schema", xf::fuzz::table_schema},   {"table_file", xf::fuzz::table_file},
      {"table_csv", xf::fuzz::table_csv},         {"query_text", xf::fuzz::query_text},
      {"address_frame", xf::fuzz::address_frame}, {"units", xf::fuzz::units},
      {"command_line", xf::fuzz::command_line},
  };
  return table;
}

struct manifest_line {
  std::string target;
  std::vector<fs::path> folders;  // its corpus first, then its seed folders
};

std::vector<manifest_line> manifest() {
  const fs::path root = xf::test::source_root();
  std::ifstream in(root / "tests/fuzz/targets.txt");
  REQUIRE(in);
  std::vector<manifest_line> lines;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    manifest_line m;
    std::string max_len, folder;
    words >> m.target >> max_len;
    m.folders.push_back(root / "tests/fuzz/corpus" / m.target);
    while (words >> folder) m.folders.push_back(root / folder);
    lines.push_back(std::move(m));
  }
  return lines;
}

/// The files of `folder` and its subfolders (libFuzzer reads a corpus folder's the same way), sorted.
std::vector<fs::path> corpus_files(const fs::path& folder) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(folder))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("fuzz.manifest_names_every_target") {
  std::vector<std::string> listed;
  for (const manifest_line& m : manifest()) listed.push_back(m.target);
  std::sort(listed.begin(), listed.end());
  std::vector<std::string> compiled;
  for (const auto& [name, function] : targets()) compiled.push_back(name);
  CHECK(listed == compiled);
}

TEST_CASE("fuzz.corpora_replay_cleanly") {
  for (const manifest_line& m : manifest()) {
    INFO("target: " << m.target);
    const auto found = targets().find(m.target);
    REQUIRE(found != targets().end());
    std::size_t replayed = 0;
    for (const fs::path& folder : m.folders) {
      REQUIRE_MESSAGE(fs::is_directory(folder), folder.string() << " is not a folder");
      for (const fs::path& file : corpus_files(folder)) {
        INFO("input: " << file.string());
        std::ifstream in(file, std::ios::binary);
        const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                              std::istreambuf_iterator<char>());
        CHECK_NOTHROW(found->second(xf::fuzz::input(bytes.data(), bytes.size())));
        ++replayed;
      }
    }
    // Every target has seeds: a corpus that vanished would make this test pass by checking nothing.
    CHECK_MESSAGE(replayed >= 3, m.target << " replayed only " << replayed << " inputs");
  }
}
