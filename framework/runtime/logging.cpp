// Logging set-up.
#include "framework/runtime/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace xf {

void configure_logging(int verbosity, const std::string& who) {
  auto logger = spdlog::stderr_color_mt("xeflow");
  logger->set_pattern(who.empty() ? "xeflow: %^%l%$: %v" : "xeflow[" + who + "]: %^%l%$: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(verbosity < 0    ? spdlog::level::warn
                    : verbosity == 0 ? spdlog::level::info
                    : verbosity == 1 ? spdlog::level::debug
                                     : spdlog::level::trace);
}

}  // namespace xf
