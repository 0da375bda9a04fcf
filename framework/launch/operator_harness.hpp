// One operator run alone on frames given in memory, through the real validation, planner, topics and
// host executor, returning what it published and its counters: an operator's unit test with the
// framework around it (what Holoscan's OperatorTestHarness and Kafka Streams' TopologyTestDriver give).
//
//   xf::operator_harness h(registry, xf::op("scale", "scale").on(xf::placement::gpu).param("factor", 2.0));
//   h.element(xf::element_type::f32).frame_bytes(16);
//   h.input(std::vector<std::vector<float>>{{1, 2, 3, 4}, {5, 6, 7, 8}});   // its input, offset by offset
//   const xf::harness_result r = h.run();
//   r.output_as<float>(0, 1);                                              // {10, 12, 14, 16}
//
// A map gets one output topic, a source one, a sink none (outputs() says otherwise); each input topic
// is fed by a source of the frames given for it, and each output topic read by a sink that keeps every
// frame it sees. GPU operators run on the host executor (the same round as the kernel's): the registry
// must hold them (registry.add_gpu_operators<List>()). The harness adds its own two classes to the
// registry it is given.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "framework/model/registry.hpp"
#include "framework/model/topology_builder.hpp"
#include "framework/runtime/run_stats.hpp"

namespace xf {

using frame_bytes_t = std::vector<std::byte>;

/// What one run of the harness gave.
struct harness_result {
  /// Per output topic, in order: every frame the topic carried, by offset (a void offset is absent).
  std::vector<std::map<std::uint64_t, frame_bytes_t>> outputs;
  operator_counters counters;  ///< the operator's own end-of-run counters
  /// The run's failure (operator, topic, offset and what went wrong), or nothing when it completed.
  std::optional<std::string> error;
  run_stats stats;  ///< the whole run's stats (the harness's own source and sinks among them)

  /// Output `topic`'s frame at `offset` as elements of T; throws std::out_of_range when it has none.
  template <class T>
  std::vector<T> output_as(std::size_t topic, std::uint64_t offset) const {
    static_assert(std::is_trivially_copyable_v<T>);
    const frame_bytes_t& bytes = outputs.at(topic).at(offset);
    std::vector<T> values(bytes.size() / sizeof(T));
    std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
    return values;
  }
};

class operator_harness {
 public:
  /// `under_test` names the operator and its class, parameters and placement, as in a topology.
  operator_harness(operator_registry& registry, op under_test);

  operator_harness& frame_bytes(std::uint64_t bytes);  ///< every topic's frame size (default 4 KiB)
  operator_harness& capacity(std::uint32_t frames);    ///< every topic's capacity (default 8)
  operator_harness& element(element_type type);        ///< every topic's element type (default u8)
  operator_harness& outputs(std::uint32_t topics);     ///< output topics (default: 1, a sink's 0)

  /// The frames of its next input topic, offset by offset (each at most frame_bytes).
  operator_harness& input(std::vector<frame_bytes_t> frames);
  template <class T>
  operator_harness& input(const std::vector<std::vector<T>>& frames) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::vector<frame_bytes_t> bytes;
    for (const std::vector<T>& f : frames) {
      frame_bytes_t& b = bytes.emplace_back(f.size() * sizeof(T));
      std::memcpy(b.data(), f.data(), b.size());
    }
    return input(std::move(bytes));
  }

  /// Builds the topology around the operator, validates and plans it (throws config_error for what a
  /// topology would be refused for, positioned at the operator's fields), and runs it to the end of its
  /// inputs on the host executor.
  harness_result run() const;

 private:
  operator_registry* registry_;
  op under_test_;
  std::uint64_t frame_bytes_ = 4096;
  std::uint32_t capacity_ = 8;
  element_type element_ = element_type::u8;
  std::optional<std::uint32_t> outputs_;
  std::vector<std::vector<frame_bytes_t>> inputs_;
};

}  // namespace xf
