// kmeans_update: Lloyd's update step as a CPU operator of the same run that assigns, so that K-means is one
// run rather than one per iteration. It subscribes to the assignment's ids as they stream, folds each
// reduction block's sums as soon as the block's ids have all arrived (centre_update: the reference's
// block-ordered sums, so the centres are bit-identical to run_file's), and once a pass's last frame is in
// it moves the centres and publishes them — a shared object kmeans_assign reads — at the first offset of the
// next pass, while the source is already gathering it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "apps/kmeans/centre_update.hpp"
#include "apps/kmeans/kmeans.hpp"
#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"

namespace xf::apps::kmeans {

/// A CPU sink over kmeans_assign's ids (frame o: pass o / F, the ids of particles [(o % F)·R, …), F frames a
/// pass of R particles each), writing the `centres` object (clusters xyz triples of f32). Its on_start
/// publishes the initial centres (the first K particles, as the reference) at offset 0 and promises the
/// next pass's first offset, so the assignment of a pass never waits for it; its result file (JSON, at
/// on_stop) holds what the reference's result holds.
class kmeans_update final : public cpu_sink {
 public:
  struct params {
    std::string path;
    std::uint32_t clusters = 8;
    std::int64_t iterations = 1;
    std::int64_t records_per_frame = 0;
    std::int64_t block_particles = 65536;
    std::string result;
  };
  static void describe(operator_schema<params>& s);

  explicit kmeans_update(const params& p) : params_(p) {}
  void on_start(const operator_setup& setup) override;
  void on_frame(std::uint64_t offset, const frame_in& in) override;
  void on_stop() override;
  /// {passes: finished, changed_last: particles the last finished pass changed}.
  operator_counters counters() const override;

 private:
  void fold_block(std::uint64_t b, bool last_pass);
  void finish_pass(std::uint64_t pass);

  params params_;
  std::string name_;
  object_port* centres_object_ = nullptr;
  mapped_file file_;
  std::span<const particle> particles_;
  std::uint64_t frames_per_pass_ = 0;
  std::unique_ptr<centre_update> update_;
  std::vector<centre> centres_;
  std::vector<std::uint32_t> ids_;  // each particle's id in the latest pass (the file's before the first)
  std::unique_ptr<std::atomic<std::uint64_t>[]> arrived_;  // per block: ids in of the current pass
  std::vector<std::uint32_t> block_crc_;                   // the last pass's ids, per block
  std::atomic<std::uint64_t> frames_done_{0}, changed_{0}, passes_{0};
  std::vector<std::uint64_t> changed_per_pass_;
  std::vector<double> pass_end_seconds_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace xf::apps::kmeans
