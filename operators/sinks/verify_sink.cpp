// verify_sink: the per-frame checks, the reference-end search and the end-of-run summary.
#include "operators/sinks/verify_sink.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <future>
#include <stdexcept>
#include <thread>

#include "framework/core/errors.hpp"
#include "framework/core/single_writer.hpp"
#include "operators/frame_checksum.hpp"

namespace xf {

namespace {

std::uint32_t crc_of(const std::byte* data, std::uint64_t bytes) {
  return static_cast<std::uint32_t>(
      crc32_z(0, reinterpret_cast<const Bytef*>(data), static_cast<z_size_t>(bytes)));
}

std::string hex32(std::uint32_t v) {
  char text[sizeof("0x") + 8];
  std::snprintf(text, sizeof text, "0x%08x", v);
  return text;
}

std::string hex64(std::uint64_t v) {
  char text[sizeof("0x") + 16];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(v));
  return text;
}

constexpr const char* anomaly_names[] = {"lost", "duplicated", "reordered", "corrupt"};

verify_sink::compare_mode parse_mode(const std::string& mode) {
  if (mode == "exact") return verify_sink::compare_mode::exact;
  if (mode == "checksum") return verify_sink::compare_mode::checksum;
  throw std::invalid_argument("verify_sink mode '" + mode + "' is neither exact nor checksum");
}

}  // namespace

verify_sink::verify_sink(const params& p) : mode_(parse_mode(p.mode)) {}

void verify_sink::on_start(const operator_setup& setup) {
  name_ = setup.name;
  if (setup.inputs.empty()) throw run_error({name_, "", std::nullopt}, "a verify sink needs an input topic");
  topic_ = setup.inputs.front().name;
  interrupted_ = setup.interrupted;
  first_offset_ = setup.resume_offset;
  aborted_ = setup.aborted;
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
  if (mode_ == compare_mode::checksum) setup_checksum_cache(std::max<std::uint32_t>(1, setup.threads));
}

