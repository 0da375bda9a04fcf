// verify_sink: the per-frame checks, the reference-end search and the end-of-run summary.
#include "operators/sinks/verify_sink.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "framework/errors.hpp"

namespace xf {

namespace {

void add_relaxed(std::atomic<std::uint64_t>& counter, std::uint64_t n) {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);  // single writer
}

std::uint32_t crc_of(const std::byte* data, std::uint64_t bytes) {
  return static_cast<std::uint32_t>(
      crc32_z(0, reinterpret_cast<const Bytef*>(data), static_cast<z_size_t>(bytes)));
}

std::string hex32(std::uint32_t v) {
  char text[sizeof("0x") + 8];
  std::snprintf(text, sizeof text, "0x%08x", v);
  return text;
}

constexpr const char* anomaly_names[] = {"lost", "duplicated", "reordered", "corrupt"};

}  // namespace

void verify_sink::on_start(const operator_setup& setup) {
  name_ = setup.name;
  if (setup.inputs.empty()) throw run_error({name_, "", std::nullopt}, "a verify sink needs an input topic");
  topic_ = setup.inputs.front().name;
  interrupted_ = setup.interrupted;
  frame_bytes_ = setup.inputs.front().frame_bytes;
  element_ = setup.inputs.front().element;
  reference_ = setup.input_references.empty() ? nullptr : setup.input_references.front();
  if (!reference_) {
    throw run_error(
        {name_, topic_, std::nullopt},
        "no reference for the input: an upstream operator is not replayable, so the stream cannot be "
        "verified");
  }
  reference_end_ = find_reference_end();
}

std::optional<std::uint64_t> verify_sink::find_reference_end() const {
  std::vector<std::byte> buffer(frame_bytes_);
  auto has_frame = [&](std::uint64_t offset) {
    frame_out out{buffer.data(), frame_bytes_, 0, element_};
    return reference_->expected(offset, out);
  };
  // The end is monotone (false at o implies false after o): double until past it, then bisect.
  if (!has_frame(0)) return 0;
  std::uint64_t present = 0;  // has_frame(present) holds
  std::uint64_t absent = 1;   // candidate until has_frame(absent) fails
  while (has_frame(absent)) {
    present = absent;
    if (absent >= reference_search_limit) return std::nullopt;
    absent *= 2;
  }
  while (absent - present > 1) {
    const std::uint64_t mid = present + (absent - present) / 2;
    if (has_frame(mid)) {
      present = mid;
    } else {
      absent = mid;
    }
  }
  return absent;
}

void verify_sink::on_frame(std::uint64_t offset, const frame_in& in) {
  thread_state& state = slots_.local();
  add_relaxed(state.frames, 1);
  add_relaxed(state.bytes, in.bytes);
  if (state.previous_offset && offset <= *state.previous_offset) {
    add_relaxed(state.reordered, 1);
    record(reordered, offset,
           "offset " + std::to_string(offset) + " after offset " + std::to_string(*state.previous_offset) +
               " on one thread");
  }
  state.previous_offset = offset;
  if (offset >= state.delivered_end.load(std::memory_order_relaxed)) {
    state.delivered_end.store(offset + 1, std::memory_order_relaxed);
  }
  if (!seen_.insert(offset)) {
    add_relaxed(state.duplicated, 1);
    record(duplicated, offset, "offset " + std::to_string(offset) + " delivered again");
  }
  check_content(state, offset, in);
}

