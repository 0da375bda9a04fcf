// Fuzz target: the launcher's small command-line and environment values (what xeflow-run reads before any
// topology): --metrics [ADDRESS:]PORT, XEFLOW_LOG_LEVEL and --graph's format. Each input is tried as all
// three; an accepted metrics address must print as text that parses back to itself.
#include <string>

#include "framework/launch/metrics_server.hpp"
#include "framework/launch/topology_graph.hpp"
#include "framework/runtime/logging.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XF_FUZZ_TARGET(command_line) {
  const std::string_view text = as_text(data);
  std::string why;
  if (const std::optional<metrics_address> address = parse_metrics_address(text, why)) {
    fuzz_expect(why.empty(), "a metrics address parsed with a problem: " + why);
    std::string again_why;
    const std::optional<metrics_address> again = parse_metrics_address(address->str(), again_why);
    fuzz_expect(again && again->str() == address->str(),
                "--metrics " + address->str() + " (from '" + std::string(text) + "') does not parse back");
  } else {
    fuzz_expect(!why.empty(), "--metrics '" + std::string(text) + "' refused without a reason");
  }
  (void)parse_log_level(text);
  (void)parse_graph_format(text);
  return 0;
}
