// End to end in host mode: the BigKernel address stage (prefetch_ranges → prefetch_addresses_* on the
// GPU's host executor → prefetch_assembler → consumer) run by xeflow-run — the K-means pass against
// prefetch_source's topology and the CPU reference, with patterns on and off; a text byte for byte; records
// through a shuffled index; and bad input named by operator, topic and offset.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "tests/support/address_stage_topology.hpp"
#include "tests/support/prefetch_topology.hpp"
#include "tests/support/run_checks.hpp"
#include "tests/support/subprocess.hpp"

namespace fs = std::filesystem;
using namespace xf::test;

namespace {

fs::path temp_file(const std::string& name) {
  return fs::temp_directory_path() / ("xeflow-addr-" + std::to_string(::getpid()) + "-" + name);
}

std::string read_all(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void write_all(const fs::path& path, const void* data, std::uint64_t bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  REQUIRE(f.good());
}

/// Bytes that differ between neighbours and do not repeat at any power-of-two period.
std::string pattern_text(std::uint64_t n) {
  std::string text(n, '\0');
  for (std::uint64_t i = 0; i < n; ++i) text[i] = static_cast<char>((i * 131 + i / 251 + 7) & 0xff);
  return text;
}

/// Runs `yaml` (host mode) and checks it completed with every verify sink clean; returns the stats.
nlohmann::json run_verified(const std::string& name, const std::string& yaml) {
  const fs::path topology = write_temp(name, yaml);
  const auto r = run_process({xeflow_run(), topology.string(), "-q", "--stats", "json"});
  fs::remove(topology);
  INFO(yaml << "\n" << r.err);
  REQUIRE_FALSE(r.timed_out);
  REQUIRE(r.exit_code == 0);
  const auto doc = parse_json(r);
  CHECK(doc["status"] == "completed");
  check_verified(doc);
  return doc;
}

/// Runs `yaml` (host mode), which must fail: returns stderr.
std::string run_failing(const std::string& name, const std::string& yaml) {
  const fs::path topology = write_temp(name, yaml);
  const auto r = run_process({xeflow_run(), topology.string(), "-q"}, std::chrono::seconds(120));
  fs::remove(topology);
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 1);
  return r.err;
}

nlohmann::json counters_of(const nlohmann::json& doc, const std::string& name) {
  for (const auto& op : doc["operators"])
    if (op["name"] == name) return op["counters"];
  FAIL("no operator " << name << " in the stats");
  return {};
}

}  // namespace

TEST_CASE("e2e.address_stage_kmeans_pass_equals_prefetch_source_and_the_cpu_reference") {
  // 100 000 particles: 48 frames of 2048 and one of 1696. The CPU reference's first iteration, the
  // prefetch_source pass and the address-stage pass with patterns on and off write the same ids, byte for
  // byte; patterns save most of the address bytes.
  constexpr std::uint64_t particles = 100'000;
  const fs::path reference = temp_file("ref.bin");
  const auto gen = run_process({gen_kmeans(), reference.string(), "--records", std::to_string(particles),
                                "--clusters", "5", "--seed", "3"});
  REQUIRE(gen.exit_code == 0);
  const std::string centres = first_particles_as_centres(reference, 5);
  const fs::path source_pass = temp_file("source.bin"), on = temp_file("on.bin"), off = temp_file("off.bin");
  for (const fs::path& copy : {source_pass, on, off})
    fs::copy_file(reference, copy, fs::copy_options::overwrite_existing);
  const auto cpu = run_process({kmeans_cpu(), reference.string(), "--clusters", "5", "--iterations", "1"});
  INFO(cpu.err);
  REQUIRE(cpu.exit_code == 0);

  run_verified("kmeans-source.yaml", kmeans_assign_topology(source_pass, centres, "host"));
  const auto with = counters_of(
      run_verified("kmeans-on.yaml", kmeans_address_topology(on, centres, true, "host")), "assemble");
  const auto without = counters_of(
      run_verified("kmeans-off.yaml", kmeans_address_topology(off, centres, false, "host")), "assemble");

  const std::string expected = read_all(reference);
  REQUIRE(expected.size() == particles * 64);
  CHECK(read_all(source_pass) == expected);
  CHECK(read_all(on) == expected);
  CHECK(read_all(off) == expected);

  for (const auto& c : {with, without}) {
    CHECK(c["addresses"] == particles * 3);
    CHECK(c["items"] == particles * 3);
    CHECK(c["bytes_gathered"] == particles * 12);
  }
  // Off: every address a word, a run header per lane, the frame's header and used words (49 frames of 64
  // lanes): just under one word per address. On: three patterns of 4 words per lane and frame.
  const std::uint64_t frame_words = 49 * (3 + 64);
  CHECK(without["address_bytes"] == 8 * (particles * 3 + 49 * 64 + frame_words));
  CHECK(with["address_bytes"].get<std::uint64_t>() * 4 < without["address_bytes"].get<std::uint64_t>());
  CHECK(without["compression_percent"].get<std::uint64_t>() < 100);
  CHECK(with["compression_percent"].get<std::uint64_t>() > 400);
  MESSAGE("address bytes, patterns on: " << with["address_bytes"] << ", off: " << without["address_bytes"]);
  for (const fs::path& f : {reference, source_pass, on, off}) fs::remove(f);
}

