// Fuzz target: a topology file's text through the loader and validation (load_topology_text, what
// xeflow-run's load_topology_file calls with the file's bytes), then to_yaml's round trip.
#include "tests/fuzz/fuzz_target.hpp"
#include "tests/fuzz/topology_checks.hpp"

XF_FUZZ_TARGET(topology) {
  load_and_round_trip(as_text(data), {});
  return 0;
}
