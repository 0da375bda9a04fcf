// K-means (BigKernel §V): the dataset generator and the multi-threaded CPU reference (Lloyd's algorithm),
// which is both the expected result and the CPU baseline of the prefetch-source benchmark.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "apps/dataset_support/dataset_file.hpp"
#include "apps/kmeans/kmeans_format.hpp"

namespace xf::apps::kmeans {

struct generate_config {
  std::uint64_t particles = 1'000'000;
  std::uint32_t clusters = 8;  ///< K true centres, uniform in [-extent, extent]^3
  double spread = 5.0;         ///< standard deviation of each coordinate around its centre
  double extent = 100.0;
  std::uint64_t seed = 1;
  unsigned threads = 1;  ///< does not change the file
};

/// Writes `cfg.particles` particles: each picks one of the K centres uniformly and scatters around it
/// (Gaussian); cluster = unassigned_cluster. The same seed gives the same file for any thread count.
/// dataset_error naming the file when it cannot be written; std::invalid_argument for clusters == 0.
void generate_file(const std::string& path, const generate_config& cfg);

/// The particles of generated block `block` (blocks of generate_block_particles; the last may be short),
/// exactly as generate_file writes them. For tests.
void generate_block(const generate_config& cfg, std::uint64_t block, std::vector<particle>& out);
inline constexpr std::uint64_t generate_block_particles = 65536;

struct options {
  std::uint32_t clusters = 8;
  std::uint32_t iterations = 10;
  unsigned threads = 1;
  /// Particles per reduction block. Partial sums are kept per block and added in block order, so the
  /// centres (and everything else) are bit-identical for every thread count; only this changes rounding.
  std::uint64_t block_particles = 65536;
};

struct centre {
  float x = 0, y = 0, z = 0;
  std::uint64_t particles = 0;  ///< assigned to it in the last iteration
  friend bool operator==(const centre&, const centre&) = default;
};

struct result {
  std::uint64_t particles = 0;
  std::uint32_t iterations = 0;
  std::vector<centre> centres;               ///< after the last update
  std::uint64_t changed_last_iteration = 0;  ///< particles whose cluster changed in the last assignment
  /// CRC-32 (zlib) of the cluster ids (u32 LE, particle order) followed by every centre's x, y, z float
  /// bits (u32 LE, centre order).
  std::uint32_t digest = 0;
  // Not part of the result proper:
  unsigned threads = 0;
  std::uint64_t dataset_bytes = 0;
  double seconds = 0;                ///< the first run, mapping included (run_file)
  std::vector<double> warm_seconds;  ///< the repeated runs on the same mapping (run_file with repeats)
};

/// Lloyd's algorithm on `particles` in place: centres start at the first K particles; each of
/// `opt.iterations` iterations assigns every particle to its nearest centre (squared distance in float,
/// ties to the lower index), stores that index in `cluster`, then moves each centre to the mean (summed in
/// double) of its particles (a centre without particles stays). std::invalid_argument when there are fewer
/// particles than clusters, or clusters, iterations, threads or block_particles is 0.
result run(std::span<particle> particles, const options& opt);

/// The particles of a mapped particle file (mapped read_write: Lloyd's runs store the ids in place).
/// dataset_error naming the file (and the offset of a truncated last record), or when it holds fewer
/// particles than `clusters`.
std::span<particle> particles_of(const mapped_file& file, std::uint32_t clusters);

/// The result's digest (see result::digest) from the CRC-32 of each reduction block's cluster ids
/// (`block_particles` ids per block, the last block the rest of `particles`): the blocks' CRCs are combined
/// in block order, so they may be computed by any threads.
std::uint32_t result_digest(std::span<const std::uint32_t> block_crcs, std::uint64_t particles,
                            std::uint64_t block_particles, std::span<const centre> centres);

/// run() on a file mapped read-write: the cluster ids are written back into the file. dataset_error naming
/// the file (and the offset of a truncated last record), or when it holds fewer particles than clusters.
/// `seconds` covers mapping, the iterations and the digest. With repeats > 1, run() runs that many times
/// on the one mapping (the same result each time, `changed_last_iteration` included when iterations > 1)
/// and warm_seconds holds the later runs' times.
result run_file(const std::string& path, const options& opt, unsigned repeats = 1);

/// {"app":"kmeans", particles, clusters, iterations, centres: [{x,y,z,particles}], changed_last_iteration,
///  digest: "0x…", threads, dataset_bytes, passes (= iterations), seconds, gb_per_s (dataset bytes ×
///  passes / seconds / 10^9), and with repeats warm_seconds, warm_gb_per_s (add_timing)}.
nlohmann::json to_json(const result& r);

/// The tools' text form of `r`: particles, clusters, iterations and changed particles, every centre, then
/// print_timing's lines with `detail`.
void print_result(std::ostream& out, const result& r, const std::string& detail);

}  // namespace xf::apps::kmeans
