// table_source: checking the output topic against the file, and the in-place check that skips a read.
#include "operators/sources/table_source.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "topics/columnar_index.hpp"

#include "framework/core/errors.hpp"
#include "framework/core/single_writer.hpp"

namespace xf {

namespace {

/// The first difference between the topic's columns and the file's: "" when they agree.
std::string schema_difference(const topic_info& out, const columnar_geometry& topic,
                              const columnar_table_file& file) {
  const table_schema& s = file.schema();
  const std::string in_file = "the table file '" + file.path() + "'";
  if (topic.rows_per_frame != s.rows_per_frame)
    return "rows_per_frame: the topic has " + std::to_string(topic.rows_per_frame) + ", " + in_file + " " +
           std::to_string(s.rows_per_frame);
  const std::size_t n = std::max<std::size_t>(topic.column_count, s.columns.size());
  for (std::size_t c = 0; c < n; ++c) {
    const std::string at = "column " + std::to_string(c) + ": ";
    if (c >= topic.column_count)
      return at + "the topic has " + std::to_string(topic.column_count) + " columns, " + in_file + " has " +
             column_text(s.columns[c]) + " there (" + std::to_string(s.columns.size()) + " columns)";
    const table_column from_topic{c < out.column_names.size() ? out.column_names[c] : std::string(),
                                  topic.columns[c].layout};
    if (c >= s.columns.size())
      return at + "the topic has " + column_text(from_topic) + ", " + in_file + " has " +
             std::to_string(s.columns.size()) + " columns";
    if (!(from_topic == s.columns[c]))
      return at + "the topic has " + column_text(from_topic) + ", " + in_file + " has " +
             column_text(s.columns[c]);
  }
  return "";
}

}  // namespace

void table_source::on_start(const operator_setup& setup) {
  name_ = setup.name;
  if (setup.outputs.empty()) throw run_error({name_, "", std::nullopt}, "a source needs an output topic");
  const topic_info& out = setup.outputs.front();
  topic_ = out.name;
  try {
    file_.emplace(path_);
  } catch (const run_error& e) {
    throw run_error({name_, topic_, std::nullopt}, e.reason());
  }
  if (!out.columnar)
    throw run_error({name_, topic_, std::nullopt},
                    "the output topic is not columnar (layout: columnar); the table file '" + path_ +
                        "' needs one with its columns (xeflow-table info prints the topic)");
  if (std::string why = schema_difference(out, *out.columnar, *file_); !why.empty())
    throw run_error({name_, topic_, std::nullopt},
                    "the output topic's columns differ from the table's: " + why);
  if (out.frame_bytes != file_->frame_bytes())
    throw run_error({name_, topic_, std::nullopt},
                    "the output topic's frames have " + std::to_string(out.frame_bytes) +
                        " bytes, the table's " + std::to_string(file_->frame_bytes()));
  const std::uint64_t frames = file_->frames();
  if (frames != 0 && passes_ > std::numeric_limits<std::uint64_t>::max() / frames)
    throw run_error(
        {name_, topic_, std::nullopt},
        std::to_string(passes_) + " passes over " + std::to_string(frames) + " frames overflow the offsets");
  stream_frames_ = frames * passes_;
  // The heap has `capacity` frames (topic.cpp); an index past it is never a topic frame and is read.
  held_count_ = out.capacity;
  held_ = std::make_unique<std::atomic<std::uint64_t>[]>(held_count_);
  for (std::uint64_t i = 0; i < held_count_; ++i) held_[i].store(holds_nothing, std::memory_order_relaxed);
}

std::uint64_t table_source::read_into(std::uint64_t offset, std::uint64_t k, frame_out& out) const {
  XF_EXPECTS(file_.has_value(), "table_source reads between on_start and on_stop");
  XF_EXPECTS(out.capacity >= file_->frame_bytes(),
             "a source's output frame must hold the topic's frame size");
  std::uint64_t bytes = file_->frame_bytes();
  try {
    if (out.parts != nullptr && *out.parts) {
      thread_local std::vector<frame_range> parts;
      bytes = file_->read_frame_parts(k, out.data, *out.parts, parts);
    } else {
      file_->read_frame(k, out.data);
    }
  } catch (const run_error& e) {
    throw run_error({name_, topic_, offset}, e.reason());
  }
  out.bytes = file_->frame_bytes();
  return bytes;
}

bool table_source::produce(std::uint64_t offset, frame_out& out) {
  if (offset >= stream_frames_) return false;
  const std::uint64_t k = offset % file_->frames();
  publish_counts& counts = counts_.local();
  if (out.frame_index >= held_count_) {
    add_single_writer(counts.bytes_read, read_into(offset, k, out));
    add_single_writer(counts.read, 1);
    return true;
  }
  // Relaxed suffices: the heap frame passed from its previous publisher to us through the topic protocol
  // (subscribers' release, slot_free's acquire, the heap bitmap's acq_rel), which orders both the frame's
  // bytes and this record before our loads. The atomic is for a misbehaving caller and for TSan.
  std::atomic<std::uint64_t>& held = held_[out.frame_index];
  if (held.load(std::memory_order_relaxed) == k) {
    XF_EXPECTS(out.capacity >= file_->frame_bytes(),
               "a source's output frame must hold the topic's frame size");
    out.bytes = file_->frame_bytes();
    // The framework clears the index's valid flag before every publisher's hook, so that no frame goes
    // out with a stale index; this one's pages and index are what we read, untouched since.
    columnar_header(out.data).flags |= columnar_frame_header::index_valid;
    add_single_writer(counts.in_place, 1);
    return true;
  }
  // Forget the old content first: should the read fail, the frame holds nothing we would trust.
  held.store(holds_nothing, std::memory_order_relaxed);
  add_single_writer(counts.bytes_read, read_into(offset, k, out));
  held.store(k, std::memory_order_relaxed);
  add_single_writer(counts.read, 1);
  return true;
}

bool table_source::expected(std::uint64_t offset, frame_out& out) const {
  out.bytes = 0;
  if (offset >= stream_frames_) return false;
  read_into(offset, offset % file_->frames(), out);
  return true;
}

operator_counters table_source::counters() const {
  operator_counters c{{"frames_read", 0}, {"frames_in_place", 0}, {"bytes_read", 0}, {"bytes_left", 0}};
  counts_.for_each([&](const publish_counts& s) {
    c["frames_read"] += s.read.load(std::memory_order_relaxed);
    c["frames_in_place"] += s.in_place.load(std::memory_order_relaxed);
    c["bytes_read"] += s.bytes_read.load(std::memory_order_relaxed);
  });
  if (file_) c["bytes_left"] = c["frames_read"] * file_->frame_bytes() - c["bytes_read"];
  return c;
}

}  // namespace xf
