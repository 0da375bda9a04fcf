// Logging set-up.
#include "framework/runtime/logging.hpp"

#include <fcntl.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "framework/core/errors.hpp"

namespace xf {
namespace {

constexpr std::array<std::string_view, 6> level_names{"trace", "debug", "info", "warn", "error", "off"};

spdlog::level::level_enum spdlog_level(log_level level) {
  switch (level) {
    case log_level::trace:
      return spdlog::level::trace;
    case log_level::debug:
      return spdlog::level::debug;
    case log_level::info:
      return spdlog::level::info;
    case log_level::warn:
      return spdlog::level::warn;
    case log_level::error:
      return spdlog::level::err;
    case log_level::off:
      break;
  }
  return spdlog::level::off;
}

/// The level XEFLOW_LOG_LEVEL asks for; nothing when it is unset or empty.
std::optional<log_level> level_from_environment() {
  const char* value = std::getenv(log_level_variable);
  if (value == nullptr || *value == '\0') return std::nullopt;
  if (std::optional<log_level> level = parse_log_level(value)) return level;
  throw config_error(source_pos{}, std::string(log_level_variable) + "='" + value +
                                       "' is not a log level: trace, debug, info, warn, error or off");
}

/// Opens (and truncates) the log file here, not in spdlog, for a message with the system's reason, and
/// because spdlog would create missing directories: a mistyped path should fail like a shell's `>`.
void check_log_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    throw config_error(source_pos{},
                       "cannot open the log file '" + path + "' for writing: " + std::strerror(errno));
  ::close(fd);
}

}  // namespace

std::optional<log_level> parse_log_level(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::size_t i = 0; i < level_names.size(); ++i)
    if (lower == level_names[i]) return static_cast<log_level>(i);
  return std::nullopt;
}

log_level level_of_verbosity(int verbosity) {
  return verbosity < 0    ? log_level::warn
         : verbosity == 0 ? log_level::info
         : verbosity == 1 ? log_level::debug
                          : log_level::trace;
}

log_level configure_logging(const log_options& options) {
  const log_level level =
      options.command_line ? *options.command_line : level_from_environment().value_or(options.fallback);
  const std::string name = options.who.empty() ? "xeflow" : "xeflow[" + options.who + "]";
  std::vector<spdlog::sink_ptr> sinks;
  auto to_stderr = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  to_stderr->set_pattern(name + ": %^%l%$: %v");
  sinks.push_back(std::move(to_stderr));
  if (!options.file.empty()) {
    check_log_file(options.file);
    std::shared_ptr<spdlog::sinks::basic_file_sink_mt> to_file;
    try {
      to_file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(options.file, false);
    } catch (const spdlog::spdlog_ex& e) {
      throw config_error(source_pos{}, "cannot open the log file '" + options.file + "': " + e.what());
    }
    to_file->set_pattern("[%Y-%m-%d %H:%M:%S.%e] " + name + ": %l: %v");
    sinks.push_back(std::move(to_file));
  }
  // Not registered by name (spdlog's registry refuses a second logger of one name): configuring again
  // replaces the default logger.
  auto logger = std::make_shared<spdlog::logger>("xeflow", sinks.begin(), sinks.end());
  logger->set_level(spdlog_level(level));
  if (!options.file.empty()) logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(std::move(logger));
  spdlog::set_level(spdlog_level(level));
  return level;
}

void configure_logging(int verbosity, const std::string& who) {
  log_options options;
  options.command_line = level_of_verbosity(verbosity);
  options.who = who;
  configure_logging(options);
}

}  // namespace xf
