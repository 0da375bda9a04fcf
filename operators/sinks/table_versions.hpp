// table_writer and table_check: a lookup table that changes mid-stream, and the proof that every frame was
// looked up in the version its offset asked for. table_writer publishes version v of a shared object at
// offset v · every (entry j of version v is v · 65536 + j); table_lookup (a GPU map) looks each element up in
// the version of its frame; table_check reads the same object on the CPU and checks that every element of
// frame o came from version o / every — the one both sides must have seen.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"

namespace xf {

/// Entry j of version v of the table table_writer writes.
constexpr std::uint32_t table_version_entry(std::uint64_t v, std::uint32_t j) {
  return static_cast<std::uint32_t>((v << 16) | (j & 0xffffu));
}

struct table_versions_params {
  std::int64_t every = 64;
  std::uint32_t entries = 256;
  bool promise = true;
};

/// A CPU sink with one thread: after its frame o with (o + 1) % every == 0 it writes version (o + 1) / every
/// into the `table` object and publishes it at offset o + 1. With `promise` it says so in advance (readers
/// of the frames up to the next version go on without waiting for it); without, readers of frame o wait
/// until it has finished the frames before o.
class table_writer final : public cpu_sink {
 public:
  using params = table_versions_params;
  static void describe(operator_schema<params>& s);

  explicit table_writer(const params& p) : params_(p) {}
  void on_start(const operator_setup& setup) override;
  void on_frame(std::uint64_t offset, const frame_in& in) override;
  /// {versions: published}.
  operator_counters counters() const override;

 private:
  params params_;
  object_port* table_ = nullptr;
  std::atomic<std::uint64_t> versions_{0};
};

/// A CPU sink over table_lookup's output: frame o must hold entries of version o / every only, and reading
/// the object as of offset o must give that version. Fails the run at on_stop if a frame did not.
class table_check final : public cpu_sink {
 public:
  using params = table_versions_params;
  static void describe(operator_schema<params>& s);

  explicit table_check(const params& p) : params_(p) {}
  void on_start(const operator_setup& setup) override;
  void on_frame(std::uint64_t offset, const frame_in& in) override;
  void on_stop() override;
  /// {frames, wrong_frames, last_version}.
  operator_counters counters() const override;

 private:
  params params_;
  std::string name_;
  object_port* table_ = nullptr;
  std::atomic<std::uint64_t> frames_{0}, wrong_{0}, last_version_{0};
  std::mutex first_wrong_mutex_;
  std::string first_wrong_;
};

}  // namespace xf
