// prefetch_varlen_source: finding the records (scan or index) and gathering each frame's fields.
#include "operators/sources/prefetch_varlen_source.hpp"

#include <cstring>

#include "framework/core/element_type.hpp"
#include "framework/core/errors.hpp"
#include "operators/sources/prefetch/gather.hpp"
#include "operators/sources/prefetch/record_frames.hpp"
#include "operators/sources/stream_geometry.hpp"

namespace xf {

void prefetch_varlen_source::describe(operator_schema<params>& s) {
  s.describe(
      "BigKernel prefetch source for variable-length records: found by their length fields or an index "
      "file of offsets; CPU threads gather the declared fields into frames, field by field, and only the "
      "fields cross PCIe");
  s.param(&params::path, "path", "the data file", required);
  s.param(&params::index, "index", "file of u64 record offsets, one per record ('': scan the lengths)", "");
  s.bytes(&params::length_offset, "length_offset",
          "where each record holds its length in bytes (u32, little-endian; scanning only)", 0);
  s.bytes(&params::min_record_bytes, "min_record_bytes",
          "the least bytes a record has; the fields must lie within them", required, 1);
  s.param(&params::fields, "fields", "the fields that travel: 'OFFSET:BYTES[, ...]' within min_record_bytes",
          required)
      .check(prefetch::field_list_problem);
  s.param(&params::item_bytes, "item_bytes", "bytes of each item of a field (1, 2, 4, 8 or 16)", 4, 1, 16);
  s.param(&params::records_per_frame, "records_per_frame", "records per frame (0: as many as a frame holds)",
          0, 0);
}

void prefetch_varlen_source::fail(const std::string& reason) const {
  throw run_error({name_, topic_, std::nullopt}, reason);
}

void prefetch_varlen_source::on_start(const operator_setup& setup) {
  name_ = setup.name;
  const topic_info& out = source_output_topic(setup);
  topic_ = out.name;
  layout_.record_bytes = params_.min_record_bytes;
  layout_.item_bytes = static_cast<std::uint32_t>(params_.item_bytes);
  if (const std::string problem = prefetch::parse_fields(params_.fields, layout_); !problem.empty())
    fail("fields '" + params_.fields + "': " + problem);
  if (layout_.item_bytes % size_of(out.element) != 0)
    fail("items of " + std::to_string(layout_.item_bytes) + " bytes are not whole elements of topic '" +
         out.name + "' (" + std::string(name_of(out.element)) + ")");
  const std::uint64_t per_record = layout_.bytes_read_per_record();
  records_per_frame_ = params_.records_per_frame > 0 ? static_cast<std::uint64_t>(params_.records_per_frame)
                                                     : out.frame_bytes / per_record;
  if (records_per_frame_ == 0 || records_per_frame_ * per_record > out.frame_bytes)
    fail("frames of " + std::to_string(out.frame_bytes) + " bytes cannot hold " +
         std::to_string(std::max<std::uint64_t>(records_per_frame_, 1)) + " records of " +
         std::to_string(per_record) + " bytes");
  try {
    data_ = mapped_file::open(params_.path);
    if (!params_.index.empty()) index_file_ = mapped_file::open(params_.index);
  } catch (const dataset_error& e) {
    fail(e.what());
  }
  const std::span<const std::byte> data = data_.bytes();
  const std::uint64_t min_bytes = params_.min_record_bytes;
  if (!params_.index.empty()) {
    const std::span<const std::byte> index = index_file_.bytes();
    if (index.size() % sizeof(std::uint64_t) != 0)
      throw run_error({name_, topic_, std::nullopt},
                      dataset_error(params_.index, index.size() - index.size() % sizeof(std::uint64_t),
                                    "a truncated entry (the index holds 8 bytes per record)")
                          .what());
    // The mapping is page-aligned, so its u64 entries are aligned.
    starts_ = {reinterpret_cast<const std::uint64_t*>(index.data()), index.size() / sizeof(std::uint64_t)};
    for (std::uint64_t k = 0; k < starts_.size(); ++k)
      if (starts_[k] > data.size() || data.size() - starts_[k] < min_bytes)
        fail(dataset_error(params_.index, k * sizeof(std::uint64_t),
                           "record offset " + std::to_string(starts_[k]) + " leaves no record of " +
                               std::to_string(min_bytes) + " bytes inside '" + params_.path + "' (" +
                               std::to_string(data.size()) + " bytes)")
                 .what());
  } else {
    if (params_.length_offset + sizeof(std::uint32_t) > min_bytes)
      fail("length_offset " + std::to_string(params_.length_offset) + ": the u32 length must lie within " +
           "min_record_bytes (" + std::to_string(min_bytes) + ")");
    for (std::uint64_t at = 0; at < data.size();) {
      if (data.size() - at < min_bytes)
        fail(dataset_error(params_.path, at,
                           "a truncated record (" + std::to_string(data.size() - at) +
                               " bytes left, at least " + std::to_string(min_bytes) + " expected)")
                 .what());
      std::uint32_t length = 0;
      std::memcpy(&length, data.data() + at + params_.length_offset, sizeof length);
      if (length < min_bytes || length > data.size() - at)
        fail(dataset_error(
                 params_.path, at,
                 "record length " + std::to_string(length) +
                     (length < min_bytes ? " is below min_record_bytes (" + std::to_string(min_bytes) + ")"
                                         : " runs past the end of the file"))
                 .what());
      scanned_.push_back(at);
      at += length;
    }
    starts_ = scanned_;
  }
  frames_ = (starts_.size() + records_per_frame_ - 1) / records_per_frame_;
}

std::uint64_t prefetch_varlen_source::records_in(std::uint64_t offset) const {
  if (offset >= frames_) return 0;
  const std::uint64_t first = offset * records_per_frame_;
  return std::min<std::uint64_t>(records_per_frame_, starts_.size() - first);
}

bool prefetch_varlen_source::fill(std::uint64_t offset, frame_out& out) const {
  const std::uint64_t n = records_in(offset);
  if (n == 0) return false;
  const std::uint64_t bytes = n * layout_.bytes_read_per_record();
  XF_EXPECTS(out.capacity >= bytes, "a source's output frame must hold the topic's frame size");
  prefetch::gather_records_at(data_.bytes(), layout_, starts_.subspan(offset * records_per_frame_, n),
                              {out.data, bytes});
  out.bytes = bytes;
  return true;
}

void prefetch_varlen_source::produced(std::uint64_t offset, const frame_out&) {
  std::atomic<std::uint64_t>& records = counts_.local().records;
  records.store(records.load(std::memory_order_relaxed) + records_in(offset), std::memory_order_relaxed);
}

operator_counters prefetch_varlen_source::counters() const {
  std::uint64_t records = 0;
  counts_.for_each([&](const gather_counts& c) { records += c.records.load(std::memory_order_relaxed); });
  return {{"records", records},
          {"records_per_frame", records_per_frame_},
          {"bytes_gathered", records * layout_.bytes_read_per_record()},
          {"dataset_bytes", data_.size()},
          {"index_bytes", index_file_.size()}};
}

}  // namespace xf
