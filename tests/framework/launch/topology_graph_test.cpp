// The topology graph: the writer in process (every operator and topic with its attributes, fan-out,
// escaping, plan and run facts, ranks and bridges, shared objects, the facts' text between ranks), and
// xeflow-run's --graph and --graph-stats as a child process. Every graph is read back by a strict reader
// (tests/support/graph_text.hpp); DOT is also rendered by Graphviz where this machine has it.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "framework/launch/topology_graph.hpp"
#include "framework/model/topology_builder.hpp"
#include "tests/support/builtin_topology.hpp"
#include "tests/support/graph_text.hpp"
#include "tests/support/run_checks.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/subprocess.hpp"

namespace fs = std::filesystem;
using namespace xf;
using namespace xf::test;

namespace {

// C-G-C with a topic read by two groups (verify and a sink named after a Mermaid keyword) and names
// that DOT and Mermaid read as keywords or syntax: `node`, `end`, `graph-sink`.
const char* const small_yaml = R"(
name: 'small "graph" <test> #1 & end'
topics:
  c2g: {frame_size: 64KiB, capacity: 16, element: u32, transfer: dma}
  node: {frame_size: 64KiB, capacity: 8, element: u32}
operators:
  source: {class: sequence_source, threads: 2, outputs: [c2g], params: {total_bytes: 4MiB, seed: 1}}
  scale: {class: scale, on: gpu, inputs: [c2g], outputs: [node], params: {factor: 2}}
  verify: {class: verify_sink, inputs: [node]}
  end: {class: null_sink, inputs: [node]}
  graph-sink: {class: null_sink, inputs: [c2g]}
)";

topology_spec load(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return load_topology_text(yaml, "test.yaml", builtin_registry(), overrides);
}

topology_spec load_file(const std::string& name) {
  return load_topology_file((source_root() / "topologies" / name).string(), builtin_registry());
}

std::string drawn(graph_format format, const topology_spec& spec, const graph_facts& facts = {}) {
  std::ostringstream out;
  write_graph(out, format, spec, builtin_registry(), facts);
  return out.str();
}

drawn_graph read(graph_format format, const std::string& text) {
  INFO(text);
  return format == graph_format::dot ? parse_dot(text) : parse_mermaid(text);
}

/// The label's lines after the first (the name).
bool has_line(const drawn_node& node, const std::string& line) {
  std::istringstream in(node.label);
  for (std::string l; std::getline(in, l);)
    if (l == line) return true;
  return false;
}

/// Renders `dot_text` with Graphviz's dot, where this machine has it; says so visibly where not.
void check_dot_renders(const std::string& dot_text) {
  const std::string dot = find_dot();
  if (dot.empty()) {
    MESSAGE("skipped: no Graphviz dot on this machine (apt-get install graphviz) to render the graph");
    return;
  }
  const scratch_dir dir;
  const std::string file = dir.file("graph.dot");
  std::ofstream(file) << dot_text;
  const process_result r =
      run_process({dot, "-Tsvg", "-o", dir.file("graph.svg"), file}, std::chrono::minutes(1));
  INFO(dot_text);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());  // Graphviz warns on stderr of what it could not read as meant (bad UTF-8, …)
  CHECK(fs::file_size(dir.file("graph.svg")) > 0);
}

const graph_format both_formats[] = {graph_format::dot, graph_format::mermaid};

/// The side an operator node shows: DOT's colours and shapes, Mermaid's shapes (a GPU operator is a
/// subroutine box).
std::string side_of(const drawn_node& node) {
  if (node.attributes == "[[]]" ||
      node.attributes.find("shape=box3d, style=filled, fillcolor=\"#d6f0d6\"") != std::string::npos)
    return "gpu";
  if (node.attributes == "[]" ||
      node.attributes.find("shape=box, style=\"rounded,filled\", fillcolor=\"#dbe7ff\"") != std::string::npos)
    return "cpu";
  return "";
}

/// The title's lines: DOT's are lines, Mermaid's one line.
std::string title(graph_format format, const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines)
    out += (out.empty() ? "" : format == graph_format::dot ? "\n" : "; ") + line;
  return out;
}
const std::string legend = "blue: CPU operators, green: GPU operators, amber: topics";

}  // namespace

