// Logging set-up for tools: spdlog to stderr, verbosity from -v/-q. Host code only (never in .cu files:
// nvcc 13 rejects fmt's compile-time format strings under C++20).
#pragma once

#include <string>

namespace xf {

/// verbosity: -1 quiet (warnings and errors), 0 normal (info), 1 debug (-v), 2 trace (-vv). `who`, when
/// not empty, follows the program's name on each line ("xeflow[rank 1]: info: …").
void configure_logging(int verbosity, const std::string& who = "");

}  // namespace xf
