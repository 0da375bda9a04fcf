// A prefetch-source topology for the end-to-end tests (host mode in e2e, the GPU executor in gpu): a
// dataset of 16-byte records (u32 words, word w of record r = r · 1000 + w), the source sending word 0 of
// each record, a GPU scale by 3, and two subscriber groups on its output — a verify sink (replaying the
// source) and a write-back sink storing the result into word 2. Afterwards word 2 must be 3 · word 0 in
// every record and the other words untouched.
#pragma once

#include <doctest/doctest.h>

#include <unistd.h>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/support/run_checks.hpp"
#include "tests/support/subprocess.hpp"

namespace xf::test {

inline constexpr std::uint32_t prefetch_words = 4;

inline void write_prefetch_dataset(const std::filesystem::path& path, std::uint64_t records) {
  std::vector<std::uint32_t> words(records * prefetch_words);
  for (std::uint64_t r = 0; r < records; ++r)
    for (std::uint32_t w = 0; w < prefetch_words; ++w)
      words[r * prefetch_words + w] = static_cast<std::uint32_t>(r * 1000 + w);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(words.data()), static_cast<std::streamsize>(words.size() * 4));
  REQUIRE(f.good());
}

/// `frame` bytes per frame: records_per_frame = frame / 4 (one u32 read per record).
inline std::string prefetch_topology(const std::filesystem::path& dataset, const std::string& executor,
                                     std::uint64_t frame = 16384) {
  const std::string path = dataset.string();
  const std::string r = std::to_string(frame / 4);
  return "name: prefetch_fields\n"
         "topics:\n"
         "  fields: {frame_size: " +
         std::to_string(frame) +
         ", capacity: 16, element: u32}\n"
         "  scaled: {frame_size: " +
         std::to_string(frame) +
         ", capacity: 16, element: u32}\n"
         "operators:\n"
         "  particles: {class: prefetch_source, threads: 3, outputs: [fields], params: {path: '" +
         path +
         "', record_bytes: 16, fields: '0:4'}}\n"
         "  triple: {class: scale, on: gpu, inputs: [fields], outputs: [scaled], params: {factor: 3}}\n"
         "  verify: {class: verify_sink, threads: 2, inputs: [scaled]}\n"
         "  store: {class: prefetch_writeback, threads: 2, inputs: [scaled], params: {path: '" +
         path + "', record_bytes: 16, fields: '8:4', records_per_frame: " + r +
         "}}\n"
         "runtime: {executor: " +
         executor + "}\n";
}

/// Checks the dataset after a run: word 2 = 3 · word 0 (u32 wrap-around), words 0, 1, 3 as generated.
inline void check_prefetch_written_back(const std::filesystem::path& dataset, std::uint64_t records) {
  std::ifstream f(dataset, std::ios::binary);
  std::vector<std::uint32_t> words(records * prefetch_words);
  f.read(reinterpret_cast<char*>(words.data()), static_cast<std::streamsize>(words.size() * 4));
  REQUIRE(f.gcount() == static_cast<std::streamsize>(words.size() * 4));
  std::uint64_t wrong = 0, first_wrong = records;
  for (std::uint64_t r = 0; r < records; ++r) {
    const std::uint32_t* w = &words[r * prefetch_words];
    const auto base = static_cast<std::uint32_t>(r * 1000);
    const bool ok =
        w[0] == base && w[1] == base + 1 && w[2] == static_cast<std::uint32_t>(base * 3u) && w[3] == base + 3;
    if (!ok && wrong++ == 0) first_wrong = r;
  }
  INFO("first wrong record " << first_wrong);
  CHECK(wrong == 0);
}

}  // namespace xf::test

