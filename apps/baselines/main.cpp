// xeflow-baseline: runs one conventional CPU→GPU→CPU streaming baseline (see baselines.cu) with xeflow's
// operators, data and verification, and prints throughput and per-batch latency as a table line or JSON.
#include <exception>
#include <iostream>
#include <stdexcept>

#include "apps/baselines/baselines.hpp"
#include "apps/baselines/command_line.hpp"
#include "apps/baselines/host_side.hpp"
#include "apps/baselines/report.hpp"

int main(int argc, char** argv) {
  using namespace xf::baselines;
  const command_line cl = parse_command_line(argc, argv, std::cout, std::cerr);
  if (cl.exit_code) return *cl.exit_code;
  if (cl.self_check) return run_self_check(std::cout);

  result r;
  try {
    r = run_baseline(cl.cfg);
  } catch (const std::invalid_argument& e) {
    std::cerr << "xeflow-baseline: error: " << e.what() << "\n";
    return exit_usage;
  } catch (const std::exception& e) {
    std::cerr << "xeflow-baseline: error: " << name_of(cl.cfg.mode) << ": " << e.what() << "\n";
    return exit_failed;
  }

  if (cl.json) {
    std::cout << to_json(r).dump() << std::endl;
  } else {
    print_table(r);
  }
  if (r.mismatches != 0) {
    std::cerr << "xeflow-baseline: error: " << r.mismatches
              << " output batch(es) did not match the expected checksum\n";
    for (const auto& report : r.mismatch_reports) std::cerr << "  " << report << "\n";
    return exit_failed;
  }
  return 0;
}
