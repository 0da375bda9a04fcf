// A run of frames copied by parts, shaped for the copy engines: bytes kept at the same place in consecutive
// frames of the run are one 2-D copy at the frames' pitch, the rest go part by part.
//
// A columnar frame's kept pages are mostly whole columns, at the same offsets in every frame of a run. Sent
// as one 1-D copy per frame and range of columns, a run of 64 frames is hundreds of copies, and the engines
// pay a fixed cost for each besides its bytes; as 2-D copies it is a few. The ranges a frame keeps need not
// repeat exactly: a page kept next to a whole column in one frame and not the next joins that frame's range
// but not the other's, so the split works on the pieces between every range's ends in the run.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "framework/core/frame.hpp"

namespace xf {

/// Bytes `part` of `frames` consecutive frames of a run, from the run's frame `first`.
struct part_stack {
  std::uint64_t first = 0;
  std::uint64_t frames = 0;
  frame_range part;
};

/// Splits a run's parts into stacks and the parts left to each frame. Keeps its scratch between runs.
class part_stacker {
 public:
  /// `parts[k]`, k < count: frame k's parts, none overlapping. Bytes kept by at least `min_frames`
  /// consecutive frames become stacks (as wide as the same frames keep them); every other byte is in a part
  /// appended to `rest[k]` (cleared first, resized to `count` if smaller; neither sorted nor joined:
  /// join_ranges does both). Every byte of every part is in exactly one stack or one rest.
  void split(const std::vector<std::vector<frame_range>>& parts, std::uint64_t count,
             std::uint64_t min_frames, std::vector<part_stack>& stacks,
             std::vector<std::vector<frame_range>>& rest) {
    stacks.clear();
    if (rest.size() < count) rest.resize(count);
    for (std::uint64_t k = 0; k < count; ++k) rest[k].clear();
    // Windows of 64 frames: a frame is a bit of a piece's mask.
    for (std::uint64_t window = 0; window < count; window += 64)
      split_window(parts, window, std::min<std::uint64_t>(64, count - window), min_frames, stacks, rest);
  }

 private:
  void split_window(const std::vector<std::vector<frame_range>>& parts, std::uint64_t window, std::uint64_t n,
                    std::uint64_t min_frames, std::vector<part_stack>& stacks,
                    std::vector<std::vector<frame_range>>& rest) {
    // The pieces: between every two consecutive ends of any frame's parts, each kept by a set of frames.
    cuts_.clear();
    for (std::uint64_t k = window; k < window + n; ++k)
      for (const frame_range& r : parts[k]) {
        cuts_.push_back(r.offset);
        cuts_.push_back(r.offset + r.bytes);
      }
    std::sort(cuts_.begin(), cuts_.end());
    cuts_.erase(std::unique(cuts_.begin(), cuts_.end()), cuts_.end());
    masks_.assign(cuts_.size(), 0);
    for (std::uint64_t k = window; k < window + n; ++k)
      for (const frame_range& r : parts[k])
        for (auto i = static_cast<std::size_t>(std::lower_bound(cuts_.begin(), cuts_.end(), r.offset) -
                                               cuts_.begin());
             cuts_[i] < r.offset + r.bytes; ++i)
          masks_[i] |= std::uint64_t{1} << (k - window);
    const auto close = [&](const part_stack& s) {
      if (s.frames >= min_frames) {
        stacks.push_back(s);
        return;
      }
      for (std::uint64_t k = s.first; k < s.first + s.frames; ++k) rest[k].push_back(s.part);
    };
    // Piece by piece, each maximal run of consecutive frames in its mask; a run of the same frames as one
    // ending where this piece starts widens that stack.
    open_.clear();
    for (std::size_t i = 0; i + 1 < cuts_.size(); ++i) {
      next_.clear();
      const std::uint64_t width = cuts_[i + 1] - cuts_[i];
      for (std::uint64_t mask = masks_[i]; mask != 0;) {
        const auto first = static_cast<unsigned>(std::countr_zero(mask));
        const auto frames = static_cast<unsigned>(std::countr_one(mask >> first));
        mask &= frames + first >= 64 ? 0 : ~std::uint64_t{0} << (first + frames);
        const auto same = std::find_if(open_.begin(), open_.end(), [&](const part_stack& s) {
          return s.frames == frames && s.first == window + first;
        });
        if (same != open_.end()) {
          part_stack s = *same;
          s.part.bytes += width;
          next_.push_back(s);
          same->frames = 0;  // moved on
        } else {
          next_.push_back({window + first, frames, {cuts_[i], width}});
        }
      }
      for (const part_stack& s : open_)
        if (s.frames != 0) close(s);
      open_.swap(next_);
    }
    for (const part_stack& s : open_) close(s);
  }

  std::vector<std::uint64_t> cuts_;      ///< the window's part ends, sorted, unique
  std::vector<std::uint64_t> masks_;     ///< masks_[i]: the frames that keep [cuts_[i], cuts_[i + 1])
  std::vector<part_stack> open_, next_;  ///< stacks that reach the end of the piece looked at
};

}  // namespace xf
