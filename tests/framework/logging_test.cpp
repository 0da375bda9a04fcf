// The tools' logging set-up: level names, the command line against XEFLOW_LOG_LEVEL, the log file.
#include "framework/runtime/logging.hpp"

#include <doctest/doctest.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>

#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "framework/core/errors.hpp"
#include "tests/support/scratch_dir.hpp"

using namespace xf;

namespace {

/// XEFLOW_LOG_LEVEL set (or unset) for a test, and the default logger it had, restored after.
class logging_scope {
 public:
  explicit logging_scope(const char* level) : logger_(spdlog::default_logger()) {
    if (const char* old = std::getenv(log_level_variable)) previous_ = old;
    if (level)
      ::setenv(log_level_variable, level, 1);
    else
      ::unsetenv(log_level_variable);
  }
  ~logging_scope() {
    if (previous_)
      ::setenv(log_level_variable, previous_->c_str(), 1);
    else
      ::unsetenv(log_level_variable);
    spdlog::set_default_logger(logger_);
    spdlog::set_level(logger_->level());
  }
  logging_scope(const logging_scope&) = delete;
  logging_scope& operator=(const logging_scope&) = delete;

 private:
  std::shared_ptr<spdlog::logger> logger_;
  std::optional<std::string> previous_;
};

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("logging.level_names_in_any_case") {
  CHECK(parse_log_level("trace") == log_level::trace);
  CHECK(parse_log_level("DEBUG") == log_level::debug);
  CHECK(parse_log_level("Info") == log_level::info);
  CHECK(parse_log_level("wArN") == log_level::warn);
  CHECK(parse_log_level("error") == log_level::error);
  CHECK(parse_log_level("OFF") == log_level::off);
  for (const char* wrong : {"", "warning", "err", "info ", "debugs", "bogus", "2"}) {
    CAPTURE(wrong);
    CHECK_FALSE(parse_log_level(wrong).has_value());
  }
  CHECK(level_of_verbosity(-1) == log_level::warn);
  CHECK(level_of_verbosity(0) == log_level::info);
  CHECK(level_of_verbosity(1) == log_level::debug);
  CHECK(level_of_verbosity(3) == log_level::trace);
}

TEST_CASE("logging.the_command_line_wins_over_the_environment") {
  const logging_scope scope("error");
  log_options options;
  CHECK(configure_logging(options) == log_level::error);
  CHECK(spdlog::default_logger()->level() == spdlog::level::err);
  options.command_line = log_level::debug;
  CHECK(configure_logging(options) == log_level::debug);
  CHECK(spdlog::default_logger()->level() == spdlog::level::debug);
  configure_logging(-1);  // -q
  CHECK(spdlog::default_logger()->level() == spdlog::level::warn);
}

TEST_CASE("logging.unset_or_empty_environment_gives_the_fallback") {
  for (const char* value : {static_cast<const char*>(nullptr), ""}) {
    const logging_scope scope(value);
    log_options options;
    options.fallback = log_level::warn;
    CHECK(configure_logging(options) == log_level::warn);
    options.fallback = log_level::info;
    CHECK(configure_logging(options) == log_level::info);
  }
}

TEST_CASE("logging.unknown_environment_level_is_a_config_error_naming_the_variable") {
  const logging_scope scope("verbose");
  const auto before = spdlog::default_logger();
  try {
    configure_logging(log_options{});
    FAIL("no error for XEFLOW_LOG_LEVEL=verbose");
  } catch (const config_error& e) {
    const std::string message = e.first().message;
    CHECK(message.find("XEFLOW_LOG_LEVEL") != std::string::npos);
    CHECK(message.find("'verbose'") != std::string::npos);
    CHECK(message.find("trace, debug, info, warn, error or off") != std::string::npos);
  }
  CHECK(spdlog::default_logger() == before);  // left as it was
  // The command line does not read the variable at all.
  log_options options;
  options.command_line = log_level::info;
  CHECK_NOTHROW(configure_logging(options));
}

TEST_CASE("logging.the_file_gets_every_line_with_a_timestamp") {
  const logging_scope scope(nullptr);
  const test::scratch_dir dir;
  const std::string path = dir.file("run.log");
  std::ofstream(path) << "an older run's log\n";
  log_options options;
  options.command_line = log_level::debug;
  options.who = "rank 3";
  options.file = path;
  configure_logging(options);
  spdlog::debug("operator '{}': a debug line", "scale");
  spdlog::trace("operator '{}': below the level", "scale");
  const std::string text = read_all(path);                      // flushed as written
  CHECK(text.find("an older run's log") == std::string::npos);  // truncated
  CHECK(text.find("] xeflow[rank 3]: debug: operator 'scale': a debug line\n") != std::string::npos);
  CHECK(text.rfind("[20", 0) == 0);  // "[2026-11-28 04:37:23.890] …"
  CHECK(text.find("below the level") == std::string::npos);
}

TEST_CASE("logging.a_file_that_cannot_be_opened_is_a_config_error_naming_it") {
  const logging_scope scope(nullptr);
  const test::scratch_dir dir;
  const auto before = spdlog::default_logger();
  for (const std::string& path : {dir.file("missing/run.log"), dir.file("")}) {
    CAPTURE(path);
    log_options options;
    options.command_line = log_level::info;
    options.file = path;
    try {
      configure_logging(options);
      FAIL("no error for the log file " << path);
    } catch (const config_error& e) {
      CHECK(e.first().message.find("cannot open the log file '" + path + "' for writing: ") == 0);
    }
    CHECK(spdlog::default_logger() == before);
  }
}
