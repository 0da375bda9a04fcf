// Whether this test program is built with a sanitizer, and the smaller sizes its runs take there:
// ThreadSanitizer runs 5-15x slower, AddressSanitizer (built at -O0 in CI) about 3-10x on the data paths.
#pragma once

#include <cstdint>
#include <string>

namespace xf::test {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool under_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
inline constexpr bool under_sanitizer = true;
#else
inline constexpr bool under_sanitizer = false;
#endif
#else
inline constexpr bool under_sanitizer = false;
#endif

/// A run's length "16MiB" / "1GiB": as given, or a quarter (in MiB) under a sanitizer. Each topology still
/// streams many frames through every operator; the sanitizers look at every access of each.
inline std::string sanitized_bytes(const std::string& bytes) {
  if (!under_sanitizer) return bytes;
  const std::uint64_t mib = std::stoull(bytes) << (bytes.find("GiB") != std::string::npos ? 10 : 0);
  return std::to_string(mib / 4 > 0 ? mib / 4 : 1) + "MiB";
}

/// A count of generated records: as given, or a quarter under a sanitizer.
inline std::uint64_t sanitized_count(std::uint64_t count) {
  return under_sanitizer ? count / 4 : count;
}

}  // namespace xf::test
