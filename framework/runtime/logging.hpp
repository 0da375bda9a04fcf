// Logging set-up for tools: spdlog to stderr (and a log file when asked), the level from -v/-q or, when the
// command line says nothing, from XEFLOW_LOG_LEVEL. Host code only (never in .cu files: nvcc 13 rejects
// fmt's compile-time format strings under C++20).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace xf {

/// spdlog's levels, the least severe first: a level shows its own lines and every more severe one.
enum class log_level : std::uint8_t { trace, debug, info, warn, error, off };

/// The environment variable that sets the level when the command line does not.
inline constexpr const char* log_level_variable = "XEFLOW_LOG_LEVEL";

/// "trace", "debug", "info", "warn", "error" or "off", in any case; nothing for any other text.
std::optional<log_level> parse_log_level(std::string_view text);

/// The level -v/-q ask for, as verbosity: -1 (quiet) warn, 0 info, 1 debug, 2 or more trace.
log_level level_of_verbosity(int verbosity);

struct log_options {
  /// The level the command line asks for (-v, -q); when set, XEFLOW_LOG_LEVEL is not looked at.
  std::optional<log_level> command_line;
  log_level fallback = log_level::info;  ///< when neither the command line nor the environment says
  /// When not empty, follows the program's name on each line ("xeflow[rank 1]: info: …").
  std::string who;
  /// When not empty, every line also goes to this file (truncated first; lines carry a timestamp and are
  /// flushed as they are written, so that a run that is killed leaves its log).
  std::string file;
};

/// Makes spdlog's default logger: lines to stderr and to `options.file`, at the command line's level,
/// else XEFLOW_LOG_LEVEL's (an empty value counts as unset), else the fallback. Returns that level.
/// Throws config_error, leaving the logging as it was, when XEFLOW_LOG_LEVEL holds anything else than a
/// level name or the file cannot be opened for writing (each message names the variable or the file).
/// Not thread-safe: call it before the program's threads log.
log_level configure_logging(const log_options& options);

/// configure_logging with the command line's `verbosity` (level_of_verbosity) and no file. Never throws.
void configure_logging(int verbosity, const std::string& who = "");

}  // namespace xf
