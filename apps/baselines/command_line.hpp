// xeflow-baseline's command line: its options and help, and their translation into a checked config.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "apps/baselines/baselines.hpp"

namespace xf::baselines {

// Exit codes: 0 ok; 1 the run failed (no GPU, CUDA error, mismatching output); 2 the command line or
// configuration cannot run (as xeflow-run does for config errors).
inline constexpr int exit_failed = 1;
inline constexpr int exit_usage = 2;

struct command_line {
  config cfg;  ///< validated (unless self_check), not resolved
  bool json = false;
  bool self_check = false;
  /// Set when the program must stop with this code without running: 0 after --help, exit_usage after a
  /// bad option or configuration (the message already written).
  std::optional<int> exit_code;
};

/// Parses and checks the command line. --help goes to `out`; errors, each naming the option, go to `err`
/// and give exit_code = exit_usage. Nothing here needs a GPU.
command_line parse_command_line(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

/// The value of --fma-iterations: comma-separated decimal counts ("4,64" → {4, 64}). Throws
/// std::invalid_argument naming the option on anything else (empty values, signs, non-digits, overflow);
/// the count of values and their range are validate()'s to check.
std::vector<std::uint32_t> parse_fma_iterations(const std::string& text);

}  // namespace xf::baselines