TEST_CASE("e2e.address_stage_streams_a_text_byte_for_byte") {
  // 1 MiB and 123 bytes, so the last frame is short. One lane: the frames are the text as it is. 32 lanes
  // of 128 bytes: byte k of lane l of frame o is the text's byte o·4096 + l·128 + k, at k·32 + l.
  const std::string text = pattern_text((1 << 20) + 123);
  const fs::path text_path = temp_file("text"), out = temp_file("text-out");
  write_all(text_path, text.data(), text.size());

  const auto one = counters_of(
      run_verified("text-1.yaml", text_address_topology(text_path, out, 1, 4096, true, 4096, "host")),
      "assemble");
  CHECK(read_all(out) == text);
  CHECK(one["addresses"] == text.size());
  CHECK(one["address_bytes"] == 8 * 257 * (3 + 1 + 4));  // 257 frames, one pattern each

  run_verified("text-32.yaml", text_address_topology(text_path, out, 32, 128, true, 4096, "host"));
  const std::string lanes = read_all(out);
  REQUIRE(lanes.size() >= text.size());
  std::uint64_t wrong = 0;
  for (std::uint64_t p = 0; p < lanes.size(); ++p) {
    const std::uint64_t o = p / 4096, l = p % 4096 % 32, k = p % 4096 / 32;
    const std::uint64_t at = o * 4096 + l * 128 + k;
    wrong += at < text.size() ? lanes[p] != text[at] : lanes[p] != '\0';
  }
  CHECK(wrong == 0);

  // Without patterns 8 bytes of address cross per byte of text (the address frames are 9 times the data:
  // 36 KiB frames, a null sink instead of the file).
  const auto off = counters_of(
      run_verified("text-off.yaml", text_address_topology(text_path, {}, 1, 4096, false, 36864, "host")),
      "assemble");
  CHECK(off["addresses"] == text.size());
  CHECK(off["address_bytes"].get<std::uint64_t>() > 8 * text.size());
  CHECK(off["compression_percent"] == 99);
  fs::remove(text_path);
  fs::remove(out);
}

TEST_CASE("e2e.address_stage_reads_records_through_a_shuffled_index") {
  // 20 000 records of 64 bytes; an index of all of them, shuffled, in frames of 8192 words that each open
  // with 4096 indices (the rest is room for the addresses), the last list ended by 2^64 − 1. The output is
  // bytes 0..16 of each record in index order.
  constexpr std::uint64_t records = 20'000, per_frame = 4096, frame_words = 8192;
  const std::string dataset = pattern_text(records * 64);
  std::vector<std::uint64_t> order(records);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(17));
  const std::uint64_t frames = (records + per_frame - 1) / per_frame;
  std::vector<std::uint64_t> index(frames * frame_words, ~std::uint64_t{0});
  for (std::uint64_t j = 0; j < records; ++j) index[j / per_frame * frame_words + j % per_frame] = order[j];
  const fs::path data_path = temp_file("records"), index_path = temp_file("index"),
                 out = temp_file("indexed-out");
  write_all(data_path, dataset.data(), dataset.size());
  write_all(index_path, index.data(), index.size() * 8);

  const auto c = counters_of(run_verified("indexed.yaml", indexed_address_topology(data_path, index_path, out,
                                                                                   per_frame, 65536, "host")),
                             "assemble");
  CHECK(c["addresses"] == records);
  const std::string got = read_all(out);
  REQUIRE(got.size() == records * 16);
  std::uint64_t wrong = 0;
  for (std::uint64_t j = 0; j < records; ++j)
    wrong += got.compare(j * 16, 16, dataset, order[j] * 64, 16) != 0;
  CHECK(wrong == 0);
  for (const fs::path& f : {data_path, index_path, out}) fs::remove(f);
}

TEST_CASE("e2e.address_stage_bad_input_names_operator_topic_and_offset") {
  const fs::path particles = temp_file("bad.bin"), fewer = temp_file("fewer.bin");
  REQUIRE(run_process({gen_kmeans(), particles.string(), "--records", "20000"}).exit_code == 0);
  REQUIRE(run_process({gen_kmeans(), fewer.string(), "--records", "1000"}).exit_code == 0);
  const std::string centres = "0 0 0; 50 50 50";

  SUBCASE("a lane overflowing its region") {
    // 8192 records per frame without patterns: 384 addresses per lane, regions of 126 words.
    const std::string err =
        run_failing("overflow.yaml", kmeans_address_topology(particles, centres, false, "host", 8192));
    CHECK(err.find("operator 'addresses', topic 'ranges', offset ") != std::string::npos);
    CHECK(err.find("(code 3)") != std::string::npos);
  }
  SUBCASE("addresses past the dataset's end") {
    // The ranges come from a file of 20 000 records, the assembler gathers from one of 1000.
    const std::string err =
        run_failing("past-end.yaml", kmeans_address_topology(particles, centres, true, "host", 2048, fewer));
    CHECK(err.find("operator 'assemble', topic 'addresses', offset ") != std::string::npos);
    CHECK(err.find("an address past the dataset's end") != std::string::npos);
  }
  fs::remove(particles);
  fs::remove(fewer);
}