TEST_CASE("topology_graph.every_operator_and_topic_with_its_attributes") {
  const topology_spec spec = load(small_yaml);
  for (const graph_format format : both_formats) {
    CAPTURE(name_of(format));
    const std::string text = drawn(format, spec);
    const drawn_graph g = read(format, text);
    CHECK(g.title == title(format, {"topology small \"graph\" <test> #1 & end", legend}));
    CHECK(g.nodes.size() == 7);
    const drawn_node& source = g.node("source");
    CHECK(source.label == "source\nsequence_source (cpu)\n2 threads");
    CHECK(side_of(source) == "cpu");
    const drawn_node& scale = g.node("scale");
    CHECK(scale.label == "scale\nscale (gpu)");
    CHECK(side_of(scale) == "gpu");
    for (const char* sink : {"verify", "end", "graph-sink"}) {
      CHECK(side_of(g.node(sink)) == "cpu");
      CHECK(has_line(g.node(sink), "1 thread"));
    }
    // Topics cross between the sides outside both; as configured (no plan).
    const drawn_node& c2g = g.node("c2g");
    CHECK(side_of(c2g).empty());
    for (const auto& [id, node] : g.nodes) CHECK(node.cluster.empty());  // one rank: no clusters
    CHECK(c2g.label ==
          "c2g\n64 KiB x 16 frames, u32\ntransfer dma (configured)\ncoherence: index placed, frames placed");
    const drawn_node& node = g.node("node");
    CHECK(node.label ==
          "node\n64 KiB x 8 frames, u32\ntransfer auto (configured)\ncoherence: index placed, frames placed");
    // Edges: each publisher to its topic, the topic to each subscriber group.
    CHECK(g.edges.size() == 6);
    CHECK(g.edges_to(g.id_of("c2g")).size() == 1);
    CHECK(g.edges_to(g.id_of("c2g"))[0].from == g.id_of("source"));
    CHECK(g.edges_from(g.id_of("c2g")).size() == 2);
    CHECK(g.edges_from(g.id_of("node")).size() == 2);
    for (const drawn_edge& e : g.edges) CHECK(e.label.empty());  // nothing measured
    if (format == graph_format::dot) {
      CHECK(c2g.attributes.find("shape=oval") != std::string::npos);
      check_dot_renders(text);
    } else {
      CHECK(c2g.attributes == "([])");
      CHECK(text.find("class OP0,OP2,OP3,OP4 cpu\n") != std::string::npos);
      CHECK(text.find("class OP1 gpu\n") != std::string::npos);
    }
  }
}

TEST_CASE("topology_graph.fan_out_is_one_topic_node_with_an_edge_to_each_group") {
  const topology_spec spec = load_file("fanout.yaml");
  for (const graph_format format : both_formats) {
    CAPTURE(name_of(format));
    const drawn_graph g = read(format, drawn(format, spec));
    const std::string raw = g.id_of("raw"), scaled = g.id_of("scaled");
    std::vector<std::string> readers;
    for (const drawn_edge& e : g.edges_from(raw)) readers.push_back(g.nodes.at(e.to).label.substr(0, 3));
    CHECK(readers == std::vector<std::string>{"sca", "fma"});
    std::vector<std::string> scaled_readers;
    for (const drawn_edge& e : g.edges_from(scaled))
      scaled_readers.push_back(g.nodes.at(e.to).label.substr(0, g.nodes.at(e.to).label.find('\n')));
    CHECK(scaled_readers == std::vector<std::string>{"verify_scaled", "count"});
    CHECK(g.edges_to(raw).size() == 1);
  }
}

