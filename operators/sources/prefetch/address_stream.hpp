// The prefetch source's address stream (the BigKernel paper's §IV-A, pattern recognition): the addresses a
// GPU thread generates for the CPU assemblers, compressed to base + repeating strides while they follow a
// pattern and written out one by one where they do not. Unlike the paper, which gives up on a thread's
// patterns at the first address that breaks one, recognition starts again after a break, so a pattern that
// changes midstream (the next record's fields, the next line of text) is compressed again.
//
// Word format (64-bit words, one stream per thread):
//   explicit run: [tag_explicit | n] a_0 … a_{n−1}
//   pattern:      [tag_pattern | n] base [period] s_0 … s_{period−1}
//                 addresses base, base + s_0, base + s_0 + s_1, … (the strides repeat), n in all.
// Plain code for both sides: the encoder runs in the kernel's address-generation warps, the decoder in the
// CPU assemblers (and the tests).
#pragma once

#include <cstdint>
#include <type_traits>

#include "framework/core/exec_space.hpp"

namespace xf::prefetch {

/// Addresses a thread collects before it looks for a pattern: enough to see a period of
/// max_pattern_period strides repeat at least twice.
inline constexpr std::uint32_t pattern_window = 16;
/// Longest stride sequence a pattern repeats (a record's fields: 4 fields read → period 4).
inline constexpr std::uint32_t max_pattern_period = 4;

inline constexpr std::uint64_t tag_explicit = std::uint64_t{0} << 62;
inline constexpr std::uint64_t tag_pattern = std::uint64_t{1} << 62;
inline constexpr std::uint64_t tag_mask = std::uint64_t{3} << 62;
inline constexpr std::uint64_t count_mask = ~tag_mask;

/// A thread's word buffer (pinned host memory on the device path). The encoder never writes past
/// `capacity`: push/finish return false when a record would not fit, and the caller flushes.
struct address_words {
  std::uint64_t* words = nullptr;
  std::uint32_t capacity = 0;
  std::uint32_t used = 0;
};

/// Compresses one thread's addresses into an address_words buffer as they are generated.
class address_encoder {
 public:
  address_encoder() = default;
  /// `patterns` false: no recognition, every address is written out as it is (explicit runs only): the
  /// BigKernel paper's Table II baseline, what the address stage's `patterns: off` runs.
  XF_HOST_DEVICE explicit address_encoder(bool patterns) : patterns_(patterns) {}

  /// Adds the next address. False when the buffer is full: nothing is lost — the address is not taken
  /// and the encoder's state is unchanged, so the caller hands the full buffer on and pushes the same
  /// address into an empty one (or sizes buffers for the worst case, worst_case_words()).
  XF_HOST_DEVICE bool push(std::uint64_t address, address_words& out) {
    if (!patterns_) return write_explicit(address, out);
    if (following_) {
      const std::uint64_t expected = last_ + static_cast<std::uint64_t>(strides_[phase_]);
      if (address == expected) {
        last_ = address;
        phase_ = phase_ + 1 == period_ ? 0 : phase_ + 1;
        ++count_;
        return true;
      }
      // The pattern breaks: it is written out, and recognition starts again from this address.
      if (!write_pattern(out)) return false;
      following_ = false;
    }
    window_[held_++] = address;
    if (held_ < pattern_window) return true;
    if (const std::uint32_t p = find_period(); p != 0) {
      following_ = true;
      period_ = p;
      base_ = window_[0];
      for (std::uint32_t k = 0; k < p; ++k)
        strides_[k] = static_cast<std::int64_t>(window_[k + 1] - window_[k]);
      last_ = window_[held_ - 1];
      phase_ = (held_ - 1) % p;
      count_ = held_;
      held_ = 0;
      return true;
    }
    // No pattern in the window: its oldest address goes out as is, and the window slides on.
    if (!write_explicit(window_[0], out)) {
      --held_;  // the address just added stays unrecorded: the caller retries it
      return false;
    }
    for (std::uint32_t k = 1; k < held_; ++k) window_[k - 1] = window_[k];
    --held_;
    return true;
  }

  /// Writes what is held (a pattern in progress, the window's addresses). False when the buffer is full.
  XF_HOST_DEVICE bool finish(address_words& out) {
    if (following_) {
      if (!write_pattern(out)) return false;
      following_ = false;
    }
    while (held_ > 0) {
      if (!write_explicit(window_[0], out)) return false;
      for (std::uint32_t k = 1; k < held_; ++k) window_[k - 1] = window_[k];
      --held_;
    }
    run_header_ = no_run;
    return true;
  }

