// What a GPU file reader sees: it declares the ranges a work item needs in a `read_list`, and
// its compute reads them through `file_pages`, resident and pinned for the stage. Plain header, the same on
// both processors.
//
// file_pages has two shapes behind one interface, so an operator's compute never knows which backend ran:
//   - paged: the file cache's slots (fetch_item's entries): the GPU executor and the host cache;
//   - spans: each range in one flat buffer: the direct backend (a pread per range, for `on: cpu` and the
//     verify sinks' replays) and the resident backend (whole files in device memory, for the baselines).
#pragma once

#include <cstdint>
#include <type_traits>

#include "framework/core/exec_space.hpp"
#include "framework/files/file_cache_view.hpp"
#include "framework/files/file_fetch.hpp"

namespace xf {

/// The operator's k-th file (in the order its `files(params)` lists them), or a run-global id once mapped.
struct file_id {
  std::uint32_t index;
};

/// One stage's ranges, in order. Every virtual thread that builds it gets the same list (reads must be a
/// pure function of the item), so nothing is shared and nothing waits.
class read_list {
 public:
  static constexpr std::uint32_t capacity = fetch_item::max_ranges;

  /// Adds bytes [offset, offset + bytes) of `f`; false when the list is full (a stage reads at most
  /// `capacity` ranges): the list remembers it, and the executor fails the frame rather than run compute
  /// over fewer bytes than it asked for. Empty ranges add nothing and succeed.
  XF_HOST_DEVICE bool read(file_id f, std::uint64_t offset, std::uint64_t bytes) {
    if (bytes == 0) return true;
    if (count_ == capacity) {
      overflowed_ = true;
      return false;
    }
    ranges_[count_++] = {f.index, offset, bytes};
    return true;
  }
  /// A read() found the list full.
  XF_HOST_DEVICE bool overflowed() const { return overflowed_; }
  XF_HOST_DEVICE std::uint32_t size() const { return count_; }
  XF_HOST_DEVICE const file_range& operator[](std::uint32_t i) const { return ranges_[i]; }
  XF_HOST_DEVICE const file_range* data() const { return ranges_; }
  XF_HOST_DEVICE void clear() {
    count_ = 0;
    overflowed_ = false;
  }
  /// Turns the operator's file ids (0, 1, … in its `files` order) into the run's: the cache holds every
  /// reader's files, this operator's from `first_file` on.
  XF_HOST_DEVICE void shift_files(std::uint32_t first_file) {
    for (std::uint32_t r = 0; r < count_; ++r) ranges_[r].file += first_file;
  }

 private:
  file_range ranges_[capacity]{};
  std::uint32_t count_ = 0;
  bool overflowed_ = false;
};

/// Why a stage's ranges (run-global ids) cannot be read, checked before any is fetched: kind `none`, or a
/// file id the operator did not open (`ranges[index].file` ≥ file_count), or bytes past the file's size at
/// open. The executors turn it into the run's error with the path and bytes (range_problem_text).
enum class range_problem : std::uint32_t { none, unknown_file, past_end };
struct range_check {
  range_problem problem = range_problem::none;
  std::uint32_t index = 0;  ///< the range at fault
};
XF_HOST_DEVICE inline range_check check_ranges(const read_list& list, const std::uint64_t* file_size,
                                               std::uint32_t first_file, std::uint32_t file_count) {
  for (std::uint32_t r = 0; r < list.size(); ++r) {
    const file_range& range = list[r];
    if (range.file < first_file || range.file >= first_file + file_count)
      return {range_problem::unknown_file, r};
    const std::uint64_t size = file_size[range.file];
    if (range.offset > size || range.bytes > size - range.offset) return {range_problem::past_end, r};
  }
  return {};
}

/// A range held in one flat buffer (direct and resident backends): bytes [offset, offset + bytes) of
/// `file` at `data`.
struct file_span {
  std::uint32_t file;
  std::uint64_t offset;
  std::uint64_t bytes;
  const std::byte* data;
};

class file_pages {
 public:
  /// The cache's pages of a resolved item; the operator's file k is the cache's first_file + k.
  XF_HOST_DEVICE static file_pages paged(const file_cache_view* cache, const fetch_item* item,
                                         std::uint32_t first_file = 0) {
    file_pages p;
    p.cache_ = cache;
    p.item_ = item;
    p.first_file_ = first_file;
    return p;
  }
  /// Flat buffers, one per range.
  XF_HOST_DEVICE static file_pages flat(const file_span* spans, std::uint32_t count,
                                        const std::uint64_t* sizes) {
    file_pages p;
    p.spans_ = spans;
    p.span_count_ = count;
    p.sizes_ = sizes;
    return p;
  }

