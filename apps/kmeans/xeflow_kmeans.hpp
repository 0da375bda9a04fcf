// K-means with the assignment passes on xeflow: each iteration streams the particle file through
// prefetch_source → kmeans_assign → prefetch_writeback, then the CPU moves the centres (centre_update).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/kmeans/kmeans.hpp"

namespace xf::apps::kmeans {

struct xeflow_options {
  /// clusters (at most kmeans_assign's 32), iterations, threads (each of the source's and the write-back's
  /// threads, and the update's), block_particles (must be the reference's for its results).
  options lloyd;
  bool force_host = false;  ///< kmeans_assign on the host executor even when a GPU is usable
  /// One run per iteration (an assignment pass, then the update on the CPU), instead of every iteration in
  /// one run with the centres moving through a shared object: the comparison's baseline.
  bool per_iteration = false;
  std::uint64_t frame_bytes = 64 * 1024;  ///< both topics' frames: a positive multiple of 4 KiB
};

/// One iteration of run_xeflow. In one run the update overlaps the assignment: assign_seconds is then the
/// pass from the previous pass's end (the centres published) to this one's last ids folded, and the other
/// two are 0.
struct iteration_stats {
  double assign_seconds = 0;  ///< the xeflow run: planning, topics, streaming and teardown
  double stream_seconds = 0;  ///< of which the stream (run_stats::stream_seconds)
  double update_seconds = 0;  ///< the CPU's pass over the written-back ids and the centres' move
  std::uint64_t changed = 0;  ///< particles whose cluster id the pass changed
};

struct xeflow_result {
  /// As the reference's run_file would give it (seconds: the whole run, mapping and digest included).
  result lloyd;
  std::string executor;    ///< what ran kmeans_assign (run_stats::executor of the last pass)
  bool one_run = false;    ///< every iteration in one run (xeflow_options::per_iteration not set)
  double run_seconds = 0;  ///< one run: the xeflow run, set-up and teardown included
  std::uint64_t records_per_frame = 0;
  std::vector<iteration_stats> iterations;
};

/// A pass's GPU kernel hung or faulted (run_stats::device_wedged): the CUDA context cannot be torn down,
/// so the caller should report it and end the process (std::_Exit) instead of returning from main.
class wedged_device_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Lloyd's algorithm on the particle file at `path` (ids written into it) with the reference's initial
/// centres and update step: the result (centres, digest, changed_last_iteration) is bit-identical to
/// run_file(path, opt.lloyd)'s. By default every iteration runs in one xeflow run: the source goes over the
/// file `iterations` times, kmeans_assign reads the centres from a shared object, and kmeans_update
/// (live_update.hpp) folds the ids as they stream and publishes each pass's centres at the next pass's
/// first offset; with opt.per_iteration, one run per assignment pass and the update after it. The executor is
/// the GPU's when one is usable and the build has CUDA, unless opt.force_host. Errors: usage_error for
/// clusters outside 1..32, a zero count or a bad frame size; dataset_error as run_file's, or for a pass that
/// wrote an id ≥ K; std::runtime_error naming the pass for a failed run; wedged_device_error (see there).
xeflow_result run_xeflow(const std::string& path, const xeflow_options& opt);

/// The reference's to_json(r.lloyd), plus executor, frame_bytes, records_per_frame, assign_seconds and
/// update_seconds (summed over the iterations) and iteration_stats: [{iteration (from 1), assign_seconds,
/// stream_seconds, update_seconds, changed}].
nlohmann::json to_json(const xeflow_result& r, const xeflow_options& opt);

}  // namespace xf::apps::kmeans
