// Fuzz target: `--set` overrides applied to a topology. The input's first lines that begin "--set " are the
// arguments (what follows the prefix, as xeflow-run passes them to the loader); the rest is the topology.
#include <vector>

#include "tests/fuzz/fuzz_target.hpp"
#include "tests/fuzz/topology_checks.hpp"

XF_FUZZ_TARGET(overrides) {
  constexpr std::string_view prefix = "--set ";
  std::string_view text = as_text(data);
  std::vector<std::string> arguments;
  while (text.starts_with(prefix)) {
    const std::size_t end = text.find('\n');
    arguments.emplace_back(
        text.substr(prefix.size(), end == std::string_view::npos ? end : end - prefix.size()));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  }
  load_and_round_trip(text, arguments);
  return 0;
}
