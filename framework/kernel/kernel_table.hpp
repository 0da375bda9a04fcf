// The round's operator table and fault wording, built from the plan for either driver: the device run
// (framework/gpu/device_run.cpp) adds its type indices, staging and device buffers; the host executor
// (framework/runtime/host_kernel_executor.cpp) uses the table as it is.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "framework/core/errors.hpp"
#include "framework/files/file_cache.hpp"
#include "framework/kernel/kernel_catalog.hpp"
#include "framework/plan/plan.hpp"

namespace xf {

/// A run's file readers in the kernel: the file cache and, by operator index, where each reader's files
/// are in it (the operator's file k is the cache's first_file + k), and each file source's frames and the
/// offsets a block claims at once (a run, read in order).
struct kernel_files {
  file_cache* cache = nullptr;
  std::vector<std::uint32_t> first_file, file_count;
  std::vector<std::uint64_t> source_frames, source_run;
};

/// The k-th kernel operator's entry as the plan gives it: topics, group, warps, items, parts, staging and,
/// for a file reader, its files (from `files`, null without readers). The caller sets what depends on
/// where the round runs: type, params_offset, stage offsets, parts_done and state.
kernel_op planned_kernel_op(const plan& p, std::uint32_t k, const kernel_files* files);

/// The topic a kernel operator's errors name: its input, or a file source's output.
std::size_t fault_topic(const plan& p, std::uint32_t k);

/// The run_error of a fault the round recorded (fail_item), naming operator, topic and offset; a failed
/// read asks the file cache why first. `blocks`: the blocks that share the file cache.
run_error fault_error(const kernel_failure& f, const plan& p, const kernel_files* files,
                      std::uint32_t blocks);

}  // namespace xf
