// Testing an operator: xf::operator_harness runs one operator (CPU or GPU, on the host executor) alone on
// frames given in memory, through the real validation, planner and topics, and returns its outputs by
// offset, its counters and the run's failure if any:
//
//   xf::operator_registry registry;
//   registry.add<my_map>("my_map");
//   xf::operator_harness h(registry, xf::op("m", "my_map").param("k", 3));
//   h.input(std::vector<std::vector<std::uint8_t>>{{1, 2, 3}});
//   const xf::harness_result r = h.run();   // r.output_as<std::uint8_t>(0, 0), r.counters, r.error
#pragma once

#include "framework/launch/operator_harness.hpp"
#include "framework/model/topology_builder.hpp"
