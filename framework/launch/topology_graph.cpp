// The topology as Graphviz DOT or a Mermaid flowchart. One format-neutral model (nodes with label lines,
// clustered by rank, edges with labels and a style) and two writers that escape every piece of text for
// their syntax: node ids are generated (OP0, TP0, SO0), so no name is ever part of the syntax, only of
// labels. The side an operator runs on is its colour and shape, not a cluster: a CPU source and a CPU sink
// in one box would make C-G-C flow back on itself, while by colour the graph reads left to right.
#include "framework/launch/topology_graph.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "framework/core/units.hpp"

namespace xf {
namespace {

std::string percent(double share) {
  return format_fixed(100.0 * share, 0) + "%";
}

/// The bytes of a UTF-8 sequence starting with `lead`, 0 when it starts none.
std::size_t utf8_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return lead >= 0xC2 ? 2 : 0;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return lead <= 0xF4 ? 4 : 0;
  return 0;
}

/// `text` with what no label can hold replaced: control characters (line breaks included: labels are
/// given as lines) by spaces, bytes that are not UTF-8 by '?'. Graphviz refuses bad UTF-8 in its input,
/// and a raw line break would end a Mermaid statement.
std::string printable(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t n = utf8_length(c);
    bool valid = n > 0 && i + n <= text.size();
    for (std::size_t k = 1; valid && k < n; ++k)
      valid = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    if (!valid) {
      out += '?';
      ++i;
    } else if (n == 1) {
      out += c < 0x20 || c == 0x7F ? ' ' : static_cast<char>(c);
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

/// A piece of a DOT double-quoted string: only '"' and '\' need escaping there, '\' because Graphviz
/// reads \n, \l, \N … in labels as its own escapes.
std::string dot_escaped(std::string_view text) {
  std::string out;
  for (char c : printable(text)) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

/// A piece of a Mermaid quoted label: '"' would end the string, '#' starts Mermaid's entity codes, '<' '>'
/// '&' would be read as HTML, '`' starts a Markdown string and '|' ends an edge's text; each becomes an
/// entity code (#quot; or #<decimal>;), which Mermaid shows as the character.
std::string mermaid_escaped(std::string_view text) {
  std::string out;
  for (char c : printable(text)) {
    switch (c) {
      case '"':
        out += "#quot;";
        break;
      case '#':
      case '<':
      case '>':
      case '&':
      case '`':
      case '|':
        out += "#" + std::to_string(static_cast<int>(c)) + ";";
        break;
      default:
        out += c;
    }
  }
  return out;
}

/// A YAML double-quoted scalar (Mermaid's front matter title).
std::string yaml_quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : printable(text)) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

enum class node_kind : std::uint8_t { cpu_operator, gpu_operator, topic, object };
enum class edge_style : std::uint8_t { plain, bridge, reads };

struct graph_node {
  std::string id;
  node_kind kind = node_kind::topic;
  std::vector<std::string> label;  ///< lines, unescaped
  /// The rank whose cluster holds it: operators, when the topology places them on several ranks. Topics
  /// and objects are drawn outside every cluster, between the operators they join.
  std::optional<std::uint32_t> rank;
};

struct graph_edge {
  std::string from, to;
  std::vector<std::string> label;
  edge_style style = edge_style::plain;
};

struct graph_model {
  std::vector<std::string> title;  ///< lines: the topology, a run's outcome, the colours' legend
  std::vector<graph_node> nodes;
  std::vector<graph_edge> edges;
  std::map<std::uint32_t, std::string> rank_names;  ///< runtime.ranks, by number
};

std::string_view name_of(planned_transfer t) {
  switch (t) {
    case planned_transfer::mapped:
      return "mapped";
    case planned_transfer::dma_to_device:
      return "dma to device";
    case planned_transfer::dma_to_host:
      return "dma to host";
    case planned_transfer::host_executor:
      return "host executor";
    case planned_transfer::none:
      break;
  }
  return "";
}

bool lists(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string rank_text(std::uint32_t rank, const std::map<std::uint32_t, std::string>& names) {
  std::string text = "rank " + std::to_string(rank);
  if (const auto it = names.find(rank); it != names.end()) text += " (" + it->second + ")";
  return text;
}

std::string operator_id(std::size_t i) {
  return "OP" + std::to_string(i);
}
std::string topic_id(std::size_t i) {
  return "TP" + std::to_string(i);
}
std::string object_id(std::size_t i) {
  return "SO" + std::to_string(i);
}

std::vector<std::string> operator_label(const operator_spec& o, bool ranked, const graph_model& model,
                                        const graph_facts& facts) {
  std::vector<std::string> lines{o.name, o.class_name + " (" + std::string(name_of(o.on)) + ")"};
  const auto found = facts.operators.find(o.name);
  const graph_facts::operator_facts* f = found == facts.operators.end() ? nullptr : &found->second;
  std::string where = ranked ? rank_text(o.rank, model.rank_names) : "";
  const graph_facts::operator_plan* planned = f && f->plan ? &*f->plan : nullptr;
  const std::optional<std::uint32_t> gpu = planned && planned->gpu ? planned->gpu : o.device;
  if (gpu) where += (where.empty() ? "" : ", ") + std::string("GPU ") + std::to_string(*gpu);
  if (!where.empty()) lines.push_back(where);
  if (planned) {
    if (!planned->in_kernel)
      lines.push_back(std::to_string(planned->workers) + (planned->workers == 1 ? " thread" : " threads"));
    else if (planned->device)
      lines.push_back(std::to_string(planned->warps) + " warps x " + std::to_string(planned->workers) +
                      " blocks");
    else
      lines.push_back(std::to_string(planned->workers) + " blocks on the host executor");
  } else if (o.on == placement::cpu) {
    lines.push_back(std::to_string(o.threads) + (o.threads == 1 ? " thread" : " threads"));
  } else if (o.warps > 0) {
    lines.push_back(std::to_string(o.warps) + " warps");
  }
  if (f && f->times)
    lines.push_back("busy " + percent(f->times->busy) + ", wait " + percent(f->times->wait) + ", blocked " +
                    percent(f->times->blocked) + " of the wall time");
  else if (f && f->round_share)
    lines.push_back(percent(*f->round_share) + " of a busy kernel round");
  return lines;
}

std::string rate(double gb_per_s) {
  return format_fixed(gb_per_s, 3) + " GB/s";
}

graph_model build_model(const topology_spec& spec, const operator_registry& registry,
                        const graph_facts& facts) {
  graph_model model;
  for (const auto& [name, number] : spec.runtime.ranks) model.rank_names.emplace(number, name);
  const bool ranked =
      !spec.runtime.ranks.empty() || std::any_of(spec.operators.begin(), spec.operators.end(),
                                                 [](const operator_spec& o) { return o.rank != 0; });
  model.title.push_back("topology " + (spec.name.empty() ? std::string("(unnamed)") : spec.name));
  if (facts.outcome) model.title.push_back(*facts.outcome);

  for (std::size_t i = 0; i < spec.operators.size(); ++i) {
    const operator_spec& o = spec.operators[i];
    graph_node node;
    node.id = operator_id(i);
    node.kind = o.on == placement::cpu ? node_kind::cpu_operator : node_kind::gpu_operator;
    node.label = operator_label(o, ranked, model, facts);
    if (ranked) node.rank = o.rank;
    model.nodes.push_back(std::move(node));
  }

  const std::vector<bridge_route> routes = ranked ? bridge_routes(spec) : std::vector<bridge_route>{};
  for (std::size_t t = 0; t < spec.topics.size(); ++t) {
    const topic_spec& topic = spec.topics[t];
    bool cpu_writes = false, gpu_writes = false, cpu_reads = false, gpu_reads = false;
    std::optional<std::uint32_t> writer_rank;
    for (const operator_spec& o : spec.operators) {
      if (lists(o.outputs, topic.name)) {
        (o.on == placement::cpu ? cpu_writes : gpu_writes) = true;
        if (!writer_rank) writer_rank = o.rank;
      }
      if (lists(o.inputs, topic.name)) (o.on == placement::cpu ? cpu_reads : gpu_reads) = true;
    }
    const bool crosses = (cpu_writes && gpu_reads) || (gpu_writes && cpu_reads);
    const auto found = facts.topics.find(topic.name);
    const graph_facts::topic_facts* f = found == facts.topics.end() ? nullptr : &found->second;

    graph_node node;
    node.id = topic_id(t);
    node.kind = node_kind::topic;
    node.label.push_back(topic.name);
    std::string shape = format_bytes(topic.frame_bytes) + " x " + std::to_string(topic.capacity) +
                        " frames, " + std::string(name_of(topic.element));
    if (topic.layout == frame_layout::columnar) shape += ", columnar";
    node.label.push_back(shape);
    const planned_transfer planned = f ? f->transfer : planned_transfer::none;
    if (planned != planned_transfer::none)
      node.label.push_back("transfer " + std::string(name_of(planned)) + " (planned)");
    else if (crosses)
      node.label.push_back("transfer " + std::string(name_of(topic.transfer)) + " (configured)");
    // The coherence policies shape the device executor's managed memory: nothing to say where the plan
    // put the GPU operators on the host.
    if (crosses && planned != planned_transfer::host_executor)
      node.label.push_back("coherence: index " + std::string(name_of(spec.runtime.coherence.index)) +
                           ", frames " + std::string(name_of(spec.runtime.coherence.frames)));
    std::string bridged;
    for (const bridge_route& r : routes)
      if (r.topic == t) bridged += (bridged.empty() ? "" : ", ") + std::to_string(r.to);
    if (!bridged.empty() && writer_rank)
      node.label.push_back("bridged from rank " + std::to_string(*writer_rank) + " to " + bridged);
    model.nodes.push_back(std::move(node));

    std::vector<std::string> measured;
    if (f && f->gb_per_s) measured.push_back(rate(*f->gb_per_s));
    for (std::size_t i = 0; i < spec.operators.size(); ++i) {
      const operator_spec& o = spec.operators[i];
      for (const std::string& name : o.outputs)
        if (name == topic.name) model.edges.push_back({operator_id(i), topic_id(t), measured});
      for (const std::string& name : o.inputs) {
        if (name != topic.name) continue;
        if (!ranked || !writer_rank || o.rank == *writer_rank) {
          model.edges.push_back({topic_id(t), operator_id(i), measured});
          continue;
        }
        std::vector<std::string> label{"bridge rank " + std::to_string(*writer_rank) + " -> " +
                                       std::to_string(o.rank)};
        if (const auto b = facts.bridges.find({topic.name, *writer_rank, o.rank}); b != facts.bridges.end())
          label.push_back(rate(b->second));
        model.edges.push_back({topic_id(t), operator_id(i), label, edge_style::bridge});
      }
    }
  }

  for (std::size_t s = 0; s < spec.objects.size(); ++s) {
    const shared_object_spec& object = spec.objects[s];
    graph_node node;
    node.id = object_id(s);
    node.kind = node_kind::object;
    node.label = {
        object.name, "shared " + std::string(name_of(object.element)) + ", " + format_bytes(object.bytes),
        std::to_string(object.versions) + " versions, " + std::string(shared::name_of(object.protocol))};
    model.nodes.push_back(std::move(node));
    for (std::size_t i = 0; i < spec.operators.size(); ++i) {
      const operator_spec& o = spec.operators[i];
      for (const auto& [slot, bound] : o.shared) {
        if (bound != object.name) continue;
        const operator_entry* entry = registry.find(o.class_name);
        const object_slot_decl* decl = entry ? entry->info.find_object(slot) : nullptr;
        if (decl && decl->access == object_access::write)
          model.edges.push_back({operator_id(i), object_id(s), {"writes " + slot}});
        else
          model.edges.push_back({object_id(s), operator_id(i), {"reads " + slot}, edge_style::reads});
      }
    }
  }
  model.title.push_back(std::string("blue: CPU operators, green: GPU operators, amber: topics") +
                        (spec.objects.empty() ? "" : ", purple: shared objects"));
  return model;
}

/// The operators of each rank, in rank order.
std::map<std::uint32_t, std::vector<const graph_node*>> ranks_of(const graph_model& model) {
  std::map<std::uint32_t, std::vector<const graph_node*>> ranks;
  for (const graph_node& n : model.nodes)
    if (n.rank) ranks[*n.rank].push_back(&n);
  return ranks;
}

std::string joined(const std::vector<std::string>& lines, std::string (*escape)(std::string_view),
                   std::string_view line_break) {
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) out += (i ? std::string(line_break) : "") + escape(lines[i]);
  return out;
}

// Colours: CPU blue, GPU green, topics amber, shared objects purple.
void write_dot(std::ostream& out, const graph_model& model) {
  auto label = [](const std::vector<std::string>& lines) {
    return "\"" + joined(lines, dot_escaped, "\\n") + "\"";
  };
  out << "digraph xeflow {\n"
      << "  graph [rankdir=LR, fontname=\"Helvetica\", labelloc=t, label=" << label(model.title) << "];\n"
      << "  node [fontname=\"Helvetica\", fontsize=10];\n"
      << "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  auto write_node = [&](const graph_node& n, const std::string& indent) {
    out << indent << n.id << " [label=" << label(n.label);
    switch (n.kind) {
      case node_kind::cpu_operator:
        out << ", shape=box, style=\"rounded,filled\", fillcolor=\"#dbe7ff\", color=\"#3b6cc4\"";
        break;
      case node_kind::gpu_operator:
        out << ", shape=box3d, style=filled, fillcolor=\"#d6f0d6\", color=\"#3f8f3f\"";
        break;
      case node_kind::topic:
        out << ", shape=oval, style=filled, fillcolor=\"#fff1cc\", color=\"#b8860b\"";
        break;
      case node_kind::object:
        out << ", shape=cylinder, style=filled, fillcolor=\"#eedcf5\", color=\"#7b3f99\"";
        break;
    }
    out << "];\n";
  };
  for (const auto& [rank, nodes] : ranks_of(model)) {
    out << "  subgraph cluster_R" << rank << " {\n    label=" << label({rank_text(rank, model.rank_names)})
        << "; style=dashed; color=\"#888888\";\n";
    for (const graph_node* n : nodes) write_node(*n, "    ");
    out << "  }\n";
  }
  for (const graph_node& n : model.nodes)
    if (!n.rank) write_node(n, "  ");
  for (const graph_edge& e : model.edges) {
    out << "  " << e.from << " -> " << e.to;
    std::vector<std::string> attributes;
    if (!e.label.empty()) attributes.push_back("label=" + label(e.label));
    if (e.style == edge_style::bridge) attributes.push_back("style=dashed, color=\"#c0392b\", penwidth=1.5");
    if (e.style == edge_style::reads) attributes.push_back("style=dotted, color=\"#7b3f99\"");
    for (std::size_t i = 0; i < attributes.size(); ++i) out << (i ? ", " : " [") << attributes[i];
    out << (attributes.empty() ? ";\n" : "];\n");
  }
  out << "}\n";
}

void write_mermaid(std::ostream& out, const graph_model& model) {
  auto label = [](const std::vector<std::string>& lines) {
    return "\"" + joined(lines, mermaid_escaped, "<br/>") + "\"";
  };
  std::string title;
  for (const std::string& line : model.title) title += (title.empty() ? "" : "; ") + line;
  out << "---\ntitle: " << yaml_quoted(title) << "\n---\nflowchart LR\n";
  auto write_node = [&](const graph_node& n, const std::string& indent) {
    out << indent << n.id;
    switch (n.kind) {
      case node_kind::cpu_operator:
        out << '[' << label(n.label) << ']';
        break;
      case node_kind::gpu_operator:  // a subroutine box: the GPU's kernel runs it
        out << "[[" << label(n.label) << "]]";
        break;
      case node_kind::topic:
        out << "([" << label(n.label) << "])";
        break;
      case node_kind::object:
        out << "[(" << label(n.label) << ")]";
        break;
    }
    out << '\n';
  };
  for (const auto& [rank, nodes] : ranks_of(model)) {
    out << "  subgraph R" << rank << " [" << label({rank_text(rank, model.rank_names)}) << "]\n";
    for (const graph_node* n : nodes) write_node(*n, "    ");
    out << "  end\n";
  }
  for (const graph_node& n : model.nodes)
    if (!n.rank) write_node(n, "  ");
  std::vector<std::size_t> bridges;
  for (const graph_edge& e : model.edges) {
    const char* arrow = e.style == edge_style::plain ? "-->" : "-.->";
    out << "  " << e.from << ' ' << arrow;
    if (!e.label.empty()) out << '|' << label(e.label) << '|';
    out << ' ' << e.to << '\n';
  }
  for (std::size_t i = 0; i < model.edges.size(); ++i)
    if (model.edges[i].style == edge_style::bridge) bridges.push_back(i);
  out << "  classDef cpu fill:#dbe7ff,stroke:#3b6cc4,color:#000\n"
      << "  classDef gpu fill:#d6f0d6,stroke:#3f8f3f,color:#000\n"
      << "  classDef topic fill:#fff1cc,stroke:#b8860b,color:#000\n"
      << "  classDef object fill:#eedcf5,stroke:#7b3f99,color:#000\n";
  const std::pair<node_kind, const char*> classes[] = {{node_kind::cpu_operator, "cpu"},
                                                       {node_kind::gpu_operator, "gpu"},
                                                       {node_kind::topic, "topic"},
                                                       {node_kind::object, "object"}};
  for (const auto& [kind, name] : classes) {
    std::string ids;
    for (const graph_node& n : model.nodes)
      if (n.kind == kind) ids += (ids.empty() ? "" : ",") + n.id;
    if (!ids.empty()) out << "  class " << ids << ' ' << name << '\n';
  }
  if (!bridges.empty()) {
    out << "  linkStyle ";
    for (std::size_t i = 0; i < bridges.size(); ++i) out << (i ? "," : "") << bridges[i];
    out << " stroke:#c0392b,stroke-width:2px\n";
  }
}

}  // namespace

std::optional<graph_format> parse_graph_format(std::string_view name) {
  if (name == "dot") return graph_format::dot;
  if (name == "mermaid") return graph_format::mermaid;
  return std::nullopt;
}

void graph_facts::add_plan(const plan& p) {
  const bool device = p.executor == resolved_executor::device;
  for (const planned_operator& po : p.operators) {
    operator_plan& f = operators[po.spec->name].plan.emplace();
    f.in_kernel = po.in_kernel;
    f.device = po.in_kernel && device;
    if (f.device) f.gpu = p.device;
    f.workers = po.workers;
    f.warps = po.warps;
  }
  for (const planned_topic& t : p.topics) {
    // A bridge's end stands for the other rank's side: it moves host-side frames.
    bool cpu_writes = t.bridge_from.has_value(), gpu_writes = false;
    bool cpu_reads = !t.bridge_to.empty(), gpu_reads = false;
    for (std::size_t i : t.publishers)
      (p.operators[i].spec->on == placement::cpu ? cpu_writes : gpu_writes) = true;
    for (std::size_t i : t.subscribers)
      (p.operators[i].spec->on == placement::cpu ? cpu_reads : gpu_reads) = true;
    if (!((cpu_writes && gpu_reads) || (gpu_writes && cpu_reads))) continue;
    topics[t.spec->name].transfer = !device           ? planned_transfer::host_executor
                                    : !t.dma          ? planned_transfer::mapped
                                    : t.dma_to_device ? planned_transfer::dma_to_device
                                                      : planned_transfer::dma_to_host;
  }
}

void graph_facts::add_stats(const run_stats& stats) {
  const double wall = stats.wall_seconds;
  for (const operator_stats& o : stats.operators) {
    // Kernel operators' workers are blocks that the round times as a whole (the partition's shares), not
    // per operator: only CPU workers measure their busy, waiting and blocked time.
    const double worker_ns = static_cast<double>(o.workers) * wall * 1e9;
    if (o.placement == "cpu" && worker_ns > 0)
      operators[o.name].times = operator_times{static_cast<double>(o.busy_ns) / worker_ns,
                                               static_cast<double>(o.input_wait_ns) / worker_ns,
                                               static_cast<double>(o.blocked_ns) / worker_ns};
  }
  if (stats.partition && stats.partition->busy_round_us > 0)
    for (std::size_t k = 0; k < stats.partition->operators.size() && k < stats.partition->item_us.size(); ++k)
      operators[stats.partition->operators[k]].round_share =
          stats.partition->item_us[k] / stats.partition->busy_round_us;
  for (const topic_stats& t : stats.topics)
    if (wall > 0) topics[t.name].gb_per_s = static_cast<double>(t.bytes) / 1e9 / wall;
  // A bridge's rate as its sending end measured it: the receiving end times from its first frame, which may
  // find the rest already arrived (a ranked run's receiving end measured thousands of GB/s).
  for (const bridge_stats& b : stats.bridges)
    if (b.sends && b.seconds > 0)
      bridges[{b.topic, stats.rank, b.peer}] = static_cast<double>(b.bytes) / 1e9 / b.seconds;
  if (!outcome) {
    outcome = std::string(name_of(stats.status)) + " in " + format_fixed(wall, 3) + " s";
    if (stats.stream_seconds > 0) *outcome += " (stream " + format_fixed(stats.stream_seconds, 3) + " s)";
  }
}

void graph_facts::merge(const graph_facts& other) {
  // An operator is planned and run on one rank only.
  for (const auto& [name, theirs] : other.operators) {
    operator_facts& mine = operators[name];
    if (theirs.plan) mine.plan = theirs.plan;
    if (theirs.times) mine.times = theirs.times;
    if (theirs.round_share) mine.round_share = theirs.round_share;
  }
  for (const auto& [name, theirs] : other.topics) {
    topic_facts& mine = topics[name];
    if (mine.transfer == planned_transfer::none) mine.transfer = theirs.transfer;
    if (theirs.gb_per_s) mine.gb_per_s = std::max(mine.gb_per_s.value_or(0), *theirs.gb_per_s);
  }
  for (const auto& [key, gb_per_s] : other.bridges) {
    double& known = bridges[key];
    known = std::max(known, gb_per_s);
  }
  if (!outcome) outcome = other.outcome;
}

// One line a fact: `operator NAME [plan …] [times …] [round …]`, `topic NAME …`, `bridge TOPIC FROM TO GBPS`,
// `outcome TEXT`; "-" for a value that is absent; reals in hexadecimal, exact.
std::string graph_facts::serialize() const {
  std::ostringstream out;
  auto real = [](std::optional<double> v) {
    if (!v) return std::string("-");
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%a", *v);
    return std::string(buffer);
  };
  for (const auto& [name, f] : operators) {
    out << "operator " << name;
    if (f.plan)
      out << " plan " << f.plan->in_kernel << ' ' << f.plan->device << ' '
          << (f.plan->gpu ? std::to_string(*f.plan->gpu) : "-") << ' ' << f.plan->workers << ' '
          << f.plan->warps;
    if (f.times)
      out << " times " << real(f.times->busy) << ' ' << real(f.times->wait) << ' ' << real(f.times->blocked);
    if (f.round_share) out << " round " << real(f.round_share);
    out << '\n';
  }
  for (const auto& [name, f] : topics)
    out << "topic " << name << ' ' << static_cast<int>(f.transfer) << ' ' << real(f.gb_per_s) << '\n';
  for (const auto& [key, gb_per_s] : bridges)
    out << "bridge " << std::get<0>(key) << ' ' << std::get<1>(key) << ' ' << std::get<2>(key) << ' '
        << real(gb_per_s) << '\n';
  if (outcome) out << "outcome " << *outcome << '\n';
  return out.str();
}

graph_facts graph_facts::parse(std::string_view text) {
  graph_facts facts;
  std::istringstream in{std::string(text)};
  std::string line;
  auto fail = [&] { throw std::invalid_argument("not a graph fact: '" + line + "'"); };
  auto real = [&](const std::string& word) -> std::optional<double> {
    if (word == "-") return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(word.c_str(), &end);
    if (end != word.c_str() + word.size()) fail();
    return v;
  };
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string kind, name;
    words >> kind >> name;
    if (kind == "outcome") {
      facts.outcome = line.substr(std::string_view("outcome ").size());
    } else if (kind == "operator") {
      operator_facts& f = facts.operators[name];
      for (std::string part; words >> part;) {
        if (part == "plan") {
          operator_plan& planned = f.plan.emplace();
          std::string gpu;
          words >> planned.in_kernel >> planned.device >> gpu >> planned.workers >> planned.warps;
          if (!words) fail();
          if (gpu != "-") planned.gpu = static_cast<std::uint32_t>(std::stoul(gpu));
        } else if (part == "times") {
          std::string busy, wait, blocked;
          words >> busy >> wait >> blocked;
          if (!words) fail();
          f.times = operator_times{real(busy).value_or(0), real(wait).value_or(0), real(blocked).value_or(0)};
        } else if (part == "round") {
          std::string share;
          words >> share;
          if (!words) fail();
          f.round_share = real(share);
        } else {
          fail();
        }
      }
    } else if (kind == "topic") {
      int transfer = 0;
      std::string gb_per_s;
      words >> transfer >> gb_per_s;
      if (!words || transfer < 0 || transfer > static_cast<int>(planned_transfer::host_executor)) fail();
      facts.topics[name] = {static_cast<planned_transfer>(transfer), real(gb_per_s)};
    } else if (kind == "bridge") {
      std::uint32_t from = 0, to = 0;
      std::string gb_per_s;
      words >> from >> to >> gb_per_s;
      if (!words) fail();
      facts.bridges[{name, from, to}] = real(gb_per_s).value_or(0);
    } else if (!line.empty()) {
      fail();
    }
  }
  return facts;
}

void write_graph(std::ostream& out, graph_format format, const topology_spec& spec,
                 const operator_registry& registry, const graph_facts& facts) {
  const graph_model model = build_model(spec, registry, facts);
  if (format == graph_format::dot)
    write_dot(out, model);
  else
    write_mermaid(out, model);
}

}  // namespace xf
