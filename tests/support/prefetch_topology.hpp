// A prefetch-source topology for the end-to-end tests (host mode in e2e, the GPU executor in gpu): a
// dataset of 16-byte records (u32 words, word w of record r = r · 1000 + w), the source sending word 0 of
// each record, a GPU scale by 3, and two subscriber groups on its output — a verify sink (replaying the
// source) and a write-back sink storing the result into word 2. Afterwards word 2 must be 3 · word 0 in
// every record and the other words untouched.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

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
         "  fields: {frame_size: " + std::to_string(frame) + ", capacity: 16, element: u32}\n"
         "  scaled: {frame_size: " + std::to_string(frame) + ", capacity: 16, element: u32}\n"
         "operators:\n"
         "  particles: {class: prefetch_source, threads: 3, outputs: [fields], params: {path: '" + path +
         "', record_bytes: 16, fields: '0:4'}}\n"
         "  triple: {class: scale, on: gpu, inputs: [fields], outputs: [scaled], params: {factor: 3}}\n"
         "  verify: {class: verify_sink, threads: 2, inputs: [scaled]}\n"
         "  store: {class: prefetch_writeback, threads: 2, inputs: [scaled], params: {path: '" + path +
         "', record_bytes: 16, fields: '8:4', records_per_frame: " + r + "}}\n"
         "runtime: {executor: " + executor + "}\n";
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
    const bool ok = w[0] == base && w[1] == base + 1 && w[2] == static_cast<std::uint32_t>(base * 3u) &&
                    w[3] == base + 3;
    if (!ok && wrong++ == 0) first_wrong = r;
  }
  INFO("first wrong record " << first_wrong);
  CHECK(wrong == 0);
}

}  // namespace xf::test
