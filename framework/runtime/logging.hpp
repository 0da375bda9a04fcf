// Logging set-up for tools: spdlog to stderr, verbosity from -v/-q. Host code only (never in .cu files:
// nvcc 13 rejects fmt's compile-time format strings under C++20).
#pragma once

namespace xf {

/// verbosity: -1 quiet (warnings and errors), 0 normal (info), 1 debug (-v), 2 trace (-vv).
void configure_logging(int verbosity);

}  // namespace xf
