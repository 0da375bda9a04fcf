// Reading back the graphs xeflow-run draws (--graph, --graph-stats): a strict reader of the subset of DOT and
// of Mermaid's flowchart syntax the writer uses, one statement a line. It fails the test on anything it
// does not know (an unbalanced brace or subgraph, an unescaped quote, a node defined twice, an edge to an
// undefined node, a raw character that Mermaid would read as syntax) and gives the nodes and edges with
// their labels decoded, so tests compare names and attributes as written in the topology.
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace xf::test {

struct drawn_node {
  std::string label;       ///< decoded, lines joined by '\n'
  std::string attributes;  ///< DOT: the rest of the attribute list; Mermaid: the shape's brackets
  std::string cluster;     ///< the innermost subgraph's title, "" outside every subgraph
};
struct drawn_edge {
  std::string from, to;  ///< node ids
  std::string label;     ///< decoded
  std::string style;     ///< DOT: the rest of the attribute list; Mermaid: the arrow
};
struct drawn_graph {
  std::string title;
  std::map<std::string, drawn_node> nodes;
  std::vector<drawn_edge> edges;

  /// The id of the node whose label's first line is `name` (REQUIREs exactly one).
  std::string id_of(const std::string& name) const {
    std::string found;
    int count = 0;
    for (const auto& [id, node] : nodes)
      if (node.label.substr(0, node.label.find('\n')) == name) {
        found = id;
        ++count;
      }
    INFO("node named '" << name << "'");
    REQUIRE(count == 1);
    return found;
  }
  const drawn_node& node(const std::string& name) const { return nodes.at(id_of(name)); }
  std::vector<drawn_edge> edges_from(const std::string& id) const {
    std::vector<drawn_edge> out;
    for (const drawn_edge& e : edges)
      if (e.from == id) out.push_back(e);
    return out;
  }
  std::vector<drawn_edge> edges_to(const std::string& id) const {
    std::vector<drawn_edge> out;
    for (const drawn_edge& e : edges)
      if (e.to == id) out.push_back(e);
    return out;
  }
};

namespace detail {

/// The DOT quoted string starting at text[at] (a '"'), decoded (\" → ", \\ → \, \n → line break); `at`
/// ends past it.
inline std::string dot_string(const std::string& text, std::size_t& at) {
  REQUIRE(text[at] == '"');
  std::string out;
  for (++at; at < text.size(); ++at) {
    const char c = text[at];
    if (c == '"') {
      ++at;
      return out;
    }
    if (c == '\\') {
      REQUIRE(at + 1 < text.size());
      const char next = text[++at];
      INFO("escape \\" << next);
      REQUIRE((next == '"' || next == '\\' || next == 'n'));
      out += next == 'n' ? '\n' : next;
    } else {
      out += c;
    }
  }
  FAIL("unterminated DOT string");
  return out;
}

/// A Mermaid label between its quotes, decoded: entity codes (#quot;, #<decimal>;) and <br/> line breaks.
/// Fails on what Mermaid would read as syntax.
inline std::string mermaid_label(const std::string& raw) {
  std::string out;
  for (std::size_t i = 0; i < raw.size();) {
    INFO("label " << raw);
    if (raw.compare(i, 5, "<br/>") == 0) {
      out += '\n';
      i += 5;
    } else if (raw[i] == '#') {
      const std::size_t end = raw.find(';', i);
      REQUIRE(end != std::string::npos);
      const std::string code = raw.substr(i + 1, end - i - 1);
      if (code == "quot")
        out += '"';
      else {
        const bool decimal = !code.empty() && code.find_first_not_of("0123456789") == std::string::npos;
        REQUIRE_MESSAGE(decimal, "entity #" << code << ";");
        out += static_cast<char>(std::stoi(code));
      }
      i = end + 1;
    } else {
      const std::string forbidden = "\"<>&`|\n";
      REQUIRE_MESSAGE(forbidden.find(raw[i]) == std::string::npos, "raw '" << raw[i] << "'");
      out += raw[i++];
    }
  }
  return out;
}

}  // namespace detail

/// Reads a graph `xeflow-run --graph dot` wrote.
inline drawn_graph parse_dot(const std::string& text) {
  drawn_graph g;
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> clusters;
  int depth = 0;
  const std::regex id("^[A-Za-z_][A-Za-z0-9_]*$");
  bool opened = false;
  while (std::getline(in, line)) {
    INFO("line: " << line);
    const std::size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    std::string s = line.substr(first);
    if (!opened) {
      REQUIRE(s == "digraph xeflow {");
      opened = true;
      ++depth;
      continue;
    }
    REQUIRE(depth > 0);
    if (s == "}") {
      --depth;
      if (!clusters.empty()) clusters.pop_back();
      continue;
    }
    if (s.rfind("subgraph ", 0) == 0) {
      REQUIRE(s.back() == '{');
      REQUIRE(std::regex_match(s.substr(9, s.size() - 11), id));
      clusters.push_back("");
      ++depth;
      continue;
    }
    if (s.rfind("label=", 0) == 0) {  // a cluster's attributes
      REQUIRE(!clusters.empty());
      std::size_t at = 6;
      clusters.back() = detail::dot_string(s, at);
      continue;
    }
    if (s.rfind("graph [", 0) == 0) {
      const std::size_t at_label = s.find("label=\"");
      REQUIRE(at_label != std::string::npos);
      std::size_t at = at_label + 6;
      g.title = detail::dot_string(s, at);
      REQUIRE(s.substr(at) == "];");
      continue;
    }
    if (s.rfind("node [", 0) == 0 || s.rfind("edge [", 0) == 0) continue;
    REQUIRE(s.back() == ';');
    s.pop_back();
    // A node or an edge: its ids, then an optional attribute list with at most one label.
    const std::size_t bracket = s.find(" [");
    const std::string head = s.substr(0, bracket);
    std::string label, rest;
    if (bracket != std::string::npos) {
      REQUIRE(s.back() == ']');
      std::string attributes = s.substr(bracket + 2, s.size() - bracket - 3);
      const std::size_t at_label = attributes.find("label=\"");
      if (at_label != std::string::npos) {
        std::size_t at = at_label + 6;
        label = detail::dot_string(attributes, at);
        attributes.erase(at_label, at - at_label);
      }
      REQUIRE(attributes.find('{') == std::string::npos);
      rest = attributes;
    }
    const std::size_t arrow = head.find(" -> ");
    if (arrow == std::string::npos) {
      REQUIRE(std::regex_match(head, id));
      REQUIRE_MESSAGE(g.nodes.count(head) == 0, "node " << head << " defined twice");
      g.nodes[head] = {label, rest, clusters.empty() ? "" : clusters.back()};
    } else {
      g.edges.push_back({head.substr(0, arrow), head.substr(arrow + 4), label, rest});
    }
  }
  CHECK(opened);
  CHECK(depth == 0);
  for (const drawn_edge& e : g.edges) {
    INFO("edge " << e.from << " -> " << e.to);
    CHECK(g.nodes.count(e.from) == 1);
    CHECK(g.nodes.count(e.to) == 1);
  }
  return g;
}

/// Reads a graph `xeflow-run --graph mermaid` wrote.
inline drawn_graph parse_mermaid(const std::string& text) {
  drawn_graph g;
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> head(4);
  for (std::string& h : head) REQUIRE(std::getline(in, h));
  REQUIRE(head[0] == "---");
  REQUIRE(head[2] == "---");
  REQUIRE(head[3] == "flowchart LR");
  REQUIRE(head[1].rfind("title: \"", 0) == 0);
  {
    std::size_t at = 7;
    g.title = detail::dot_string(head[1], at);  // a YAML double-quoted scalar escapes as DOT does here
    REQUIRE(at == head[1].size());
  }
  const std::string label = R"re("([^"]*)")re";
  const std::string name = "([A-Za-z][A-Za-z0-9_]*)";
  const std::regex subgraph("^subgraph " + name + " \\[" + label + "\\]$");
  const std::regex node("^" + name + "(\\[\\[|\\[|\\(\\[|\\[\\()" + label + "(\\]\\]|\\]|\\]\\)|\\)\\])$");
  const std::regex edge("^" + name + " (-->|-\\.->)(?:\\|" + label + "\\|)? " + name + "$");
  const std::regex class_def("^classDef [a-z]+ [a-z:#0-9,-]+$");
  const std::regex class_use("^class ([A-Za-z0-9_,]+) [a-z]+$");
  const std::regex link_style("^linkStyle [0-9,]+ [a-z:#0-9,-]+$");
  std::vector<std::string> subgraphs;
  std::map<std::string, std::string> subgraph_titles;
  std::vector<std::string> classed;
  std::size_t links = 0;
  std::smatch m;
  while (std::getline(in, line)) {
    INFO("line: " << line);
    const std::size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    const std::string s = line.substr(first);
    if (s == "end") {
      REQUIRE(!subgraphs.empty());
      subgraphs.pop_back();
    } else if (std::regex_match(s, m, subgraph)) {
      REQUIRE(subgraph_titles.count(m[1]) == 0);
      subgraph_titles[m[1]] = detail::mermaid_label(m[2]);
      subgraphs.push_back(m[1]);
    } else if (std::regex_match(s, m, node)) {
      const std::string open = m[2], close = m[4];
      const bool matched = (open == "[" && close == "]") || (open == "[[" && close == "]]") ||
                           (open == "([" && close == "])") || (open == "[(" && close == ")]");
      REQUIRE(matched);
      REQUIRE_MESSAGE(g.nodes.count(m[1]) == 0, "node " << m[1] << " defined twice");
      g.nodes[m[1]] = {detail::mermaid_label(m[3]), open + close,
                       subgraphs.empty() ? "" : subgraph_titles[subgraphs.back()]};
    } else if (std::regex_match(s, m, edge)) {
      g.edges.push_back({m[1], m[4], m[3].matched ? detail::mermaid_label(m[3]) : "", m[2]});
      ++links;
    } else if (std::regex_match(s, m, class_use)) {
      std::stringstream ids(m[1]);
      for (std::string id; std::getline(ids, id, ',');) classed.push_back(id);
    } else if (std::regex_match(s, class_def) || std::regex_match(s, link_style)) {
    } else {
      FAIL("not a statement of the writer's Mermaid: " << s);
    }
  }
  CHECK(subgraphs.empty());
  for (const auto& [id, title] : subgraph_titles) CHECK(g.nodes.count(id) == 0);
  for (const drawn_edge& e : g.edges) {
    INFO("edge " << e.from << " -> " << e.to);
    CHECK(g.nodes.count(e.from) == 1);
    CHECK(g.nodes.count(e.to) == 1);
  }
  for (const std::string& id : classed) CHECK(g.nodes.count(id) == 1);
  CHECK(links == g.edges.size());
  return g;
}

/// Graphviz's dot on this machine, "" when it has none.
inline std::string find_dot() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && ::access((std::filesystem::path(dir) / "dot").c_str(), X_OK) == 0)
      return (std::filesystem::path(dir) / "dot").string();
  return "";
}

}  // namespace xf::test
