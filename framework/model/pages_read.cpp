// Page readers' choice of a frame's parts, with readers whose index keeps everything resting.
#include "framework/model/pages_read.hpp"

#include <atomic>
#include <memory>

namespace xf {
namespace {

std::uint64_t bytes_of(const std::vector<frame_range>& ranges, std::size_t first) {
  std::uint64_t sum = 0;
  for (std::size_t i = first; i < ranges.size(); ++i) sum += ranges[i].bytes;
  return sum;
}

/// One reader and how its index has done lately. Relaxed counters: threads choosing different frames
/// update them at once, and a lost count only moves a rest or a probe by a frame.
struct reader_watch {
  const host_kernel_op* reader;
  std::atomic<std::uint32_t> barren{0};  ///< frames in a row where the index did not help
  std::atomic<std::uint32_t> rested{0};  ///< frames taken whole while resting

  explicit reader_watch(const host_kernel_op* r) : reader(r) {}

  void choose(const std::byte* frame, std::vector<frame_range>& out, std::uint32_t rest_after) {
    if (rest_after != 0 && barren.load(std::memory_order_relaxed) >= rest_after &&
        rested.fetch_add(1, std::memory_order_relaxed) % index_probe_every != index_probe_every - 1 &&
        reader->pages_bound(frame, out))
      return;
    const std::size_t first = out.size();
    reader->pages_read(frame, out);
    if (rest_after == 0) return;
    thread_local std::vector<frame_range> bound;
    bound.clear();
    if (!reader->pages_bound(frame, bound)) return;
    const std::uint64_t kept = bytes_of(out, first), most = bytes_of(bound, 0);
    if (kept + most / index_helps_share <= most)
      barren.store(0, std::memory_order_relaxed);
    else
      barren.fetch_add(1, std::memory_order_relaxed);
  }
};

}  // namespace

frame_selector pages_read_by(std::vector<const host_kernel_op*> readers, std::uint32_t rest_after) {
  if (readers.empty()) return {};
  // std::function copies its target: the watches are shared by every copy of the selector.
  auto watches = std::make_shared<std::vector<std::unique_ptr<reader_watch>>>();
  for (const host_kernel_op* r : readers) watches->push_back(std::make_unique<reader_watch>(r));
  return [watches, rest_after](const std::byte* frame, std::vector<frame_range>& out) {
    const std::size_t first = out.size();
    for (auto& w : *watches) w->choose(frame, out, rest_after);
    if (watches->size() > 1) join_ranges(out, first, 0);
  };
}

}  // namespace xf
