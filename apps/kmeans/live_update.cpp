// Lloyd's update step inside the run: ids folded by block as they stream, centres published per pass.
#include "apps/kmeans/live_update.hpp"

#include <zlib.h>

#include <bit>
#include <fstream>
#include <nlohmann/json.hpp>

#include "framework/core/errors.hpp"
#include "operators/transforms/kmeans_assign.hpp"

namespace xf::apps::kmeans {

void kmeans_update::describe(operator_schema<params>& s) {
  s.describe(
       "K-means' update step in the run that assigns: folds the ids of each pass as they stream, publishes "
       "the "
       "moved centres for the next pass (a shared object kmeans_assign reads), writes the result at the end")
      .not_replayable();
  s.param(&params::path, "path", "the particle file (the prefetch source's dataset)", required);
  s.param(&params::clusters, "clusters", "K", params{}.clusters, 1, kmeans_assign_op::max_centres);
  s.param(&params::iterations, "iterations", "passes (the source's passes)", params{}.iterations, 1);
  s.param(&params::records_per_frame, "records_per_frame", "the source's records_per_frame (must be set)",
          params{}.records_per_frame, 0);
  s.param(&params::block_particles, "block_particles", "particles per reduction block (the reference's)",
          params{}.block_particles, 1);
  s.param(&params::result, "result", "JSON file for the result (centres, changed per pass, block CRCs)",
          required);
  s.shared("centres", object_access::write, "the centres it publishes: clusters xyz triples of f32",
           element_set{element_type::f32})
      .check_object([](const params& p, std::uint64_t bytes) -> std::string {
        if (bytes < 3 * sizeof(float) * p.clusters)
          return "holds " + std::to_string(bytes) + " bytes, not " + std::to_string(p.clusters) +
                 " centres of 12";
        return {};
      });
}

void kmeans_update::on_start(const operator_setup& setup) {
  name_ = setup.name;
  if (params_.records_per_frame <= 0)
    throw std::invalid_argument("records_per_frame must be set to the prefetch source's");
  centres_object_ = setup.objects.at(0);
  file_ = mapped_file::open(params_.path, map_access::read_write);
  particles_ = particles_of(file_, params_.clusters);
  const std::uint64_t n = particles_.size();
  const auto r = static_cast<std::uint64_t>(params_.records_per_frame);
  frames_per_pass_ = (n + r - 1) / r;
  update_ = std::make_unique<centre_update>(n, params_.clusters,
                                            static_cast<std::uint64_t>(params_.block_particles));
  arrived_.reset(new std::atomic<std::uint64_t>[update_->blocks()]);
  for (std::uint64_t b = 0; b < update_->blocks(); ++b) arrived_[b].store(0, std::memory_order_relaxed);
  block_crc_.assign(update_->blocks(), 0);
  ids_.resize(n);
  for (std::uint64_t i = 0; i < n; ++i) ids_[i] = particles_[i].cluster;
  centres_ = initial_centres(particles_, params_.clusters);
  const std::span<float> out = centres_object_->edit_as<float>();
  for (std::uint32_t c = 0; c < params_.clusters; ++c) {
    out[3 * c] = centres_[c].x;
    out[3 * c + 1] = centres_[c].y;
    out[3 * c + 2] = centres_[c].z;
  }
  centres_object_->publish(0);
  centres_object_->promise(frames_per_pass_);
  start_ = std::chrono::steady_clock::now();
}

void kmeans_update::on_frame(std::uint64_t offset, const frame_in& in) {
  const std::uint64_t pass = offset / frames_per_pass_;
  if (pass >= static_cast<std::uint64_t>(params_.iterations))
    throw std::runtime_error("frame " + std::to_string(offset) + " is past the last pass (" +
                             std::to_string(params_.iterations) + " of " + std::to_string(frames_per_pass_) +
                             " frames)");
  const auto r = static_cast<std::uint64_t>(params_.records_per_frame);
  const std::uint64_t first = offset % frames_per_pass_ * r;
  const std::uint64_t end = std::min<std::uint64_t>(first + r, particles_.size());
  const std::span<const std::uint32_t> ids = in.as<std::uint32_t>();
  if (ids.size() < end - first)
    throw std::runtime_error("frame of " + std::to_string(ids.size()) + " ids for " +
                             std::to_string(end - first) + " particles");
  std::uint64_t changed = 0;
  for (std::uint64_t i = first; i < end; ++i) {
    const std::uint32_t id = ids[i - first];
    if (id >= params_.clusters)
      throw std::runtime_error("particle " + std::to_string(i) + " assigned to centre " + std::to_string(id) +
                               ", not one of the " + std::to_string(params_.clusters));
    changed += id != ids_[i];
    ids_[i] = id;
  }
  changed_.fetch_add(changed, std::memory_order_relaxed);
  // The blocks this frame completes are folded here, on this thread; acq_rel orders every frame's ids of
  // a block before the fold of whoever brings it to full.
  const bool last_pass = pass + 1 == static_cast<std::uint64_t>(params_.iterations);
  const std::uint64_t per_block = static_cast<std::uint64_t>(params_.block_particles);
  for (std::uint64_t b = first / per_block; b * per_block < end; ++b) {
    const index_range block = update_->block(b);
    const std::uint64_t in_block = std::min(end, block.end) - std::max(first, block.begin);
    if (arrived_[b].fetch_add(in_block, std::memory_order_acq_rel) + in_block == block.size()) {
      arrived_[b].store(0, std::memory_order_relaxed);
      fold_block(b, last_pass);
    }
  }
  if (frames_done_.fetch_add(1, std::memory_order_acq_rel) + 1 == frames_per_pass_) finish_pass(pass);
}

void kmeans_update::fold_block(std::uint64_t b, bool last_pass) {
  const std::span<partial_sum> sums = update_->start_block(b);
  const index_range block = update_->block(b);
  for (std::uint64_t i = block.begin; i < block.end; ++i) {
    const particle& q = particles_[i];
    centre_update::add(sums, ids_[i], q.x, q.y, q.z);
  }
  if (last_pass)
    block_crc_[b] = static_cast<std::uint32_t>(
        crc32_z(0, reinterpret_cast<const Bytef*>(&ids_[block.begin]), block.size() * sizeof(std::uint32_t)));
}

void kmeans_update::finish_pass(std::uint64_t pass) {
  // Every frame of the pass, and with it every block, is folded: frames of the next pass only come once its
  // centres are published below.
  update_->move_centres(centres_);
  changed_per_pass_.push_back(changed_.exchange(0, std::memory_order_relaxed));
  pass_end_seconds_.push_back(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  frames_done_.store(0, std::memory_order_relaxed);
  passes_.store(pass + 1, std::memory_order_release);
  if (pass + 1 == static_cast<std::uint64_t>(params_.iterations)) return;
  const std::span<float> out = centres_object_->edit_as<float>();
  for (std::uint32_t c = 0; c < params_.clusters; ++c) {
    out[3 * c] = centres_[c].x;
    out[3 * c + 1] = centres_[c].y;
    out[3 * c + 2] = centres_[c].z;
  }
  centres_object_->publish((pass + 1) * frames_per_pass_);
  centres_object_->promise((pass + 2) * frames_per_pass_);
}

void kmeans_update::on_stop() {
  if (passes_.load(std::memory_order_acquire) != static_cast<std::uint64_t>(params_.iterations)) return;
  nlohmann::json j;
  j["particles"] = particles_.size();
  j["centres"] = nlohmann::json::array();
  for (const centre& c : centres_)
    j["centres"].push_back({{"x", c.x}, {"y", c.y}, {"z", c.z}, {"particles", c.particles}});
  j["changed_per_pass"] = changed_per_pass_;
  j["pass_end_seconds"] = pass_end_seconds_;
  j["block_crcs"] = block_crc_;
  std::ofstream out(params_.result);
  out << j.dump() << '\n';
  if (!out) throw std::runtime_error("cannot write the result file '" + params_.result + "'");
}

operator_counters kmeans_update::counters() const {
  return {{"passes", passes_.load()},
          {"changed_last", changed_per_pass_.empty() ? 0 : changed_per_pass_.back()}};
}

}  // namespace xf::apps::kmeans
