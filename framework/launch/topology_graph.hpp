// A topology drawn as a graph, Graphviz DOT or a Mermaid flowchart: operators by side (and rank) with
// their class, topics as nodes between them (a topic read by several subscriber groups is one node with an
// edge to each), shared objects, bridges between ranks; what the plan decided and what a run measured
// when they are given (xeflow-run --graph, --graph-stats).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>

#include "framework/model/registry.hpp"
#include "framework/model/topology_spec.hpp"
#include "framework/plan/plan.hpp"
#include "framework/runtime/run_stats.hpp"

namespace xf {

enum class graph_format : std::uint8_t { dot, mermaid };
constexpr std::string_view name_of(graph_format f) {
  return f == graph_format::dot ? "dot" : "mermaid";
}
/// "dot" or "mermaid"; nullopt for anything else.
std::optional<graph_format> parse_graph_format(std::string_view name);

/// How a topic's frames cross between CPU and GPU operators as planned: none (it does not cross), by the
/// kernel's loads and stores (mapped), by the copy engines (dma), or not at all on the host executor.
enum class planned_transfer : std::uint8_t { none, mapped, dma_to_device, dma_to_host, host_executor };

/// What the plan made of an operator (graph_facts). Outside graph_facts: std::optional of a nested class
/// whose members have initializers is refused by clang while the enclosing class is incomplete.
struct graph_operator_plan {
  bool in_kernel = false;
  bool device = false;               ///< in_kernel: run by the device executor's kernel
  std::optional<std::uint32_t> gpu;  ///< device: the GPU its kernel runs on
  std::uint32_t workers = 0;         ///< threads, or kernel blocks
  std::uint32_t warps = 0;           ///< in_kernel: warps per block
};
/// Where a run's CPU workers spent the wall time, as shares of it summed over the workers (0–1).
struct graph_operator_times {
  double busy = 0, wait = 0, blocked = 0;
};

/// What plans and runs add to a spec's graph, by operator and topic name. A ranked run's ranks each plan
/// and run their part, so each fills its own (add_plan, add_stats) and rank 0 merges them all, received
/// as text (serialize, parse): names in a planned spec are validated (letters, digits, '_', '-'), so they
/// travel as words.
struct graph_facts {
  using operator_plan = graph_operator_plan;
  using operator_times = graph_operator_times;
  struct operator_facts {
    std::optional<operator_plan> plan;
    std::optional<operator_times> times;
    std::optional<double> round_share;  ///< device kernel operators: share of a busy round
  };
  struct topic_facts {
    /// How its frames cross between CPU and GPU operators as planned; none where no plan has it cross.
    planned_transfer transfer = planned_transfer::none;
    std::optional<double> gb_per_s;  ///< a run's bytes over its wall time
  };
  std::map<std::string, operator_facts> operators;
  std::map<std::string, topic_facts> topics;
  /// A run's bridges: (topic, from rank, to rank) → GB/s, as the sending end measured it.
  std::map<std::tuple<std::string, std::uint32_t, std::uint32_t>, double> bridges;
  std::optional<std::string> outcome;  ///< a run's status and times, for the graph's title

  void add_plan(const plan& p);
  void add_stats(const run_stats& stats);
  /// Adds another rank's facts: what it planned and measured, the larger rate where both measured one.
  void merge(const graph_facts& other);
  std::string serialize() const;
  /// The facts serialize() wrote; throws std::invalid_argument on anything else.
  static graph_facts parse(std::string_view text);
};

/// Writes `spec` (validated or not: any name is escaped) as a graph in `format`. `registry` tells which
/// of an operator's shared objects it writes; classes it lacks read theirs.
void write_graph(std::ostream& out, graph_format format, const topology_spec& spec,
                 const operator_registry& registry, const graph_facts& facts = {});

}  // namespace xf
