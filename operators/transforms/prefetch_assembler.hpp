// prefetch_assembler: the BigKernel paper's stage 2 (data assembly) as a CPU map: each address frame a
// prefetch_addresses GPU operator wrote (address_frame.hpp) becomes a data frame — CPU threads decode every
// lane's address stream and copy the items it names out of a memory-mapped dataset, lane by lane (§IV-B:
// one lane's mostly consecutive reads at a time), into the consumer's order (gather.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"
#include "operators/sinks/thread_slots.hpp"
#include "operators/sources/mapped_file.hpp"

namespace xf {

/// Address frame o (u64) in, data frame o out: item k of lane l at (k·L + l)·item_bytes, as many bytes as
/// reach the last item any lane has (a lane with fewer items leaves `pad` bytes, zeros by default, where
/// its later items would be).
/// Errors (run_error naming the operator, its input topic and the offset): a frame that is not an address
/// frame or whose header does not fit it, a lane's malformed words, an address past the dataset's end, a
/// data frame too small for the items (the first bad lane and item are named). The dataset must not change
/// while the run lasts (it is mapped: see mapped_file).
///
/// Replay: the data frame is a function of the address frame, so verify sinks downstream replay the
/// chain through replay(), which leaves the counters alone. on_frame and replay are thread-safe.
class prefetch_assembler final : public cpu_map {
 public:
  struct params {
    std::string path;
    std::int64_t item_bytes = 4;
    std::int64_t pad = 0;
  };

  static void describe(operator_schema<params>& s) {
    s.describe(
        "BigKernel data assembly: decodes the address streams of a prefetch_addresses GPU operator and "
        "gathers the items they name from a memory-mapped dataset into data frames, in the consumer's "
        "order (item k of lane l at (k*L + l)*item_bytes)");
    s.param(&params::path, "path", "the dataset file the addresses point into (memory-mapped, read-only)",
            required);
    s.param(&params::item_bytes, "item_bytes", "bytes each address names (1, 2, 4, 8 or 16): the generator's",
            params{}.item_bytes, 1, 16);
    s.param(&params::pad, "pad",
            "the byte written where a lane has fewer items than the frame's longest (32, a space, lets a "
            "word counter read a text's lanes as text)",
            params{}.pad, 0, 255);
  }

  explicit prefetch_assembler(const params& p) : params_(p) {}

  /// Maps the dataset and checks the topics (u64 addresses in, items that are whole output elements);
  /// run_error naming the operator and topic when it cannot.
  void on_start(const operator_setup& setup) override;
  void on_frame(std::uint64_t offset, const frame_in& in, frame_out& out) override;
  void replay(std::uint64_t offset, const frame_in& in, frame_out& out) override;
  /// {addresses (= items: each address names one item), address_bytes (the header, used words and lanes'
  /// used words: what carried the addresses, 8 bytes a word), items, bytes_gathered, compression_percent
  /// (100 · addresses · 8 / address_bytes: 100 is one word per address)}.
  operator_counters counters() const override;

 private:
  struct frame_counts {
    std::uint64_t addresses = 0;
    std::uint64_t address_words = 0;
  };
  frame_counts assemble(std::uint64_t offset, const frame_in& in, frame_out& out) const;

  struct alignas(cache_line_bytes) assembly_counts {
    std::atomic<std::uint64_t> addresses{0};  // written by the owning thread only
    std::atomic<std::uint64_t> address_words{0};
  };

  params params_;
  std::uint32_t item_bytes_ = 4;
  std::string name_;
  std::string topic_;
  mapped_file dataset_;
  thread_slots<assembly_counts> counts_;
};

}  // namespace xf