TEST_CASE("topology_graph.names_with_any_character_are_escaped") {
  // Built in C++ and never validated: names no YAML topology may have, each a hazard for one format or
  // the other (quotes, backslashes and Graphviz's \N escapes, HTML, Mermaid's entity '#', edge-text '|',
  // Markdown '`', keywords, line breaks, non-ASCII, bytes that are not UTF-8).
  const std::vector<std::string> odd{"say \"hi\"", "back\\slash \\N \\l",
                                     "a<b>&c",     "#35; # |pipe| `tick`",
                                     "end",        "line\nbreak",
                                     "ünïcødé ↯",  std::string("bad \xff\xfe utf8"),
                                     "subgraph",   "[(x)]"};
  topology_spec spec;
  spec.name = "odd \"names\" \\ <all> end";
  for (std::size_t i = 0; i < odd.size(); ++i) {
    topic_spec topic;
    topic.name = "t " + odd[i];
    spec.topics.push_back(topic);
    operator_spec o;
    o.name = odd[i];
    o.class_name = "class " + odd[i];
    o.on = i % 2 ? placement::gpu : placement::cpu;
    o.outputs = {"t " + odd[i]};
    if (i > 0) o.inputs = {"t " + odd[i - 1]};
    spec.operators.push_back(o);
  }
  // What the reader decodes: line breaks in a name become spaces, bytes that are not UTF-8 '?'.
  auto shown = [](std::string name) {
    for (char& c : name)
      if (c == '\n') c = ' ';
    const std::size_t bad = name.find('\xff');
    if (bad != std::string::npos) name.replace(bad, 2, "??");
    return name;
  };
  for (const graph_format format : both_formats) {
    CAPTURE(name_of(format));
    const std::string text = drawn(format, spec);
    const drawn_graph g = read(format, text);
    CHECK(g.title == title(format, {"topology odd \"names\" \\ <all> end", legend}));
    for (std::size_t i = 0; i < odd.size(); ++i) {
      CAPTURE(odd[i]);
      const drawn_node& op = g.node(shown(odd[i]));
      CHECK(has_line(op, shown("class " + odd[i]) + (i % 2 ? " (gpu)" : " (cpu)")));
      const std::string topic = g.id_of(shown("t " + odd[i]));
      CHECK(g.edges_to(topic).size() == 1);
      CHECK(g.edges_to(topic)[0].from == g.id_of(shown(odd[i])));
      CHECK(g.edges_from(topic).size() == (i + 1 < odd.size() ? 1 : 0));
    }
    if (format == graph_format::dot) check_dot_renders(text);
  }
}

TEST_CASE("topology_graph.the_plan_s_facts") {
  const topology_spec spec = load(small_yaml);
  plan_options options;
  options.force_host = true;
  plan p = make_plan(spec, builtin_registry(), options);
  SUBCASE("host executor") {
    graph_facts facts;
    facts.add_plan(p);
    const drawn_graph g = read(graph_format::dot, drawn(graph_format::dot, spec, facts));
    CHECK(has_line(g.node("source"), "2 threads"));
    CHECK(has_line(g.node("scale"), std::to_string(p.blocks) + " blocks on the host executor"));
    // No PCIe to cross and no managed memory: the coherence policies say nothing here.
    CHECK(g.node("c2g").label == "c2g\n64 KiB x 16 frames, u32\ntransfer host executor (planned)");
    CHECK(g.node("node").label == "node\n64 KiB x 8 frames, u32\ntransfer host executor (planned)");
  }
  SUBCASE("device executor") {
    // The plan is data: as the device executor would have it on GPU 3, c2g copied by the copy engines.
    p.executor = resolved_executor::device;
    p.device = 3;
    for (planned_topic& t : p.topics)
      if (t.spec->name == "c2g") t.dma = t.dma_to_device = true;
    for (planned_operator& po : p.operators) {
      if (!po.in_kernel) continue;
      po.workers = 264;
      po.warps = 8;
    }
    graph_facts facts;
    facts.add_plan(p);
    for (const graph_format format : both_formats) {
      CAPTURE(name_of(format));
      const drawn_graph g = read(format, drawn(format, spec, facts));
      CHECK(g.node("scale").label == "scale\nscale (gpu)\nGPU 3\n8 warps x 264 blocks");
      CHECK(g.node("c2g").label ==
            "c2g\n64 KiB x 16 frames, u32\ntransfer dma to device (planned)\ncoherence: index placed, frames "
            "placed");
      CHECK(
          g.node("node").label ==
          "node\n64 KiB x 8 frames, u32\ntransfer mapped (planned)\ncoherence: index placed, frames placed");
    }
  }
}