void verify_sink::setup_checksum_cache(std::uint32_t threads) {
  const std::uint64_t period = reference_->period();
  if (period == 0) return;
  // The stream's last frame may be short and is never cached, so only offsets below end - 1 use entries.
  std::uint64_t entries = std::min(period, max_cached_checksums);
  if (reference_end_) entries = std::min(entries, *reference_end_ > 0 ? *reference_end_ - 1 : 0);
  if (entries == 0) return;
  // The period is the chain's claim (map_reference assumes content-only maps): check it once where it
  // can be checked, so an offset-dependent map falls back to replaying rather than failing good frames.
  // These replays (two for the check, one for the stream's last frame) run at once: each is a whole
  // chain's compute.
  auto checksum_at = [this](std::uint64_t offset) {
    page_buffer buffer(frame_bytes_);
    frame_out out{buffer.data(), frame_bytes_, 0, element_};
    if (!reference_->expected(offset, out)) return std::optional<std::uint64_t>{};
    return std::optional<std::uint64_t>{frame_checksum(out.data, out.bytes)};
  };
  std::future<std::optional<expected_sum>> last;
  if (reference_end_ && *reference_end_ > 0)
    last = std::async(std::launch::async, [this] {
      thread_state state;
      return replay_checksum(state, *reference_end_ - 1);
    });
  // Frames of different phases differ by design (a map that changes its function at some offset): the
  // check compares offsets 0 and P only when they share a phase.
  if ((!reference_end_ || period + 1 < *reference_end_) &&
      reference_->phase_of(0) == reference_->phase_of(period)) {
    auto first = std::async(std::launch::async, checksum_at, std::uint64_t{0});
    const std::optional<std::uint64_t> repeat = checksum_at(period);
    const std::optional<std::uint64_t> head = first.get();
    if (!head || head != repeat) {
      if (last.valid()) last.wait();  // its replay reads this object
      return;
    }
  }
  cache_period_ = period;
  cache_entries_ = entries;
  cache_phases_ = reference_->phase_count();
  cache_ = std::make_unique<cached_checksum[]>(entries * cache_phases_);
  if (last.valid()) last_sum_ = last.get();
  if (entries * frame_bytes_ > eager_cache_bytes) return;
  // Replay the period now, before any frame arrives: a compute-heavy chain (FMA-64 over 4 MiB frames)
  // would otherwise slow the first pass of the stream and hold back the whole pipeline.
  std::vector<std::thread> fillers;
  const auto count = static_cast<std::uint32_t>(std::min<std::uint64_t>(threads, entries));
  std::vector<std::optional<std::string>> errors(count);
  for (std::uint32_t t = 0; t < count; ++t)
    fillers.emplace_back([this, t, count, &errors] {
      try {
        thread_state state;
        for (std::uint64_t o = t; o < cache_entries_; o += count) {
          // An interrupt during start-up stops the filling: entries left empty fill as frames arrive.
          if (cut_short()) break;
          const std::optional<expected_sum> sum = replay_checksum(state, o);
          if (!sum) continue;  // below the reference's end: not reached
          cached_checksum& entry = cache_[cache_index(o)];
          entry.checksum = sum->checksum;
          entry.bytes = sum->bytes;
          entry.state.store(cached_checksum::ready, std::memory_order_release);
        }
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& f : fillers) f.join();
  for (const auto& e : errors)
    if (e) throw run_error({name_, topic_, std::nullopt}, "replaying the expected frames failed: " + *e);
}

std::optional<std::uint64_t> verify_sink::find_reference_end() const {
  if (const std::optional<std::uint64_t> count = reference_->frame_count()) return count;
  page_buffer buffer(frame_bytes_);
  auto has_frame = [&](std::uint64_t offset) {
    frame_out out{buffer.data(), frame_bytes_, 0, element_};
    return reference_->expected(offset, out);
  };
  // The end is monotone (false at o implies false after o): double until past it, then bisect.
  if (!has_frame(0)) return 0;
  std::uint64_t present = 0;  // has_frame(present) holds
  std::uint64_t absent = 1;   // candidate until has_frame(absent) fails
  while (has_frame(absent)) {
    // Interrupted while searching: the stream ends early anyway (on_stop bounds losses by what came).
    if (cut_short()) return std::nullopt;
    present = absent;
    if (absent >= reference_search_limit) return std::nullopt;
    absent *= 2;
  }
  while (absent - present > 1) {
    if (cut_short()) return std::nullopt;
    const std::uint64_t mid = present + (absent - present) / 2;
    if (has_frame(mid)) {
      present = mid;
    } else {
      absent = mid;
    }
  }
  return absent;
}

bool verify_sink::cut_short() const {
  return (interrupted_ != nullptr && interrupted_->load(std::memory_order_relaxed)) ||
         (aborted_ != nullptr && aborted_->load(std::memory_order_relaxed));
}

void verify_sink::on_frame(std::uint64_t offset, const frame_in& in) {
  thread_state& state = slots_.local();
  add_single_writer(state.frames, 1);
  add_single_writer(state.bytes, in.bytes);
  if (state.previous_offset && offset <= *state.previous_offset) {
    add_single_writer(state.reordered, 1);
    record(reordered, offset,
           "offset " + std::to_string(offset) + " after offset " + std::to_string(*state.previous_offset) +
               " on one thread");
  }
  state.previous_offset = offset;
  if (offset >= state.delivered_end.load(std::memory_order_relaxed)) {
    state.delivered_end.store(offset + 1, std::memory_order_relaxed);
  }
  if (!seen_.insert(offset)) {
    add_single_writer(state.duplicated, 1);
    record(duplicated, offset, "offset " + std::to_string(offset) + " delivered again");
  }
  check_content(state, offset, in);
}

void verify_sink::check_content(thread_state& state, std::uint64_t offset, const frame_in& in) {
  if (mode_ == compare_mode::checksum) {
    check_checksum(state, offset, in);
    return;
  }
  state.expected.reserve(frame_bytes_);
  frame_out want{state.expected.data(), frame_bytes_, 0, element_};
  if (!reference_->expected(offset, want)) {
    add_single_writer(state.corrupt, 1);
    record(corrupt, offset,
           "offset " + std::to_string(offset) + ": " + std::to_string(in.bytes) + " bytes, crc " +
               hex32(crc_of(in.data, in.bytes)) + ", but the stream ends at offset " +
               (reference_end_ ? std::to_string(*reference_end_) : std::string("?")));
    return;
  }
  if (want.bytes == in.bytes && std::memcmp(want.data, in.data, in.bytes) == 0) return;
  // Only a mismatch pays for the checksums: they identify the payloads in the report.
  add_single_writer(state.corrupt, 1);
  const std::uint64_t common = std::min(want.bytes, in.bytes);
  const auto* differ = std::mismatch(in.data, in.data + common, want.data).first;
  record(corrupt, offset,
         "offset " + std::to_string(offset) + ": crc " + hex32(crc_of(in.data, in.bytes)) + " expected " +
             hex32(crc_of(want.data, want.bytes)) + " (" + std::to_string(in.bytes) + " bytes, expected " +
             std::to_string(want.bytes) + "; first difference at byte " + std::to_string(differ - in.data) +
             ")");
}

void verify_sink::check_checksum(thread_state& state, std::uint64_t offset, const frame_in& in) {
  const std::uint64_t got = frame_checksum(in.data, in.bytes);
  const std::optional<expected_sum> want = expected_checksum(state, offset);
  if (!want) {
    add_single_writer(state.corrupt, 1);
    record(corrupt, offset,
           "offset " + std::to_string(offset) + ": " + std::to_string(in.bytes) + " bytes, checksum " +
               hex64(got) + ", but the stream ends at offset " +
               (reference_end_ ? std::to_string(*reference_end_) : std::string("?")));
    return;
  }
  if (want->checksum == got) return;
  add_single_writer(state.corrupt, 1);
  record(corrupt, offset,
         "offset " + std::to_string(offset) + ": checksum " + hex64(got) + " expected " +
             hex64(want->checksum) + " (" + std::to_string(in.bytes) + " bytes, expected " +
             std::to_string(want->bytes) + ")");
}

std::optional<verify_sink::expected_sum> verify_sink::expected_checksum(thread_state& state,
                                                                        std::uint64_t offset) {
  // Cacheable: a periodic reference, an entry for o % P, and not the stream's last frame (it may be
  // short, so it is not a repeat of its dataset frame).
  const bool cacheable = cache_period_ != 0 && offset % cache_period_ < cache_entries_ &&
                         (!reference_end_ || offset + 1 < *reference_end_);
  if (!cacheable) {
    if (last_sum_ && offset + 1 == *reference_end_) return last_sum_;
    return replay_checksum(state, offset);
  }
  cached_checksum& entry = cache_[cache_index(offset)];
  if (entry.state.load(std::memory_order_acquire) == cached_checksum::ready) {
    return expected_sum{entry.checksum, entry.bytes};
  }
  const std::optional<expected_sum> sum = replay_checksum(state, offset);
  if (!sum) return sum;  // offset < end - 1, so the reference has a frame: unreachable but harmless
  // One thread publishes the entry; a thread that loses the race (or sees `filling`) has its own sum
  // already and just uses it.
  std::uint8_t expected_state = cached_checksum::empty;
  if (entry.state.compare_exchange_strong(expected_state, cached_checksum::filling,
                                          std::memory_order_relaxed)) {
    entry.checksum = sum->checksum;
    entry.bytes = sum->bytes;
    entry.state.store(cached_checksum::ready, std::memory_order_release);
  }
  return sum;
}

std::optional<verify_sink::expected_sum> verify_sink::replay_checksum(thread_state& state,
                                                                      std::uint64_t offset) {
  state.expected.reserve(frame_bytes_);
  frame_out want{state.expected.data(), frame_bytes_, 0, element_};
  if (!reference_->expected(offset, want)) return std::nullopt;
  return expected_sum{frame_checksum(want.data, want.bytes), want.bytes};
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
  // An aborted run (a failure, or a second interrupt) unwinds every wait at once: a thread that had taken
  // offset o and waited for it to be published gives up, while another thread may already have received
  // o + 1. Offsets below the highest delivered one are then missing by the abort's design, not lost by the
  // pipeline: losses are not judged (duplicates, order and content still are).
  const bool aborted = aborted_ != nullptr && aborted_->load(std::memory_order_relaxed);
  const std::uint64_t limit = !reference_end_ ? delivered_end
                              : interrupted   ? std::min(*reference_end_, delivered_end)
                                              : *reference_end_;
  // A resumed stream starts at its resume offset: what lies below it was checked by an earlier run.
  const seen_offsets::missing_summary missing =
      aborted ? seen_offsets::missing_summary{} : seen_.missing_in(first_offset_, limit);
  lost_.store(missing.count, std::memory_order_relaxed);
  if (missing.count > 0) {
    record(lost, *missing.first,
           std::to_string(missing.count) + " offsets below " + std::to_string(limit) +
               (first_offset_ != 0 ? " (from the resume offset " + std::to_string(first_offset_) + ")" : "") +
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
