// K-means generator and CPU reference: deterministic generation, results identical for any thread count,
// agreement with a naive single-threaded Lloyd's algorithm, cluster ids written back into the file,
// malformed files named by offset, and the tools' exit codes.
#include <doctest/doctest.h>
#include <zlib.h>

#include <bit>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "apps/dataset_support/dataset_file.hpp"
#include "apps/kmeans/kmeans.hpp"
#include "operators/transforms/kmeans_assign.hpp"
#include "tests/apps/dataset_fixture.hpp"

using namespace xf::apps;
using namespace xf::apps::kmeans;
using xf::test::read_file;
using xf::test::scratch_dir;
using xf::test::write_file;

namespace {

generate_config small_config(std::uint64_t particles = 20'000) {
  generate_config cfg;
  cfg.particles = particles;
  cfg.clusters = 5;
  cfg.seed = 42;
  return cfg;
}

std::vector<particle> as_particles(const std::string& bytes) {
  REQUIRE(bytes.size() % sizeof(particle) == 0);
  std::vector<particle> out(bytes.size() / sizeof(particle));
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

/// Lloyd's algorithm written plainly: one thread, sums in double over all particles in order.
struct naive_result {
  std::vector<centre> centres;
  std::vector<std::uint32_t> ids;
};
naive_result naive_kmeans(const std::vector<particle>& ps, std::uint32_t k, std::uint32_t iterations) {
  std::vector<float> cx(k), cy(k), cz(k);
  for (std::uint32_t c = 0; c < k; ++c) cx[c] = ps[c].x, cy[c] = ps[c].y, cz[c] = ps[c].z;
  naive_result r;
  r.ids.assign(ps.size(), 0);
  std::vector<std::uint64_t> counts(k);
  for (std::uint32_t it = 0; it < iterations; ++it) {
    std::vector<double> sx(k), sy(k), sz(k);
    std::fill(counts.begin(), counts.end(), 0);
    for (std::size_t i = 0; i < ps.size(); ++i) {
      std::uint32_t best = 0;
      float best_d = std::numeric_limits<float>::infinity();
      for (std::uint32_t c = 0; c < k; ++c) {
        const float d = xf::squared_distance(ps[i].x, ps[i].y, ps[i].z, cx[c], cy[c], cz[c]);
        if (d < best_d) best_d = d, best = c;
      }
      r.ids[i] = best;
      sx[best] += ps[i].x, sy[best] += ps[i].y, sz[best] += ps[i].z, ++counts[best];
    }
    for (std::uint32_t c = 0; c < k; ++c)
      if (counts[c] > 0) {
        cx[c] = static_cast<float>(sx[c] / static_cast<double>(counts[c]));
        cy[c] = static_cast<float>(sy[c] / static_cast<double>(counts[c]));
        cz[c] = static_cast<float>(sz[c] / static_cast<double>(counts[c]));
      }
  }
  for (std::uint32_t c = 0; c < k; ++c) r.centres.push_back({cx[c], cy[c], cz[c], counts[c]});
  return r;
}

std::uint32_t naive_digest(const naive_result& n) {
  uLong crc = crc32(0, nullptr, 0);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(n.ids.data()), static_cast<uInt>(n.ids.size() * 4));
  for (const centre& c : n.centres)
    for (float v : {c.x, c.y, c.z}) {
      const auto bits = std::bit_cast<std::uint32_t>(v);
      crc = crc32(crc, reinterpret_cast<const Bytef*>(&bits), 4);
    }
  return static_cast<std::uint32_t>(crc);
}

}  // namespace