TEST_CASE("topology_graph.a_run_s_rates_and_shares") {
  const topology_spec spec = load(small_yaml);
  run_stats stats;
  stats.wall_seconds = 2;
  stats.stream_seconds = 1.5;
  operator_stats source;
  source.name = "source";
  source.placement = "cpu";
  source.workers = 2;
  source.busy_ns = 2'000'000'000;      // 50% of 2 workers x 2 s
  source.input_wait_ns = 400'000'000;  // 10%
  source.blocked_ns = 1'000'000'000;   // 25%
  operator_stats scale;
  scale.name = "scale";
  scale.placement = "gpu";
  scale.workers = 4;
  stats.operators = {source, scale};
  topic_stats c2g;
  c2g.name = "c2g";
  c2g.bytes = 3'000'000'000;  // 1.5 GB/s over the wall time
  stats.topics = {c2g};
  partition_stats partition;
  partition.operators = {"scale"};
  partition.item_us = {3};
  partition.busy_round_us = 4;
  stats.partition = partition;
  graph_facts facts;
  facts.add_stats(stats);
  for (const graph_format format : both_formats) {
    CAPTURE(name_of(format));
    const drawn_graph g = read(format, drawn(format, spec, facts));
    CHECK(g.title == title(format, {"topology small \"graph\" <test> #1 & end",
                                    "completed in 2.000 s (stream 1.500 s)", legend}));
    CHECK(has_line(g.node("source"), "busy 50%, wait 10%, blocked 25% of the wall time"));
    // Kernel operators are not timed per worker: their share of the kernel's busy rounds instead.
    CHECK(has_line(g.node("scale"), "75% of a busy kernel round"));
    for (const drawn_edge& e : g.edges_to(g.id_of("c2g"))) CHECK(e.label == "1.500 GB/s");
    for (const drawn_edge& e : g.edges_from(g.id_of("c2g"))) CHECK(e.label == "1.500 GB/s");
    for (const drawn_edge& e : g.edges_from(g.id_of("node"))) CHECK(e.label.empty());
  }
}

TEST_CASE("topology_graph.ranks_and_their_bridges") {
  const topology_spec spec = load_file("two_ranks.yaml");
  graph_facts rank0, rank1;
  rank0.bridges[{"raw", 0, 1}] = 5.25;
  rank1.bridges[{"scaled", 1, 0}] = 4.5;
  graph_facts merged;
  merged.merge(graph_facts::parse(rank0.serialize()));
  merged.merge(graph_facts::parse(rank1.serialize()));
  for (const graph_format format : both_formats) {
    CAPTURE(name_of(format));
    const std::string text = drawn(format, spec, merged);
    const drawn_graph g = read(format, text);
    CHECK(has_line(g.node("source"), "rank 0 (ingest)"));
    CHECK(has_line(g.node("scale"), "rank 1 (compute)"));
    CHECK(g.node("scale").cluster == "rank 1 (compute)");
    CHECK(side_of(g.node("scale")) == "gpu");
    CHECK(g.node("verify_scaled").cluster == "rank 0 (ingest)");
    CHECK(g.node("raw").cluster.empty());
    CHECK(has_line(g.node("raw"), "bridged from rank 0 to 1"));
    CHECK(has_line(g.node("scaled"), "bridged from rank 1 to 0"));
    const std::vector<drawn_edge> raw = g.edges_from(g.id_of("raw"));
    REQUIRE(raw.size() == 2);
    for (const drawn_edge& e : raw) {
      CHECK(e.label == "bridge rank 0 -> 1\n5.250 GB/s");
      CHECK(e.style.find(format == graph_format::dot ? "style=dashed" : "-.->") != std::string::npos);
    }
    CHECK(g.edges_from(g.id_of("scaled"))[0].label == "bridge rank 1 -> 0\n4.500 GB/s");
    CHECK(g.edges_to(g.id_of("raw"))[0].label.empty());
    if (format == graph_format::dot) {
      CHECK(text.find("subgraph cluster_R0 {") != std::string::npos);
      check_dot_renders(text);
    } else {
      CHECK(text.find("subgraph R1 [\"rank 1 (compute)\"]") != std::string::npos);
    }
  }
}

