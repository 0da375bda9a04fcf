// What the generators' and references' command lines share: exit codes, counts and byte sizes with units,
// --threads, CLI11 parsing with the project's exit codes, and the error-to-exit-code wrapper of main().
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace xf::apps {

// Exit codes: 0 ok; 1 the run failed (a file cannot be opened, read or written, or is malformed); 2 the
// command line cannot run (as xeflow-run and xeflow-baseline do).
inline constexpr int exit_failed = 1;
inline constexpr int exit_usage = 2;

/// An option value found unusable after CLI11 parsed it; what() names the option. Exit code 2.
class usage_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// A count with an optional unit: digits, then (after optional spaces) k/K, M, G, T (powers of 1000) or
/// Ki, Mi, Gi, Ti (powers of 1024): "2500", "64k", "1M", "16Mi". usage_error naming `option` otherwise,
/// and on overflow.
std::uint64_t parse_count(std::string_view option, std::string_view text);

/// A byte size as framework/core/units.hpp parse_bytes reads it ("64MiB", "1GB", "4096"); usage_error naming
/// `option` and the syntax problem otherwise.
std::uint64_t parse_byte_size(std::string_view option, std::string_view text);

/// --threads N (1 .. 4096; default: the hardware's threads, `threads`' value on entry is replaced).
CLI::Option* add_threads_option(CLI::App& app, unsigned& threads);

/// --repeat N (1 .. 1000, default 1): how many times a reference runs on one mapping of its files.
CLI::Option* add_repeat_option(CLI::App& app, unsigned& repeats);

/// Parses the command line. nullopt: go on; 0: --help was printed to `out`; exit_usage: the error was
/// printed to `err`.
std::optional<int> parse_or_exit(CLI::App& app, int argc, const char* const* argv, std::ostream& out,
                                 std::ostream& err);

/// Runs `work`, mapping exceptions to exit codes with one "TOOL: error: WHAT" line on `err`: usage_error →
/// exit_usage, any other exception → exit_failed. Returns 0 when `work` returns.
int run_tool(std::string_view tool, std::ostream& err, const std::function<void()>& work);

/// The timing fields of the references' JSON: seconds (the first run, mapping and first-touch page faults
/// included), gb_per_s = bytes_per_run / seconds / 10^9, and with repeats, warm_seconds (every later run on
/// the same mapping) and warm_gb_per_s (from the fastest of them).
void add_timing(nlohmann::json& j, double bytes_per_run, double seconds,
                const std::vector<double>& warm_seconds);

/// "0x0123abcd": how the tools print CRC-32 digests (JSON included).
std::string hex32(std::uint32_t value);

/// The references' last lines: "digest D, S s, G GB/s (DETAIL)" for the first run (mapping and first
/// touch included), then "warm (best of N): S s, G GB/s" over the --repeat runs, if any. `bytes` is what
/// the rate counts (the dataset times its passes).
void print_timing(std::ostream& out, std::uint32_t digest, double seconds,
                  const std::vector<double>& warm_seconds, double bytes, const std::string& detail);

}  // namespace xf::apps
