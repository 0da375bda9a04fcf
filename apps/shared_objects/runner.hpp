// runner: runs xeflow-shared-bench's measurements. A group is one workload at one size with the runs to
// make of it (variant, and for rolling update its block and rolling size); each run is made `warmup` times
// untimed, then `reps` times timed, every time from allocation to release (a fresh object space for the
// library's variants, so that every run starts from the same state), and every output is checked before
// any time is reported (workload.hpp: the first correct output against the CPU reference, every other
// against it bit for bit).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "apps/shared_objects/run_context.hpp"
#include "apps/shared_objects/variant.hpp"
#include "apps/shared_objects/workload.hpp"
#include "framework/shared/cuda_accelerator.hpp"

namespace xf::shared_bench {

struct run_spec {
  variant which = variant::explicit_copies;
  std::size_t block_bytes = 0;  ///< rolling update's block (0 for the other variants)
  std::uint32_t rolling_size =
      0;  ///< rolling update's dirty blocks: 0 adaptive (the library's default), else fixed
};

struct group {
  std::string experiment;  ///< "self-check", "table", "stencil-volumes", "block-sizes", "rolling-sizes"
  std::string workload;
  std::vector<std::pair<std::string, std::uint64_t>> size;
  std::uint64_t device_bytes = 0;
  std::size_t device_arrays = 0;
  std::uint64_t source_bytes = 0;
  std::function<std::unique_ptr<shared_bench::workload>()> make;  // the type, not the member above
  std::vector<run_spec> runs;
  unsigned warmup = 1, reps = 1;
  /// The self-check: every output against the whole CPU reference, not only the first.
  bool thorough = false;
};

struct row {
  std::string experiment, workload;
  std::vector<std::pair<std::string, std::uint64_t>> size;
  run_spec spec;
  std::string status = "ok";  ///< ok, wrong (an output failed its check: no time reported), error, skipped
  std::string detail;         ///< the check passed, or what failed
  std::string cut_short;      ///< why fewer runs were made than asked (a run slower than the limit), or ""
  unsigned warmup = 0;
  std::vector<run_record> runs;

  /// The run of median time (the lower middle one for an even count); null without runs.
  const run_record* median() const;
};

class runner {
 public:
  explicit runner(int device);

  /// One row per run of `g`, in its order (fewer once the CUDA context is lost). A run that starts after
  /// `deadline` is skipped (except in the self-check); once one run of a spec takes longer than `slow_run_s`
  /// (allocation included), that spec makes no more (a slow warm-up is kept as its only timed run).
  std::vector<row> run(const group& g, std::chrono::steady_clock::time_point deadline, double slow_run_s);
  /// A sticky CUDA error (an illegal address, a failed launch) ended the context: nothing more can run.
  bool context_lost() const { return context_lost_; }

 private:
  run_record run_once(const workload& w, const run_spec& spec, output& out);
  shared::cuda_accelerator& accelerator();

  int device_;
  std::unique_ptr<shared::cuda_accelerator> accelerator_;
  kernel_timer timer_;
  /// Variants whose self-check failed, per workload: their measurements are refused.
  std::map<std::pair<std::string, variant>, std::string> failed_self_check_;
  bool context_lost_ = false;
};

}  // namespace xf::shared_bench