TEST_CASE("topology_graph.shared_objects_with_their_writer_and_readers") {
  const topology_spec spec = load_file("table_versions.yaml");
  for (const graph_format format : both_formats) {
    CAPTURE(name_of(format));
    const std::string text = drawn(format, spec);
    const drawn_graph g = read(format, text);
    const std::string table = g.id_of("table");
    CHECK(g.nodes.at(table).label == "table\nshared u32, 1 KiB\n2 versions, rolling");
    CHECK(g.nodes.at(table).attributes.find(format == graph_format::dot ? "shape=cylinder" : "[()]") !=
          std::string::npos);
    REQUIRE(g.edges_to(table).size() == 1);
    CHECK(g.edges_to(table)[0].from == g.id_of("writer"));
    CHECK(g.edges_to(table)[0].label == "writes table");
    std::vector<std::string> readers;
    for (const drawn_edge& e : g.edges_from(table)) {
      readers.push_back(e.to);
      CHECK(e.label == "reads table");
    }
    CHECK(readers == std::vector<std::string>{g.id_of("lookup"), g.id_of("check")});
    if (format == graph_format::dot) check_dot_renders(text);
  }
}

TEST_CASE("topology_graph.facts_travel_between_ranks_as_text") {
  graph_facts a;
  a.operators["source"].plan = graph_facts::operator_plan{false, false, std::nullopt, 2, 0};
  a.operators["source"].times = graph_facts::operator_times{0.1, 1.0 / 3, 0};
  a.topics["raw"] = {planned_transfer::none, 5.0 / 7};
  a.bridges[{"raw", 0, 1}] = 2.5;
  a.outcome = "completed in 1.000 s";
  graph_facts b;
  b.operators["scale"].plan = graph_facts::operator_plan{true, true, 1, 132, 8};
  b.operators["scale"].round_share = 0.25;
  b.topics["raw"] = {planned_transfer::dma_to_device, 0.5};
  b.bridges[{"raw", 0, 1}] = 3.5;
  b.outcome = "failed in 1.000 s";

  const graph_facts back = graph_facts::parse(a.serialize());
  CHECK(back.serialize() == a.serialize());
  CHECK(back.operators.at("source").times->wait == 1.0 / 3);  // exact
  CHECK(back.topics.at("raw").gb_per_s == 5.0 / 7);

  graph_facts merged = graph_facts::parse(a.serialize());
  merged.merge(graph_facts::parse(b.serialize()));
  CHECK(merged.operators.at("source").plan->workers == 2);
  CHECK(merged.operators.at("scale").plan->gpu == 1u);
  CHECK(merged.operators.at("scale").plan->workers == 132);
  CHECK(merged.operators.at("scale").round_share == 0.25);
  CHECK_FALSE(merged.operators.at("scale").times);
  CHECK(merged.topics.at("raw").transfer == planned_transfer::dma_to_device);
  CHECK(merged.topics.at("raw").gb_per_s == 5.0 / 7);  // the larger
  CHECK(merged.bridges.at({"raw", 0, 1}) == 3.5);
  CHECK(merged.outcome == "completed in 1.000 s");  // rank 0's, merged first

  CHECK_THROWS_AS(graph_facts::parse("operator x plan 1 1"), std::invalid_argument);
  CHECK_THROWS_AS(graph_facts::parse("topic raw 9 -"), std::invalid_argument);
  CHECK_THROWS_AS(graph_facts::parse("edge a b"), std::invalid_argument);
}

// xeflow-run's options, as a user runs them.

namespace {

struct topology_file {
  scratch_dir dir;
  std::string path = dir.file("small.yaml");
  topology_file() { std::ofstream(path) << small_yaml; }
};

process_result run(const std::vector<std::string>& args) {
  std::vector<std::string> argv{xeflow_run()};
  argv.insert(argv.end(), args.begin(), args.end());
  process_result r = run_process(argv, std::chrono::minutes(2));
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  return r;
}

}  // namespace

TEST_CASE("topology_graph.xeflow_run_prints_the_graph_and_exits") {
  const topology_file topology;
  for (const std::string check_only : {"", "--validate"}) {
    CAPTURE(check_only);
    std::vector<std::string> args{topology.path, "--graph", "dot", "--set", "topics.node.capacity=4"};
    if (!check_only.empty()) args.push_back(check_only);
    const process_result dot = run(args);
    CHECK(dot.exit_code == 0);
    const drawn_graph g = read(graph_format::dot, dot.out);  // stdout is the graph alone
    CHECK(g.nodes.size() == 7);
    CHECK(has_line(g.node("node"), "64 KiB x 4 frames, u32"));  // the override
    CHECK(has_line(g.node("c2g"), "transfer dma (configured)"));
    check_dot_renders(dot.out);
  }
  const process_result mermaid = run({topology.path, "--graph", "mermaid"});
  CHECK(mermaid.exit_code == 0);
  const drawn_graph g = read(graph_format::mermaid, mermaid.out);
  CHECK(g.nodes.size() == 7);
  CHECK(side_of(g.node("end")) == "cpu");
}