  /// The file's bytes at open.
  XF_HOST_DEVICE std::uint64_t size(file_id f) const {
    return cache_ != nullptr ? cache_->file_size[f.index + first_file_] : sizes_[f.index];
  }

  /// The byte at `offset` of `f`, which must lie inside one of the stage's ranges; nullptr otherwise (a
  /// read the operator did not declare).
  XF_HOST_DEVICE const std::byte* at(file_id f, std::uint64_t offset) const {
    if (cache_ != nullptr) return fetched_byte(*cache_, *item_, f.index + first_file_, offset);
    const file_span* s = span_of(f, offset);
    return s != nullptr ? s->data + (offset - s->offset) : nullptr;
  }

  /// Bytes readable through at(f, offset) in one piece: to the end of its page (paged) or of its range.
  XF_HOST_DEVICE std::uint64_t contiguous(file_id f, std::uint64_t offset) const {
    if (cache_ != nullptr) {
      const std::uint64_t page_end = (offset | (cache_->page_bytes() - 1)) + 1;
      const file_range* r = range_of(f, offset);
      if (r == nullptr) return 0;
      const std::uint64_t range_end = r->offset + r->bytes;
      return (page_end < range_end ? page_end : range_end) - offset;
    }
    const file_span* s = span_of(f, offset);
    return s != nullptr ? s->offset + s->bytes - offset : 0;
  }

  /// A value that may straddle pages (a trivially copyable T inside one declared range; bytes outside
  /// the declared ranges read as zero).
  template <class T>
  XF_HOST_DEVICE T load(file_id f, std::uint64_t offset) const {
    static_assert(std::is_trivially_copyable_v<T>, "loaded as bytes");
    T value{};
    copy(reinterpret_cast<std::byte*>(&value), f, offset, sizeof(T), 0, 1);
    return value;
  }

  /// Copies `bytes` at `offset` of `f` to `dst`, split among `threads` cooperating threads (this one is
  /// `thread`): each copies every threads-th 16-byte piece of each contiguous run, so a warp's lanes read
  /// consecutive pieces. Returns the bytes inside the declared ranges (all of them, for a correct reader):
  /// the copy stops where they end.
  XF_HOST_DEVICE std::uint64_t copy(std::byte* dst, file_id f, std::uint64_t offset, std::uint64_t bytes,
                                    std::uint32_t thread, std::uint32_t threads) const {
    std::uint64_t done = 0;
    while (done < bytes) {
      const std::byte* src = at(f, offset + done);
      std::uint64_t run = contiguous(f, offset + done);
      if (src == nullptr || run == 0) break;
      if (run > bytes - done) run = bytes - done;
      for (std::uint64_t piece = std::uint64_t{thread} * 16; piece < run;
           piece += std::uint64_t{threads} * 16) {
        const std::uint64_t n = run - piece < 16 ? run - piece : 16;
        for (std::uint64_t b = 0; b < n; ++b) dst[done + piece + b] = src[piece + b];
      }
      done += run;
    }
    return done;
  }

 private:
  XF_HOST_DEVICE const file_range* range_of(file_id f, std::uint64_t offset) const {
    for (std::uint32_t r = 0; r < item_->range_count; ++r) {
      const file_range& range = item_->ranges[r];
      if (range.file == f.index + first_file_ && offset >= range.offset &&
          offset < range.offset + range.bytes)
        return &range;
    }
    return nullptr;
  }
  XF_HOST_DEVICE const file_span* span_of(file_id f, std::uint64_t offset) const {
    for (std::uint32_t i = 0; i < span_count_; ++i) {
      const file_span& s = spans_[i];
      if (s.file == f.index && offset >= s.offset && offset < s.offset + s.bytes) return &s;
    }
    return nullptr;
  }

  const file_cache_view* cache_ = nullptr;
  const fetch_item* item_ = nullptr;
  std::uint32_t first_file_ = 0;
  const file_span* spans_ = nullptr;
  std::uint32_t span_count_ = 0;
  const std::uint64_t* sizes_ = nullptr;
};

}  // namespace xf
