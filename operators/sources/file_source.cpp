// file_source: opening the file and reading frames with pread.
#include "operators/sources/file_source.hpp"

#include "framework/core/errors.hpp"
#include "framework/files/file_table.hpp"

namespace xf {

void file_source::on_start(const operator_setup& setup) {
  name_ = setup.name;
  const topic_info& out = source_output_topic(setup);
  topic_ = out.name;
  // Read once, in order, by the kernel's page cache and its readahead: no O_DIRECT, no random advice.
  file_.emplace(file_table_options{.direct = direct_io_mode::off, .advise_random = false});
  file_->open(path_, {name_, topic_, std::nullopt});
  geometry_ = {out.frame_bytes, file_->file(0).size};
}

bool file_source::produce(std::uint64_t offset, frame_out& out) {
  frame_span span;
  if (!geometry_.frame_at(offset, span)) return false;
  XF_EXPECTS(out.capacity >= span.bytes, "a source's output frame must hold the topic's frame size");
  XF_EXPECTS(file_.has_value(), "file_source::produce before on_start or after on_stop");
  const read_outcome read = file_->read(0, span.first_byte, span.bytes, out.data, out.capacity);
  if (read.status != file_status::ok) throw file_->failure(0, read, span.first_byte, {name_, topic_, offset});
  out.bytes = span.bytes;
  return true;
}

void file_source::on_stop() {
  file_.reset();
}

}  // namespace xf