TEST_CASE("kmeans.generator_is_deterministic_for_a_seed") {
  scratch_dir dir;
  generate_config cfg = small_config(150'000);  // three generator blocks, the last one short
  cfg.threads = 1;
  generate_file(dir.file("a"), cfg);
  cfg.threads = 3;
  generate_file(dir.file("b"), cfg);
  const std::string a = read_file(dir.file("a"));
  CHECK(a.size() == 150'000 * particle_bytes);
  CHECK(a == read_file(dir.file("b")));
  cfg.seed = 43;
  generate_file(dir.file("c"), cfg);
  CHECK(a != read_file(dir.file("c")));

  const std::vector<particle> ps = as_particles(a);
  for (const particle& p : ps) REQUIRE(p.cluster == unassigned_cluster);
  std::vector<particle> block;
  generate_block(small_config(150'000), 2, block);
  REQUIRE(block.size() == 150'000 - 2 * generate_block_particles);
  CHECK(std::memcmp(block.data(), &ps[2 * generate_block_particles], block.size() * sizeof(particle)) == 0);
}

TEST_CASE("kmeans.same_result_for_1_2_7_threads") {
  scratch_dir dir;
  generate_file(dir.file("base"), small_config());
  const std::string original = read_file(dir.file("base"));
  options opt;
  opt.clusters = 5;
  opt.block_particles = 1000;  // 20 reduction blocks: every thread count splits them differently
  std::vector<result> results;
  std::vector<std::string> written;
  for (unsigned threads : {1u, 2u, 7u}) {
    const std::string path = dir.file("t" + std::to_string(threads));
    write_file(path, original);
    opt.threads = threads;
    results.push_back(run_file(path, opt));
    written.push_back(read_file(path));
  }
  for (std::size_t i = 1; i < results.size(); ++i) {
    CAPTURE(i);
    CHECK(results[i].centres == results[0].centres);
    CHECK(results[i].digest == results[0].digest);
    CHECK(results[i].changed_last_iteration == results[0].changed_last_iteration);
    CHECK(written[i] == written[0]);
  }
  CHECK(results[2].threads == 7);
}

TEST_CASE("kmeans.matches_a_naive_computation") {
  scratch_dir dir;
  generate_file(dir.file("p"), small_config());
  const std::vector<particle> original = as_particles(read_file(dir.file("p")));
  const naive_result naive = naive_kmeans(original, 5, 10);

  SUBCASE("one reduction block: bit-identical") {
    std::vector<particle> ps = original;
    options opt;
    opt.clusters = 5;
    opt.threads = 3;
    opt.block_particles = ps.size();
    const result r = run(ps, opt);
    CHECK(r.centres == naive.centres);
    for (std::size_t i = 0; i < ps.size(); ++i) REQUIRE(ps[i].cluster == naive.ids[i]);
    CHECK(r.digest == naive_digest(naive));
  }
  SUBCASE("many blocks: the same ids, centres within rounding") {
    std::vector<particle> ps = original;
    options opt;
    opt.clusters = 5;
    opt.threads = 4;
    opt.block_particles = 777;
    const result r = run(ps, opt);
    REQUIRE(r.centres.size() == naive.centres.size());
    for (std::size_t c = 0; c < r.centres.size(); ++c) {
      CHECK(r.centres[c].x == doctest::Approx(naive.centres[c].x).epsilon(1e-5));
      CHECK(r.centres[c].y == doctest::Approx(naive.centres[c].y).epsilon(1e-5));
      CHECK(r.centres[c].z == doctest::Approx(naive.centres[c].z).epsilon(1e-5));
      CHECK(r.centres[c].particles == naive.centres[c].particles);
    }
    for (std::size_t i = 0; i < ps.size(); ++i) REQUIRE(ps[i].cluster == naive.ids[i]);
  }
}

TEST_CASE("kmeans.writes_cluster_ids_back") {
  scratch_dir dir;
  generate_file(dir.file("p"), small_config());
  const std::string before = read_file(dir.file("p"));
  options opt;
  opt.clusters = 5;
  opt.iterations = 3;
  opt.threads = 2;
  const result r = run_file(dir.file("p"), opt);
  const std::string after = read_file(dir.file("p"));
  REQUIRE(after.size() == before.size());

  const naive_result naive = naive_kmeans(as_particles(before), 5, 3);
  const std::vector<particle> ps = as_particles(after);
  const std::vector<particle> old = as_particles(before);
  for (std::size_t i = 0; i < ps.size(); ++i) {
    REQUIRE(ps[i].cluster == naive.ids[i]);
    // Only the cluster field changed: coordinates and payload are as generated.
    REQUIRE(std::memcmp(&ps[i], &old[i], offsetof(particle, cluster)) == 0);
    REQUIRE(std::memcmp(ps[i].payload, old[i].payload, sizeof old[i].payload) == 0);
  }
  CHECK(r.changed_last_iteration <= r.particles);
  std::uint64_t assigned = 0;
  for (const centre& c : r.centres) assigned += c.particles;
  CHECK(assigned == r.particles);
}

TEST_CASE("kmeans.malformed_files_name_the_offset") {
  scratch_dir dir;
  generate_file(dir.file("p"), small_config(100));
  const std::string good = read_file(dir.file("p"));
  options opt;
  opt.clusters = 5;

  SUBCASE("truncated last record") {
    write_file(dir.file("t"), good.substr(0, 99 * particle_bytes + 10));
    try {
      run_file(dir.file("t"), opt);
      FAIL("no error");
    } catch (const dataset_error& e) {
      CHECK(e.offset() == 99 * particle_bytes);
      CHECK(std::string(e.what()).find(dir.file("t")) != std::string::npos);
      CHECK(std::string(e.what()).find("byte offset 6336") != std::string::npos);
    }
  }
  SUBCASE("fewer particles than clusters") {
    write_file(dir.file("few"), good.substr(0, 4 * particle_bytes));
    CHECK_THROWS_WITH_AS(run_file(dir.file("few"), opt), doctest::Contains("fewer than the 5 clusters"),
                         dataset_error);
  }
  SUBCASE("missing file") {
    CHECK_THROWS_WITH_AS(run_file(dir.file("none"), opt), doctest::Contains("cannot open"), dataset_error);
  }
}

TEST_CASE("kmeans.command_line_exit_codes") {
  scratch_dir dir;
  const std::string file = dir.file("p");
  auto gen = xf::test::run_tool("XF_GEN_KMEANS", {file, "--records", "2k", "--clusters", "3", "--seed", "9"});
  REQUIRE_MESSAGE(gen.exit_code == 0, gen.err);
  CHECK(read_file(file).size() == 2000 * particle_bytes);

  const auto json =
      xf::test::run_tool("XF_KMEANS_CPU", {file, "--clusters", "3", "--threads", "3", "--json"});
  REQUIRE_MESSAGE(json.exit_code == 0, json.err);
  const auto j = nlohmann::json::parse(json.out);
  CHECK(j["particles"] == 2000);
  CHECK(j["centres"].size() == 3);
  CHECK(j["digest"].get<std::string>().rfind("0x", 0) == 0);

  const auto repeated =
      xf::test::run_tool("XF_KMEANS_CPU", {file, "--clusters", "3", "--json", "--repeat", "3"});
  REQUIRE_MESSAGE(repeated.exit_code == 0, repeated.err);
  const auto jr = nlohmann::json::parse(repeated.out);
  CHECK(jr["warm_seconds"].size() == 2);
  CHECK(jr["digest"] == j["digest"]);
  CHECK(jr["centres"] == j["centres"]);

  CHECK(xf::test::run_tool("XF_KMEANS_CPU", {"--help"}).exit_code == 0);
  CHECK(xf::test::run_tool("XF_GEN_KMEANS", {"--help"}).exit_code == 0);
  CHECK(xf::test::run_tool("XF_KMEANS_CPU", {file, "--clusters", "0"}).exit_code == 2);
  CHECK(xf::test::run_tool("XF_KMEANS_CPU", {file, "--no-such-option"}).exit_code == 2);
  CHECK(xf::test::run_tool("XF_KMEANS_CPU", {}).exit_code == 2);
  const auto bad_count = xf::test::run_tool("XF_GEN_KMEANS", {dir.file("q"), "--records", "12X"});
  CHECK(bad_count.exit_code == 2);
  CHECK(bad_count.err.find("--records '12X'") != std::string::npos);
  CHECK(
      xf::test::run_tool("XF_GEN_KMEANS", {dir.file("q"), "--records", "1k", "--bytes", "1MiB"}).exit_code ==
      2);
  const auto missing = xf::test::run_tool("XF_KMEANS_CPU", {dir.file("missing")});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find(dir.file("missing")) != std::string::npos);
  write_file(dir.file("short"), std::string(100, '\0'));
  const auto truncated = xf::test::run_tool("XF_KMEANS_CPU", {dir.file("short"), "--clusters", "1"});
  CHECK(truncated.exit_code == 1);
  CHECK(truncated.err.find("byte offset 64") != std::string::npos);
}
