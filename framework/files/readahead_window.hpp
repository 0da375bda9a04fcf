// How many pages a reader's cache miss fetches beyond the page it asked for (the GPUfs readahead paper's
// PAGE_SIZE + PREFETCH_SIZE request), decided per reader stream: always (`on`, the paper), never (`off`), or
// only while the reader's misses are sequential (`adaptive`, as Linux's readahead does), so data-dependent
// 4 KiB reads do not pay for pages they never use. Plain state, the same on the GPU and on host threads.
#pragma once

#include <cstdint>
#include <type_traits>

#include "framework/core/exec_space.hpp"

namespace xf {

enum class readahead_mode : std::uint32_t { off, on, adaptive };

/// One reader stream's readahead (a block's reads of one file). Not thread-safe: one reader owns it.
///
/// Adaptive: a miss is sequential when it lands after the reader's position (the furthest page it read) and
/// at most one window past it; a miss a little behind the position, within a window (a convolution's halo
/// rows read again), changes nothing; anything else is a jump. Readahead starts after two sequential misses
/// in a row, at `initial_window_pages`, and doubles with each further sequential miss up to the maximum; a
/// jump turns it off. If more than half of the pages it fetched went unused (counted over
/// `waste_sample_pages` fetched pages), the window halves.
class readahead_window {
 public:
  static constexpr std::uint32_t initial_window_pages = 4;
  static constexpr std::uint32_t waste_sample_pages = 64;

  readahead_window() = default;
  /// `max_pages`: the readahead setting in pages (readahead bytes / page bytes); 0 never fetches ahead.
  XF_HOST_DEVICE readahead_window(readahead_mode mode, std::uint32_t max_pages)
      : mode_(mode), max_pages_(max_pages) {}

  /// A miss at `page` (in neither the cache nor the reader's readahead buffer): how many pages after it
  /// to fetch with it. The caller clips them at the file's end and reports what arrives through fetched().
  XF_HOST_DEVICE std::uint32_t on_miss(std::uint64_t page) {
    const step s = classify(page);
    if (s != step::near_behind) position_ = page;
    touched_ = true;
    switch (mode_) {
      case readahead_mode::off:
        return 0;
      case readahead_mode::on:
        return max_pages_;
      case readahead_mode::adaptive:
        return adapt(s);
    }
    return 0;
  }

  /// A read of `page` served without a request: from the reader's readahead buffer (`fetched_ahead`: a page
  /// fetched ahead was used) or from the shared cache (another reader brought it in).
  XF_HOST_DEVICE void on_hit(std::uint64_t page, bool fetched_ahead) {
    if (fetched_ahead) ++used_;
    if (!touched_ || page > position_) position_ = page;
    touched_ = true;
  }

  /// `pages` fetched ahead arrived in the reader's buffer (after clipping at the file's end).
  XF_HOST_DEVICE void fetched(std::uint32_t pages) {
    fetched_ += pages;
    if (mode_ != readahead_mode::adaptive || fetched_ < waste_sample_pages) return;
    if (2 * used_ < fetched_) window_ /= 2;  // more than half wasted: fetch less while it stays sequential
    fetched_ = 0;
    used_ = 0;
  }

  /// The window of the last sequential miss (adaptive), in pages; 0 while readahead is off for the stream.
  XF_HOST_DEVICE std::uint32_t window_pages() const { return window_; }
  XF_HOST_DEVICE readahead_mode mode() const { return mode_; }

 private:
  enum class step : std::uint32_t { forward, near_behind, jump };

  XF_HOST_DEVICE step classify(std::uint64_t page) const {
    if (!touched_) return step::jump;
    const std::uint64_t reach = window_ > 1 ? window_ : 1;
    if (page > position_) return page - position_ <= reach ? step::forward : step::jump;
    return position_ - page <= reach ? step::near_behind : step::jump;
  }

  XF_HOST_DEVICE std::uint32_t adapt(step s) {
    if (s == step::near_behind) return 0;
    if (s == step::jump) {
      run_ = 0;
      window_ = 0;
      return 0;
    }
    if (run_ < 2) ++run_;
    if (run_ < 2) return 0;
    if (window_ == 0)
      window_ = initial_window_pages < max_pages_ ? initial_window_pages : max_pages_;
    else
      window_ = 2 * window_ < max_pages_ ? 2 * window_ : max_pages_;
    return window_;
  }

  readahead_mode mode_ = readahead_mode::off;
  std::uint32_t max_pages_ = 0;
  std::uint32_t window_ = 0;    ///< pages
  std::uint32_t run_ = 0;       ///< sequential misses in a row, counted up to 2
  std::uint32_t fetched_ = 0;   ///< pages fetched ahead in the current waste sample
  std::uint32_t used_ = 0;      ///< of those, pages read
  std::uint64_t position_ = 0;  ///< the furthest page read, or the last miss after a jump
  bool touched_ = false;
};

static_assert(std::is_trivially_copyable_v<readahead_window>, "kept in device memory per reader stream");

}  // namespace xf
