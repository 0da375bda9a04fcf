// The host half of the baselines, compiled by g++: configuration checks, the dataset, the CPU stage, the
// expected checksums, verification and latency statistics — shared by the GPU modes and by --self-check.
#pragma once

#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <mutex>
#include <string>
#include <vector>

#include "apps/baselines/baselines.hpp"

namespace xf::baselines {

/// Throws std::invalid_argument naming the offending option when `cfg` cannot run.
void validate(const config& cfg);
/// `cfg` with the mode defaults filled in (streams, warm-up) and host thread counts set to what the
/// mode really uses. Call after validate.
config resolve(const config& cfg);

std::uint64_t batch_elements(const config& cfg);
/// Batches streamed in the timed run: total_bytes / batch_bytes.
std::uint64_t timed_batches(const config& cfg);
/// P: dataset_frames clamped to the timed batch count (at least 1).
std::uint32_t dataset_frames(const config& cfg);
/// GPU steps per batch: 1 for g (its n kernels run in one step), n for gc.
std::uint32_t gpu_steps(const config& cfg);
/// Times the operator is applied to a batch end to end: n for g; for gc the n GPU stages and the n − 1
/// CPU stages between them (the n-th CPU stage is the verifying sink, which does not transform).
std::uint32_t host_applications(const config& cfg);

/// Writes the P dataset batches (P × batch_bytes at `dataset`): element i of the stream holds
/// content::sequence_value(seed, i), so dataset batch p starts at element p × batch_elements. Parallel.
void fill_dataset(const config& cfg, void* dataset, std::uint32_t frames);

/// The CPU stage: the operator's own compute over `count` elements, in place, as one virtual thread
/// (thread_id 0 of 1) — exactly what xeflow's host executor runs for the operator.
void apply_host_stage(const op_config& op, element_type element, void* data, std::uint64_t count);

/// The operators a batch goes through end to end, in order (host_applications of them), each with its
/// stage's own parameters: g: GPU stages 0 … n−1; gc: GPU stage 0, CPU stage 0, GPU stage 1, …, GPU stage
/// n−1 (the CPU stage after GPU stage k runs stage k's operator).
std::vector<op_config> host_chain(const config& cfg);

/// The checksum the verifying sink must see for each of the P dataset batches: host_chain replayed on the
/// host (apply_host_stage per operator), then frame_checksum. Parallel over batches.
std::vector<std::uint64_t> expected_checksums(const config& cfg, const void* dataset, std::uint32_t frames);

/// What the sink does with every output batch: compares its frame_checksum with the expected one, counts
/// mismatches and keeps the first few reports. Safe from any number of threads.
class batch_checker {
 public:
  static constexpr std::size_t max_reports = 8;

  batch_checker(mode m, std::vector<std::uint64_t> expected, std::uint64_t batch_bytes);

  /// Checks stream batch `batch` (dataset batch batch % P) held in `out`; true when it matches.
  /// `phase` goes into the report ("warm-up" or "timed").
  bool check(std::uint64_t batch, const void* out, const char* phase);

  std::uint64_t mismatches() const { return mismatches_.load(std::memory_order_relaxed); }
  std::vector<std::string> reports() const;

 private:
  mode mode_;
  std::vector<std::uint64_t> expected_;
  std::uint64_t batch_bytes_;
  std::atomic<std::uint64_t> mismatches_{0};
  mutable std::mutex reports_mutex_;
  std::vector<std::string> reports_;
};

struct latency_summary {
  double p50 = 0, p99 = 0, mean = 0, max = 0;
};
/// Nearest-rank percentiles of `samples` (sorted in place).
latency_summary summarize(std::vector<double>& samples);

/// --self-check: runs the host-side code above (dataset, CPU stage, expected checksums, checker,
/// percentiles) on small batches for every op, shape and stage count, against a straightforward
/// independent computation. Prints one line per failure and a summary; returns 0 when all agree, else 1.
int run_self_check(std::ostream& out);

}  // namespace xf::baselines