namespace xf::test {

/// The first `k` particles' x y z of a K-means dataset (64-byte records, floats at 0, 4, 8) as a centres
/// parameter, each printed with 17 digits so that it parses back to the very float.
inline std::string first_particles_as_centres(const std::filesystem::path& dataset, std::uint32_t k) {
  std::ifstream f(dataset, std::ios::binary);
  std::string text;
  for (std::uint32_t c = 0; c < k; ++c) {
    char record[64];
    f.read(record, 64);
    REQUIRE(f.gcount() == 64);
    for (int i = 0; i < 3; ++i) {
      float v = 0;
      std::memcpy(&v, record + 4 * i, 4);
      char number[40];
      std::snprintf(number, sizeof number, "%.17g", static_cast<double>(v));
      text += (text.empty() ? "" : i == 0 ? "; " : " ") + std::string(number);
    }
  }
  return text;
}

/// One K-means assignment pass: x, y, z of each 64-byte particle to the GPU (12 of 64 bytes), each
/// particle's nearest centre back into its cluster field (bytes 12..16), a verify sink on the ids.
inline std::string kmeans_assign_topology(const std::filesystem::path& dataset, const std::string& centres,
                                          const std::string& executor) {
  const std::string path = dataset.string();
  return "name: kmeans_assign\n"
         "topics:\n"
         "  xyz: {frame_size: 64KiB, capacity: 16, element: f32}\n"
         "  ids: {frame_size: 64KiB, capacity: 16, element: f32}\n"
         "operators:\n"
         "  particles: {class: prefetch_source, threads: 3, outputs: [xyz], params: {path: '" +
         path +
         "', record_bytes: 64, fields: '0:12'}}\n"
         "  assign: {class: kmeans_assign, on: gpu, inputs: [xyz], outputs: [ids], params: {centres: '" +
         centres +
         "'}}\n"
         "  verify: {class: verify_sink, threads: 2, inputs: [ids]}\n"
         "  store: {class: prefetch_writeback, threads: 2, inputs: [ids], params: {path: '" +
         path +
         "', record_bytes: 64, fields: '12:4', records_per_frame: 5461}}\n"
         "runtime: {executor: " +
         executor + "}\n";
}

/// A generated K-means dataset, copied: one copy gets the CPU reference's first iteration
/// (xeflow-kmeans-cpu --iterations 1: ids of the nearest of the first 5 particles), the other one
/// `run_pass(copy, centres)` — xeflow's pass, or a baseline's; afterwards the two files must be
/// byte-identical. `tag` names the temporary files.
template <class RunPass>
void check_kmeans_pass_matches_reference(const std::string& tag, std::uint64_t particles, RunPass run_pass) {
  namespace fs = std::filesystem;
  const std::string name = std::to_string(::getpid()) + "-" + tag;
  const fs::path reference = fs::temp_directory_path() / ("xeflow-kmeans-ref-" + name);
  const fs::path streamed = fs::temp_directory_path() / ("xeflow-kmeans-xf-" + name);
  const auto gen = run_process({gen_kmeans(), reference.string(), "--records", std::to_string(particles),
                                "--clusters", "5", "--seed", "3"});
  REQUIRE(gen.exit_code == 0);
  fs::copy_file(reference, streamed, fs::copy_options::overwrite_existing);
  const std::string centres = first_particles_as_centres(reference, 5);
  const auto cpu = run_process({kmeans_cpu(), reference.string(), "--clusters", "5", "--iterations", "1"});
  INFO(cpu.err);
  REQUIRE(cpu.exit_code == 0);
  run_pass(streamed, centres);
  std::ifstream a(reference, std::ios::binary), b(streamed, std::ios::binary);
  const std::string ra((std::istreambuf_iterator<char>(a)), std::istreambuf_iterator<char>());
  const std::string rb((std::istreambuf_iterator<char>(b)), std::istreambuf_iterator<char>());
  REQUIRE(ra.size() == particles * 64);
  REQUIRE(rb.size() == ra.size());
  std::uint64_t differing = 0;
  for (std::uint64_t r = 0; r < particles; ++r) differing += ra.compare(r * 64, 64, rb, r * 64, 64) != 0;
  CHECK(differing == 0);
  fs::remove(reference);
  fs::remove(streamed);
}

/// check_kmeans_pass_matches_reference's pass through xeflow: the K-means topology on `executor`, run by
/// `run_topology(topology file)`.
template <class RunTopology>
auto xeflow_kmeans_pass(const std::string& executor, RunTopology run_topology) {
  return [executor, run_topology](const std::filesystem::path& dataset, const std::string& centres) {
    const std::filesystem::path topology =
        write_temp("kmeans-" + executor + ".yaml", kmeans_assign_topology(dataset, centres, executor));
    run_topology(topology);
    std::filesystem::remove(topology);
  };
}

}  // namespace xf::test
