// Byte quantities with units, as topologies write them ("64KiB", "1 GiB", "4096").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace xf {

inline constexpr std::uint64_t KiB = 1024;
inline constexpr std::uint64_t MiB = 1024 * KiB;
inline constexpr std::uint64_t GiB = 1024 * MiB;
inline constexpr std::uint64_t TiB = 1024 * GiB;

/// Parses a byte count: a non-negative integer optionally followed (after optional spaces) by a unit:
/// B, KiB, MiB, GiB, TiB (powers of 1024; Ki, Mi, Gi too) or kB/KB, MB, GB, TB (powers of 1000). Units
/// are case-sensitive. Returns nullopt for anything else, or on overflow.
std::optional<std::uint64_t> parse_bytes(std::string_view text);

/// The reason `text` is not a byte count, for error messages ("unknown unit 'KB'; use KiB, MiB, …").
std::string bytes_syntax_problem(std::string_view text);

/// "64 KiB", "1.5 GiB", "4097 B": the largest binary unit that keeps the number readable.
std::string format_bytes(std::uint64_t bytes);

/// `value` with `digits` decimals ("%.*f"), for tables and labels.
std::string format_fixed(double value, int digits);

}  // namespace xf