void verify_sink::check_content(thread_state& state, std::uint64_t offset, const frame_in& in) {
  if (state.expected.size() < frame_bytes_) state.expected.resize(frame_bytes_);
  frame_out want{state.expected.data(), frame_bytes_, 0, element_};
  if (!reference_->expected(offset, want)) {
    add_relaxed(state.corrupt, 1);
    record(corrupt, offset,
           "offset " + std::to_string(offset) + ": " + std::to_string(in.bytes) + " bytes, crc " +
               hex32(crc_of(in.data, in.bytes)) + ", but the stream ends at offset " +
               (reference_end_ ? std::to_string(*reference_end_) : std::string("?")));
    return;
  }
  if (want.bytes == in.bytes && std::memcmp(want.data, in.data, in.bytes) == 0) return;
  // Only a mismatch pays for the checksums: they identify the payloads in the report.
  add_relaxed(state.corrupt, 1);
  const std::uint64_t common = std::min(want.bytes, in.bytes);
  const auto* differ = std::mismatch(in.data, in.data + common, want.data).first;
  record(corrupt, offset,
         "offset " + std::to_string(offset) + ": crc " + hex32(crc_of(in.data, in.bytes)) + " expected " +
             hex32(crc_of(want.data, want.bytes)) + " (" + std::to_string(in.bytes) + " bytes, expected " +
             std::to_string(want.bytes) + "; first difference at byte " + std::to_string(differ - in.data) +
             ")");
}

void verify_sink::record(anomaly kind, std::uint64_t offset, std::string detail) {
  std::lock_guard lock(anomalies_mutex_);
  std::optional<std::uint64_t>& first = first_bad_[kind];
  if (!first || offset < *first) first = offset;
  if (details_.size() < max_reported_anomalies) {
    details_.push_back(std::move(detail));
  } else {
    ++details_dropped_;
  }
}

void verify_sink::on_stop() {
  if (stopped_) return;  // the loss count and the verdict are final after the first call
  stopped_ = true;
  std::uint64_t delivered_end = 0;
  slots_.for_each([&](const thread_state& s) {
    delivered_end = std::max(delivered_end, s.delivered_end.load(std::memory_order_relaxed));
  });
  const bool interrupted = interrupted_ != nullptr && interrupted_->load(std::memory_order_relaxed);
  const std::uint64_t limit = !reference_end_ ? delivered_end
                              : interrupted   ? std::min(*reference_end_, delivered_end)
                                              : *reference_end_;
  const seen_offsets::missing_summary missing = seen_.missing_below(limit);
  lost_.store(missing.count, std::memory_order_relaxed);
  if (missing.count > 0) {
    record(lost, *missing.first,
           std::to_string(missing.count) + " offsets below " + std::to_string(limit) +
               " never delivered, the first is offset " + std::to_string(*missing.first));
  }

  const operator_counters c = counters();
  std::string summary;
  std::optional<std::uint64_t> first_bad;
  std::lock_guard lock(anomalies_mutex_);
  for (int kind = 0; kind < anomaly_kinds; ++kind) {
    const std::uint64_t n = c.at(anomaly_names[kind]);
    if (n == 0) continue;
    summary += (summary.empty() ? "" : ", ") + std::to_string(n) + " " + anomaly_names[kind];
    if (first_bad_[kind]) {
      summary += " (first at offset " + std::to_string(*first_bad_[kind]) + ")";
      if (!first_bad || *first_bad_[kind] < *first_bad) first_bad = first_bad_[kind];
    }
  }
  if (summary.empty()) return;
  std::string reason =
      "verification failed: " + summary + " in " + std::to_string(c.at("frames")) + " frames received";
  for (const std::string& d : details_) reason += "; " + d;
  if (details_dropped_ > 0) reason += "; … " + std::to_string(details_dropped_) + " more";
  throw run_error({name_, topic_, first_bad}, reason);
}

operator_counters verify_sink::counters() const {
  operator_counters c{{"frames", 0},     {"bytes", 0},     {"lost", lost_.load(std::memory_order_relaxed)},
                      {"duplicated", 0}, {"reordered", 0}, {"corrupt", 0}};
  slots_.for_each([&](const thread_state& s) {
    c["frames"] += s.frames.load(std::memory_order_relaxed);
    c["bytes"] += s.bytes.load(std::memory_order_relaxed);
    c["duplicated"] += s.duplicated.load(std::memory_order_relaxed);
    c["reordered"] += s.reordered.load(std::memory_order_relaxed);
    c["corrupt"] += s.corrupt.load(std::memory_order_relaxed);
  });
  return c;
}

}  // namespace xf
