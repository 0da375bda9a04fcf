// direct_reader: a file reader's stages over direct reads.
#include "framework/model/direct_reader.hpp"

namespace xf {

direct_reader::direct_reader(const host_kernel_op& reader, const fault_site& site)
    : reader_(reader), files_(file_table_options{.direct = direct_io_mode::off, .advise_random = false}) {
  const file_list list = reader.files();
  for (const file_list::entry& f : list.entries())
    sizes_.push_back(files_.file(files_.open(f.path, site, f.advice)).size);
}

void direct_reader::run(const frame_in& in, frame_out& out, std::uint64_t offset,
                        const fault_site& site) const {
  std::unique_ptr<direct_reads> reads;
  {
    std::lock_guard lock(pool_mutex_);
    if (!pool_.empty()) {
      reads = std::move(pool_.back());
      pool_.pop_back();
    }
  }
  if (!reads) reads = std::make_unique<direct_reads>(files_);
  fault_site at = site;
  at.offset = offset;
  alignas(16) std::byte carry[frame_task<std::uint32_t>::carry_bytes] = {};
  frame_call stage = whole_frame_call(in, &out, offset);
  stage.carry = carry;
  stage.file_sizes = sizes_.data();
  const element_type element = in.data != nullptr ? in.element : out.element;
  for (stage.stage = 0;; ++stage.stage) {
    read_list list;
    if (reader_.reads(stage, element, list) == read_step::done) break;
    if (list.overflowed())
      throw run_error(at, "stage " + std::to_string(stage.stage) + " asks for more than " +
                              std::to_string(read_list::capacity) + " ranges (a read_list's capacity)");
    const file_pages pages = reads->read(list, at);
    frame_call reading = stage;
    reading.files = &pages;
    reader_.run_frame(in, &out, offset, &reading);
  }
  std::lock_guard lock(pool_mutex_);
  pool_.push_back(std::move(reads));
}

}  // namespace xf
