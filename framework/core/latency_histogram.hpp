// Per-frame latencies, recorded from many threads and summarised as percentiles: log-linear buckets
// (16 per power of two, so any percentile is within ~4.5% of the true value) with relaxed atomic counts.
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <cstdint>

namespace xf {

class latency_histogram {
 public:
  void record(std::uint64_t ns) noexcept { counts_[bucket_of(ns)].fetch_add(1, std::memory_order_relaxed); }
  std::uint64_t count() const noexcept {
    std::uint64_t n = 0;
    for (const auto& c : counts_) n += c.load(std::memory_order_relaxed);
    return n;
  }
  /// The value under which a fraction `q` (0..1) of the recorded latencies lie (a bucket's midpoint);
  /// 0 when nothing was recorded.
  std::uint64_t percentile(double q) const noexcept {
    const std::uint64_t total = count();
    if (total == 0) return 0;
    const auto rank = static_cast<std::uint64_t>(q * static_cast<double>(total - 1));
    std::uint64_t seen = 0;
    for (std::size_t b = 0; b < buckets; ++b) {
      seen += counts_[b].load(std::memory_order_relaxed);
      if (seen > rank) return midpoint(b);
    }
    return midpoint(buckets - 1);
  }

 private:
  static constexpr unsigned sub_bits = 4;  // 16 buckets per power of two

 public:
  static constexpr std::size_t buckets = 64 << sub_bits;
  /// Latencies recorded into bucket b so far (relaxed: others may be recording), for live metrics, which
  /// fold the buckets into their own.
  std::uint64_t bucket(std::size_t b) const noexcept { return counts_[b].load(std::memory_order_relaxed); }
  /// The latency bucket b stands for: its midpoint.
  static std::uint64_t bucket_value(std::size_t b) noexcept { return midpoint(b); }

 private:
  static std::size_t bucket_of(std::uint64_t v) noexcept {
    if (v < (1u << sub_bits)) return static_cast<std::size_t>(v);
    const unsigned exp = 63 - static_cast<unsigned>(std::countl_zero(v));  // v in [2^exp, 2^(exp+1))
    const std::uint64_t mantissa = (v >> (exp - sub_bits)) & ((1u << sub_bits) - 1);
    return ((exp - sub_bits + 1) << sub_bits) + mantissa;
  }
  static std::uint64_t midpoint(std::size_t b) noexcept {
    if (b < (1u << sub_bits)) return b;
    const unsigned exp = static_cast<unsigned>(b >> sub_bits) + sub_bits - 1;
    const std::uint64_t mantissa = b & ((1u << sub_bits) - 1);
    const std::uint64_t low = (std::uint64_t{1} << exp) + (mantissa << (exp - sub_bits));
    return low + (std::uint64_t{1} << (exp - sub_bits)) / 2;
  }

  std::array<std::atomic<std::uint64_t>, buckets> counts_{};
};

}  // namespace xf