TEST_CASE("topology_graph.xeflow_run_graph_with_plan_shows_the_planned_facts") {
  const topology_file topology;
  const process_result r = run({topology.path, "--plan", "--host", "--graph", "dot"});
  CHECK(r.exit_code == 0);
  const drawn_graph g = read(graph_format::dot, r.out);
  CHECK(has_line(g.node("c2g"), "transfer host executor (planned)"));
  CHECK(has_line(g.node("source"), "2 threads"));
  const std::string scale = g.node("scale").label;
  CHECK(scale.find(" blocks on the host executor") != std::string::npos);
}

TEST_CASE("topology_graph.xeflow_run_graph_stats_after_a_host_run") {
  const topology_file topology;
  for (const std::string format : {"", "dot", "mermaid"}) {
    CAPTURE(format);
    const std::string file = topology.dir.file("run-" + format + ".graph");
    std::vector<std::string> args{topology.path, "--host", "-q", "--stats", "json", "--graph-stats", file};
    if (!format.empty()) args.insert(args.end(), {"--graph", format});
    const process_result r = run(args);
    REQUIRE(r.exit_code == 0);
    const nlohmann::json stats = parse_json(r);  // stdout keeps the stats alone
    check_verified(stats);
    std::ifstream in(file);
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const drawn_graph g = read(format == "mermaid" ? graph_format::mermaid : graph_format::dot, text);
    CHECK(g.title.find(format == "mermaid" ? "; completed in " : "\ncompleted in ") != std::string::npos);
    // Every edge of a topic carries its rate over the wall time, as the stats give it.
    for (const char* topic : {"c2g", "node"}) {
      double bytes = 0;
      for (const auto& t : stats["topics"])
        if (t["name"] == topic) bytes = t["bytes"].get<double>();
      CHECK(bytes == 4.0 * 1024 * 1024);
      char expected[64];
      std::snprintf(expected, sizeof expected, "%.3f GB/s",
                    bytes / 1e9 / stats["wall_seconds"].get<double>());
      const std::string id = g.id_of(topic);
      CHECK(g.edges_to(id).size() == 1);
      for (const drawn_edge& e : g.edges) {
        if (e.from != id && e.to != id) continue;
        CHECK(e.label == expected);
      }
    }
    for (const char* op : {"source", "verify", "end", "graph-sink"}) {
      const std::string label = g.node(op).label;
      CHECK(label.find("busy ") != std::string::npos);
      CHECK(label.find("% of the wall time") != std::string::npos);
    }
    CHECK(has_line(g.node("c2g"), "transfer host executor (planned)"));
    if (format != "mermaid") check_dot_renders(text);
  }
}

TEST_CASE("topology_graph.xeflow_run_refuses_a_bad_graph_format") {
  const topology_file topology;
  const process_result r = run({topology.path, "--graph", "svg"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("--graph") != std::string::npos);
  CHECK(r.err.find("svg") != std::string::npos);
  CHECK(r.err.find("dot") != std::string::npos);
  CHECK(r.err.find("mermaid") != std::string::npos);
}

TEST_CASE("topology_graph.xeflow_run_refuses_an_unwritable_graph_stats_file_before_the_run") {
  const topology_file topology;
  const std::string file = topology.dir.file("no-such-dir/run.dot");
  const process_result r = run({topology.path, "--host", "--stats", "json", "--graph-stats", file});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cannot write the graph to " + file) != std::string::npos);
  CHECK(r.out.empty());  // no stats: nothing ran
  CHECK_FALSE(fs::exists(file));
  // A graph of a run is not drawn by the steps that stop before one.
  for (const char* step : {"--validate", "--plan"}) {
    const process_result refused = run({topology.path, step, "--graph-stats", topology.dir.file("x.dot")});
    CHECK(refused.exit_code == 2);
    CHECK(refused.err.find("--graph-stats") != std::string::npos);
  }
}