  /// Words n addresses can take at most: one explicit run of n.
  XF_HOST_DEVICE static std::uint64_t worst_case_words(std::uint64_t n) { return n + 1; }

 private:
  static constexpr std::uint32_t no_run = ~0u;

  /// The smallest period p ≤ max_pattern_period whose strides repeat across the whole window, or 0.
  XF_HOST_DEVICE std::uint32_t find_period() const {
    for (std::uint32_t p = 1; p <= max_pattern_period; ++p) {
      bool repeats = true;
      for (std::uint32_t i = p; i + 1 < held_ && repeats; ++i)
        repeats = window_[i + 1] - window_[i] == window_[i + 1 - p] - window_[i - p];
      if (repeats) return p;
    }
    return 0;
  }

  XF_HOST_DEVICE bool write_pattern(address_words& out) {
    const std::uint32_t need = 3 + period_;
    if (out.used + need > out.capacity) return false;
    out.words[out.used++] = tag_pattern | count_;
    out.words[out.used++] = base_;
    out.words[out.used++] = period_;
    for (std::uint32_t k = 0; k < period_; ++k)
      out.words[out.used++] = static_cast<std::uint64_t>(strides_[k]);
    run_header_ = no_run;
    return true;
  }

  /// Appends to the open explicit run (its header counts it), or opens one.
  XF_HOST_DEVICE bool write_explicit(std::uint64_t address, address_words& out) {
    const bool open = run_header_ != no_run && run_words_ == out.words && run_header_ < out.used;
    if (out.used + (open ? 1 : 2) > out.capacity) return false;
    if (!open) {
      run_header_ = out.used;
      run_words_ = out.words;
      out.words[out.used++] = tag_explicit;
    }
    ++out.words[run_header_];
    out.words[out.used++] = address;
    return true;
  }

  bool patterns_ = true;
  std::uint64_t window_[pattern_window] = {};
  std::uint32_t held_ = 0;
  bool following_ = false;
  std::uint64_t base_ = 0, last_ = 0, count_ = 0;
  std::int64_t strides_[max_pattern_period] = {};
  std::uint32_t period_ = 0, phase_ = 0;
  std::uint32_t run_header_ = no_run;         ///< index of the open explicit run's header …
  const std::uint64_t* run_words_ = nullptr;  ///< … in this buffer (a new buffer opens a new run)
};

namespace detail {
/// Calls visit(address); true unless a visitor that answers (returns bool) asks to stop.
template <class Visit>
XF_HOST_DEVICE bool visit_address(Visit& visit, std::uint64_t address) {
  if constexpr (std::is_same_v<decltype(visit(address)), bool>) {
    return visit(address);
  } else {
    visit(address);
    return true;
  }
}
}  // namespace detail

/// Calls `visit(address)` for every address of an encoded stream, in order; returns false (after
/// visiting what was well formed) when the words are malformed or truncated. A visitor that returns bool
/// ends the walk by returning false (decode_addresses then returns true): a pattern's header may count up
/// to 2^62 addresses in four words, so a reader that takes only so many items must stop there, not walk
/// the rest of a malformed or hostile count.
template <class Visit>
XF_HOST_DEVICE bool decode_addresses(const std::uint64_t* words, std::uint32_t used, Visit&& visit) {
  std::uint32_t i = 0;
  while (i < used) {
    const std::uint64_t header = words[i++];
    const std::uint64_t n = header & count_mask;
    if ((header & tag_mask) == tag_explicit) {
      if (n > used - i) return false;
      for (std::uint64_t k = 0; k < n; ++k)
        if (!detail::visit_address(visit, words[i++])) return true;
    } else if ((header & tag_mask) == tag_pattern) {
      if (used - i < 2) return false;
      std::uint64_t address = words[i++];
      const std::uint64_t period = words[i++];
      if (period == 0 || period > max_pattern_period || period > used - i) return false;
      const std::uint64_t* strides = words + i;
      i += static_cast<std::uint32_t>(period);
      // The stride index wraps by comparison: a modulo per address was most of a 1-byte item's gather.
      std::uint64_t s = 0;
      for (std::uint64_t k = 0; k < n; ++k) {
        if (!detail::visit_address(visit, address)) return true;
        address += strides[s];
        if (++s == period) s = 0;
      }
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace xf::prefetch
