// direct_reads: aligned synchronous reads of a stage's ranges.
#include "framework/files/direct_reads.hpp"

#include <cstdlib>
#include <string>

namespace xf {

void direct_reads::freer::operator()(std::byte* p) const {
  std::free(p);
}

direct_reads::direct_reads(const file_table& files) : files_(files) {
  for (std::uint32_t f = 0; f < files.count(); ++f) sizes_.push_back(files.file(f).size);
}

file_pages direct_reads::read(const read_list& list, const fault_site& site) {
  if (const range_check check = check_ranges(list, sizes_.data(), 0, files_.count());
      check.problem != range_problem::none)
    throw files_.range_failure(list, check, 0, files_.count(), site);
  for (std::uint32_t r = 0; r < list.size(); ++r) {
    const file_range& range = list[r];
    const opened_file& f = files_.file(range.file);
    // Widened to the file's alignment (1 when buffered): O_DIRECT reads whole aligned blocks.
    const std::uint64_t first = range.offset / f.alignment * f.alignment;
    const std::uint64_t bytes = range.offset + range.bytes - first;
    const std::uint64_t capacity = (bytes + f.alignment - 1) / f.alignment * f.alignment;
    buffer& b = buffers_[r];
    if (b.capacity < capacity) {
      const std::uint64_t rounded = (capacity + 4095) / 4096 * 4096;
      b.data.reset(static_cast<std::byte*>(std::aligned_alloc(4096, rounded)));
      XF_EXPECTS(b.data != nullptr, "a buffer for a direct read (" + std::to_string(rounded) + " bytes)");
      b.capacity = rounded;
    }
    const read_outcome out = files_.read(range.file, first, bytes, b.data.get(), b.capacity);
    if (out.status != file_status::ok) throw files_.failure(range.file, out, first, site);
    spans_[r] = {range.file, range.offset, range.bytes, b.data.get() + (range.offset - first)};
  }
  return file_pages::flat(spans_, list.size(), sizes_.data());
}

}  // namespace xf
