// K-means generator and CPU reference. The reference's threads take contiguous ranges of reduction blocks
// and fill their sums while assigning; centre_update adds them in block order, which makes the result
// independent of the thread count.
#include "apps/kmeans/kmeans.hpp"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <limits>
#include <ostream>
#include <stdexcept>

#include "apps/dataset_support/block_generator.hpp"
#include "apps/dataset_support/dataset_file.hpp"
#include "apps/dataset_support/parallel.hpp"
#include "apps/dataset_support/seeded_random.hpp"
#include "apps/dataset_support/tool_cli.hpp"
#include "apps/kmeans/centre_update.hpp"
#include "operators/transforms/kmeans_assign.hpp"

namespace xf::apps::kmeans {
namespace {

// The generator's independent random sequences (block_seed streams).
constexpr std::uint64_t centres_stream = 0;
constexpr std::uint64_t particles_stream = 1;

struct true_centre {
  double x, y, z;
};

std::vector<true_centre> true_centres(const generate_config& cfg) {
  seeded_random rng(block_seed(cfg.seed, centres_stream, 0));
  std::vector<true_centre> c(cfg.clusters);
  for (auto& t : c) {
    t.x = (2 * rng.uniform() - 1) * cfg.extent;
    t.y = (2 * rng.uniform() - 1) * cfg.extent;
    t.z = (2 * rng.uniform() - 1) * cfg.extent;
  }
  return c;
}

void fill_block(const generate_config& cfg, const std::vector<true_centre>& centres, std::uint64_t block,
                particle* out, std::uint64_t count) {
  seeded_random rng(block_seed(cfg.seed, particles_stream, block));
  for (std::uint64_t i = 0; i < count; ++i) {
    const true_centre& c = centres[rng.below(centres.size())];
    particle& p = out[i];
    p.x = static_cast<float>(c.x + cfg.spread * rng.normal());
    p.y = static_cast<float>(c.y + cfg.spread * rng.normal());
    p.z = static_cast<float>(c.z + cfg.spread * rng.normal());
    p.cluster = unassigned_cluster;
    for (std::size_t w = 0; w < sizeof p.payload; w += 8) {
      const std::uint64_t v = rng.next();
      std::memcpy(p.payload + w, &v, 8);
    }
  }
}

void check_generate_config(const generate_config& cfg) {
  if (cfg.clusters == 0) throw usage_error("--clusters must be at least 1");
  if (!(cfg.spread >= 0) || !(cfg.extent >= 0)) throw usage_error("--spread and --extent must be >= 0");
}

}  // namespace

void generate_block(const generate_config& cfg, std::uint64_t block, std::vector<particle>& out) {
  check_generate_config(cfg);
  const std::uint64_t first = block * generate_block_particles;
  const std::uint64_t count =
      first < cfg.particles ? std::min(generate_block_particles, cfg.particles - first) : 0;
  out.resize(count);
  fill_block(cfg, true_centres(cfg), block, out.data(), count);
}

void generate_file(const std::string& path, const generate_config& cfg) {
  check_generate_config(cfg);
  const std::vector<true_centre> centres = true_centres(cfg);
  const std::uint64_t blocks = (cfg.particles + generate_block_particles - 1) / generate_block_particles;
  dataset_writer out(path);
  write_generated_blocks(
      blocks, cfg.threads,
      [&](std::uint64_t block, generated_block& b) {
        const std::uint64_t first = block * generate_block_particles;
        const std::uint64_t count = std::min(generate_block_particles, cfg.particles - first);
        b.data.resize(count * particle_bytes);
        fill_block(cfg, centres, block, reinterpret_cast<particle*>(b.data.data()), count);
      },
      out);
  out.close();
}

result run(std::span<particle> particles, const options& opt) {
  const auto start = std::chrono::steady_clock::now();
  if (opt.clusters == 0 || opt.iterations == 0 || opt.threads == 0 || opt.block_particles == 0)
    throw std::invalid_argument("kmeans: clusters, iterations, threads and block_particles must be >= 1");
  if (particles.size() < opt.clusters)
    throw std::invalid_argument("kmeans: " + std::to_string(particles.size()) +
                                " particles, fewer than the " + std::to_string(opt.clusters) + " clusters");
  const std::uint32_t k = opt.clusters;
  const std::uint64_t n = particles.size();
  centre_update update(n, k, opt.block_particles);
  const std::uint64_t blocks = update.blocks();
  const auto threads = static_cast<unsigned>(std::min<std::uint64_t>(opt.threads, blocks));

  std::vector<centre> centres = initial_centres(particles, k);
  // Centres as structure of arrays: the assignment loop reads all K of each coordinate per particle.
  std::vector<float> cx(k), cy(k), cz(k);
  auto load_centres = [&] {
    for (std::uint32_t c = 0; c < k; ++c) cx[c] = centres[c].x, cy[c] = centres[c].y, cz[c] = centres[c].z;
  };
  load_centres();

  std::vector<std::uint32_t> block_crc(blocks);
  std::vector<std::uint64_t> changed(threads);

  for (std::uint32_t iteration = 0; iteration < opt.iterations; ++iteration) {
    const bool last = iteration + 1 == opt.iterations;
    run_parallel(threads, [&](unsigned t) {
      const index_range mine = split_range(blocks, threads, t);
      std::vector<std::uint32_t> ids(last ? opt.block_particles : 0);  // the block's ids, for the digest
      std::uint64_t changed_here = 0;
      for (std::uint64_t b = mine.begin; b < mine.end; ++b) {
        // The sums are taken while assigning (one pass over the particles): the update's per-block sums.
        const std::span<partial_sum> sums = update.start_block(b);
        const index_range block = update.block(b);
        for (std::uint64_t i = block.begin; i < block.end; ++i) {
          particle& p = particles[i];
          const float x = p.x, y = p.y, z = p.z;
          float best = std::numeric_limits<float>::infinity();
          std::uint32_t nearest = 0;
          for (std::uint32_t c = 0; c < k; ++c) {
            // The GPU operator's rounding (kmeans_assign), so both assign every particle alike.
            const float d = squared_distance(x, y, z, cx[c], cy[c], cz[c]);
            if (d < best) best = d, nearest = c;
          }
          changed_here += p.cluster != nearest;
          p.cluster = nearest;
          centre_update::add(sums, nearest, x, y, z);
          if (last) ids[i - block.begin] = nearest;
        }
        if (last)
          block_crc[b] = static_cast<std::uint32_t>(
              crc32_z(0, reinterpret_cast<const Bytef*>(ids.data()), block.size() * sizeof(std::uint32_t)));
      }
      changed[t] = changed_here;
    });
    update.move_centres(centres);
    load_centres();
  }

  result r;
  r.particles = n;
  r.iterations = opt.iterations;
  r.threads = threads;
  r.dataset_bytes = n * particle_bytes;
  r.centres = std::move(centres);
  for (std::uint64_t c : changed) r.changed_last_iteration += c;
  r.digest = result_digest(block_crc, n, opt.block_particles, r.centres);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

std::uint32_t result_digest(std::span<const std::uint32_t> block_crcs, std::uint64_t particles,
                            std::uint64_t block_particles, std::span<const centre> centres) {
  uLong crc = block_crcs.empty() ? 0 : block_crcs[0];
  for (std::uint64_t b = 1; b < block_crcs.size(); ++b) {
    const std::uint64_t len = (std::min(particles, (b + 1) * block_particles) - b * block_particles) * 4;
    crc = crc32_combine(crc, block_crcs[b], static_cast<z_off_t>(len));
  }
  std::vector<std::uint32_t> centre_bits;
  for (const centre& c : centres)
    for (float v : {c.x, c.y, c.z}) centre_bits.push_back(std::bit_cast<std::uint32_t>(v));
  crc = crc32_z(crc, reinterpret_cast<const Bytef*>(centre_bits.data()), centre_bits.size() * 4);
  return static_cast<std::uint32_t>(crc);
}

std::span<particle> particles_of(const mapped_file& file, std::uint32_t clusters) {
  const std::uint64_t size = file.size();
  if (size % particle_bytes != 0)
    throw dataset_error(file.path(), size - size % particle_bytes,
                        "truncated particle record: " + std::to_string(size % particle_bytes) + " of " +
                            std::to_string(particle_bytes) + " bytes");
  const std::uint64_t n = size / particle_bytes;
  if (n < clusters)
    throw dataset_error(file.path(), std::nullopt,
                        "holds " + std::to_string(n) + " particles, fewer than the " +
                            std::to_string(clusters) + " clusters asked for");
  return {reinterpret_cast<particle*>(file.writable_bytes().data()), n};
}

result run_file(const std::string& path, const options& opt, unsigned repeats) {
  const auto start = std::chrono::steady_clock::now();
  const mapped_file file = mapped_file::open(path, map_access::read_write);
  const std::span<particle> particles = particles_of(file, opt.clusters);
  result r = run(particles, opt);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (unsigned i = 1; i < repeats; ++i) r.warm_seconds.push_back(run(particles, opt).seconds);
  return r;
}

nlohmann::json to_json(const result& r) {
  nlohmann::json centres = nlohmann::json::array();
  for (const centre& c : r.centres)
    centres.push_back({{"x", c.x}, {"y", c.y}, {"z", c.z}, {"particles", c.particles}});
  nlohmann::json j = {{"app", "kmeans"},
                      {"particles", r.particles},
                      {"clusters", r.centres.size()},
                      {"iterations", r.iterations},
                      {"centres", centres},
                      {"changed_last_iteration", r.changed_last_iteration},
                      {"digest", hex32(r.digest)},
                      {"threads", r.threads},
                      {"dataset_bytes", r.dataset_bytes},
                      {"passes", r.iterations}};
  add_timing(j, static_cast<double>(r.dataset_bytes) * r.iterations, r.seconds, r.warm_seconds);
  return j;
}

void print_result(std::ostream& out, const result& r, const std::string& detail) {
  out << r.particles << " particles, " << r.centres.size() << " clusters, " << r.iterations << " iterations, "
      << r.changed_last_iteration << " changed in the last\n";
  const auto precision = out.precision(9);  // every float's digits
  for (std::size_t c = 0; c < r.centres.size(); ++c)
    out << "  centre " << c << ": " << r.centres[c].x << " " << r.centres[c].y << " " << r.centres[c].z
        << " (" << r.centres[c].particles << " particles)\n";
  out.precision(precision);
  print_timing(out, r.digest, r.seconds, r.warm_seconds, static_cast<double>(r.dataset_bytes) * r.iterations,
               detail);
}

}  // namespace xf::apps::kmeans
