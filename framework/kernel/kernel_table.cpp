// The operator table from the plan, and the one wording of the round's faults.
#include "framework/kernel/kernel_table.hpp"

#include <algorithm>

#include "framework/core/fault_injection.hpp"
#include "framework/core/units.hpp"

namespace xf {

kernel_op planned_kernel_op(const plan& p, std::uint32_t k, const kernel_files* files) {
  const std::size_t i = p.kernel_operators.at(k);
  const planned_operator& po = p.operators[i];
  kernel_op op{};
  // A file source has no input: its elements and frames are its output's.
  const bool source = po.inputs.empty();
  const std::size_t frame_topic = source ? po.outputs.at(0) : po.inputs[0];
  op.element = p.topics[frame_topic].spec->element;
  op.input = source ? no_input_topic : static_cast<std::uint32_t>(po.inputs[0]);
  op.output = po.outputs.empty() ? no_output_topic : static_cast<std::uint32_t>(po.outputs[0]);
  op.group = source ? 0 : po.input_groups[0];
  std::uint32_t first_warp = 0, first_item = 0;
  for (std::uint32_t j = 0; j < k; ++j) {
    first_warp += p.operators[p.kernel_operators[j]].warps;
    first_item += p.operators[p.kernel_operators[j]].items;
  }
  op.first_warp = first_warp;
  op.warps = po.warps;
  op.items = po.items;
  op.item_warps = po.warps / po.items;
  op.first_item = first_item;
  op.parts = po.parts;
  op.shares = po.entry->info.shares_frames ? 1 : 0;
  const std::uint64_t frame_bytes = p.topics[frame_topic].spec->frame_bytes;
  op.part_bytes = po.parts > 1 && !op.shares ? po.part_bytes : frame_bytes;
  op.stage = po.stage ? 1 : 0;
  op.stage_output = po.stage_output ? 1 : 0;
  op.output_numerator = po.output.numerator;
  op.output_denominator = po.output.denominator;
  XF_EXPECTS(op.output_numerator == op.output_denominator || po.parts == 1 || op.shares,
             "a map whose output is not as long as its input computes whole frames");
  // A staging area holds the item's input, or its output where that is longer.
  op.stage_stride = (std::max(op.part_bytes, po.output.of(op.part_bytes)) + 255) / 256 * 256;
  XF_EXPECTS(po.objects.size() <= max_operator_objects, "the plan bounds a GPU operator's shared objects");
  op.object_count = static_cast<std::uint32_t>(po.objects.size());
  for (std::size_t j = 0; j < po.objects.size(); ++j)
    op.objects[j] = po.objects[j] == no_object ? no_kernel_object : static_cast<std::uint32_t>(po.objects[j]);
  op.inject_fail_at = no_injected_fault;
  if (inject::armed(inject::site::gpu_frame))
    op.inject_fail_at = inject::armed_at(inject::site::gpu_frame, po.spec->name).value_or(no_injected_fault);
  if (po.entry->info.reads_files) {
    XF_EXPECTS(files != nullptr && files->cache != nullptr, "a file cache for the GPU file readers");
    XF_EXPECTS(po.parts == 1 && !po.stage && !po.stage_output && po.items == 1,
               "file readers run whole, unstaged frames, one item a block (the plan's)");
    op.reader = source ? reader_source : reader_map;
    op.first_file = files->first_file.at(i);
    op.file_count = files->file_count.at(i);
    op.source_frames = files->source_frames.at(i);
    op.source_run = files->source_run.at(i);
  }
  return op;
}

std::size_t fault_topic(const plan& p, std::uint32_t k) {
  const planned_operator& po = p.operators[p.kernel_operators.at(k)];
  return po.inputs.empty() ? po.outputs.at(0) : po.inputs[0];
}

run_error fault_error(const kernel_failure& f, const plan& p, const kernel_files* files,
                      std::uint32_t blocks) {
  const planned_operator& po = p.operators[p.kernel_operators.at(f.op)];
  const fault_site site{po.spec->name, p.topics[fault_topic(p, f.op)].spec->name, f.offset};
  const std::string stage = "stage " + std::to_string(f.problem);
  const auto code = static_cast<std::uint32_t>(f.detail);
  switch (f.kind) {
    case fault_frame_failed:
      return run_error(site, frame_failed_reason(code, po.entry->info.failure_meaning(code)));
    case fault_bad_bytes:
      return run_error(site, "the input slot announces " + std::to_string(f.detail) +
                                 " bytes, whose output (" + std::to_string(po.output.of(f.detail)) +
                                 " bytes) is more than the output topic's frame holds");
    case fault_read_range: {
      XF_EXPECTS(files != nullptr && files->cache != nullptr, "a file reader's fault names its files");
      read_list list;
      list.read(file_id{f.range.file}, f.range.offset, f.range.bytes);
      const std::size_t i = p.kernel_operators.at(f.op);
      return files->cache->files().range_failure(list, {static_cast<range_problem>(f.problem), 0},
                                                 files->first_file.at(i), files->file_count.at(i), site);
    }
    case fault_read_list:
      return run_error(site, stage + " asks for more than " + std::to_string(read_list::capacity) +
                                 " ranges (a read_list's capacity)");
    case fault_stage_pages:
      XF_EXPECTS(files != nullptr && files->cache != nullptr, "a file reader's fault names its files");
      return run_error(site, stage + " reads " + std::to_string(f.detail) + " pages of " +
                                 format_bytes(files->cache->view().page_bytes()) +
                                 ", more than a block's share of the file cache (" +
                                 std::to_string(f.range.bytes) + " pages of " + std::to_string(blocks) +
                                 " blocks): raise runtime.file_cache.size");
    case fault_read_failed:
      // The I/O service knows why (path, byte offset): ask it first.
      if (files != nullptr && files->cache != nullptr)
        if (std::optional<run_error> io = files->cache->poll()) return *io;
      return run_error(site, "a page " + stage + " reads failed to load");
    case fault_injected:
      return run_error(site, "injected fault " +
                                 inject::describe(inject::site::gpu_frame, inject::kind::fail, f.offset) +
                                 ": the frame failed");
    default:
      return run_error(site, "the kernel reported fault " + std::to_string(f.kind));
  }
}

}  // namespace xf
