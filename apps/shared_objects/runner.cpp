// A group's runs, each checked before its times count (runner.hpp).
#include "apps/shared_objects/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "framework/core/cuda_check.hpp"
#include "framework/shared/object_space.hpp"

namespace xf::shared_bench {

const run_record* row::median() const {
  if (runs.empty()) return nullptr;
  std::vector<const run_record*> sorted;
  for (const run_record& r : runs) sorted.push_back(&r);
  std::sort(sorted.begin(), sorted.end(),
            [](const run_record* a, const run_record* b) { return a->ms < b->ms; });
  return sorted[(sorted.size() - 1) / 2];
}

runner::runner(int device) : device_(device) {}

shared::cuda_accelerator& runner::accelerator() {
  if (!accelerator_) accelerator_ = std::make_unique<shared::cuda_accelerator>(device_);
  return *accelerator_;
}

run_record runner::run_once(const workload& w, const run_spec& spec, output& out) {
  std::unique_ptr<shared::object_space> space;
  if (uses_library(spec.which)) {
    shared::object_space_options options;
    options.default_protocol = protocol_of(spec.which);
    if (spec.block_bytes != 0) options.block_bytes = spec.block_bytes;
    if (spec.rolling_size != 0) {
      // A fixed rolling size: the first allocation raises it to its cap, and it stays there.
      options.rolling_step = spec.rolling_size;
      options.max_rolling_size = spec.rolling_size;
    }
    space = std::make_unique<shared::object_space>(accelerator(), options);
  }
  run_context ctx(spec.which, space.get(), timer_, device_);
  const auto begin = std::chrono::steady_clock::now();
  w.run(spec.which, ctx, out);
  const auto end = std::chrono::steady_clock::now();
  run_record r = ctx.record();
  r.ms_with_alloc = std::chrono::duration<double, std::milli>(end - begin).count();
  return r;
}

std::vector<row> runner::run(const group& g, std::chrono::steady_clock::time_point deadline,
                             double slow_run_s) {
  std::vector<row> rows;
  std::unique_ptr<workload> w;
  std::string make_error;
  try {
    w = g.make();
  } catch (const std::exception& e) {
    make_error = e.what();
  }
  // The first output that passes the CPU check: every later one must equal it bit for bit.
  std::optional<output> golden;
  std::string golden_detail;
  for (const run_spec& spec : g.runs) {
    if (context_lost_) break;
    row r;
    r.experiment = g.experiment;
    r.workload = g.workload;
    r.size = g.size;
    r.spec = spec;
    r.warmup = g.warmup;
    if (!w) {
      r.status = "error";
      r.detail = "making the inputs failed: " + make_error;
      rows.push_back(std::move(r));
      continue;
    }
    if (!g.thorough && std::chrono::steady_clock::now() > deadline) {
      r.status = "skipped";
      r.detail = "the time budget (--time-budget) was spent";
      rows.push_back(std::move(r));
      continue;
    }
    if (!g.thorough) {
      const auto failed = failed_self_check_.find({g.workload, spec.which});
      if (failed != failed_self_check_.end()) {
        r.status = "wrong";
        r.detail = "refused: its self-check failed (" + failed->second + ")";
        rows.push_back(std::move(r));
        continue;
      }
    }
    // Returns "" for a correct output, else why not.
    auto verify = [&](const output& out) -> std::string {
      if (g.thorough) {
        const check_result c = w->check(out, true);
        if (!c.ok) return "against the CPU reference: " + c.detail;
        r.detail = c.detail;
      }
      if (!golden) {
        if (!g.thorough) {
          const check_result c = w->check(out, false);
          if (!c.ok) return "against the CPU reference: " + c.detail;
          r.detail = c.detail;
        }
        golden = out;
        golden_detail = std::string(name_of(spec.which)) + "'s output";
        return "";
      }
      const std::string difference = first_difference(*golden, out);
      if (!difference.empty()) return "differs from " + golden_detail + ": " + difference;
      if (r.detail.empty()) r.detail = "equal bit for bit to " + golden_detail;
      return "";
    };
    try {
      output out;
      for (unsigned k = 0; k < g.warmup + g.reps && r.status == "ok"; ++k) {
        run_record record = run_once(*w, spec, out);
        if (const std::string problem = verify(out); !problem.empty()) {
          r.status = "wrong";
          r.detail = problem;
          r.runs.clear();
        } else if (k >= g.warmup || record.ms_with_alloc > slow_run_s * 1e3) {
          r.runs.push_back(record);
        }
        if (r.status == "ok" && record.ms_with_alloc > slow_run_s * 1e3 && k + 1 < g.warmup + g.reps) {
          char text[160];
          std::snprintf(text, sizeof text, "a run took %.1f s (over --slow-run %.1f s): %s",
                        record.ms_with_alloc / 1e3, slow_run_s,
                        k < g.warmup ? "the warm-up kept as the only run" : "no further runs");
          r.cut_short = text;
          break;
        }
      }
    } catch (const cuda_error& e) {
      r.status = "error";
      r.detail = e.what();
      r.runs.clear();
      if (e.sticky()) context_lost_ = true;
    } catch (const std::exception& e) {
      r.status = "error";
      r.detail = e.what();
      r.runs.clear();
    }
    if (g.thorough && r.status != "ok")
      failed_self_check_.emplace(std::make_pair(g.workload, spec.which), r.detail);
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace xf::shared_bench
