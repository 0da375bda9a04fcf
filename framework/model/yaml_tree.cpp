// The YAML front end's first half: yaml-cpp's tree → yaml_node, every node with its position in its
// source (file:line:column), so that every later problem can say where it is.
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <map>
#include <sstream>

#include "framework/model/yaml_loader.hpp"

namespace xf {

yaml_entry* yaml_node::find(std::string_view key) {
  for (auto& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

const yaml_entry* yaml_node::find(std::string_view key) const {
  for (const auto& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

std::string describe_node(const yaml_node& node) {
  switch (node.type) {
    case yaml_node::kind::null:
      return "empty";
    case yaml_node::kind::scalar:
      return "'" + node.scalar + "'";
    case yaml_node::kind::list:
      return "a list";
    case yaml_node::kind::map:
      return "a map";
  }
  return "?";
}

namespace {

/// yaml-cpp marks are 0-based; the first line may start inside a longer text (an override's value).
source_pos position(const YAML::Mark& mark, const std::string& source, int first_column) {
  if (mark.is_null() || mark.line < 0) return {source, 0, 0};
  return {source, mark.line + 1, mark.line == 0 ? mark.column + first_column : mark.column + 1};
}

/// Where byte `offset` of `text` is, counting columns in characters as yaml-cpp does.
source_pos position_of_byte(std::string_view text, std::size_t offset, const std::string& source,
                            int first_column) {
  int line = 1;
  int column = first_column;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {  // not a continuation byte
      ++column;
    }
  }
  return {source, line, column};
}

/// The length of the UTF-8 sequence at `text[i]`, or 0 when it is not well formed (overlong, a surrogate,
/// past U+10FFFF, or cut short).
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  std::size_t length = 0;
  std::uint32_t code = 0;
  std::uint32_t lowest = 0;
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, code = lead & 0x1F, lowest = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, code = lead & 0x0F, lowest = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, code = lead & 0x07, lowest = 0x10000;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = code << 6 | (byte(i + k) & 0x3F);
  }
  if (code < lowest || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

/// Refuses what yaml-cpp would read wrongly before it reads it: it takes a leading FF FE for UTF-16 and
/// decodes the rest as such, drops most control characters silently, and reads a NUL as the end of a quoted
/// scalar or as an escape ("unknown escape character").
void check_text(std::string_view text, const std::string& source, int first_column) {
  const source_pos start{source, 1, first_column};
  if (text.size() > yaml_limits::max_bytes)
    throw config_error(start, "the text is " + std::to_string(text.size()) +
                                  " bytes, more than a topology may be (" +
                                  std::to_string(yaml_limits::max_bytes >> 20) + " MiB)");
  if (text.size() >= 2 &&
      ((text[0] == '\xFF' && text[1] == '\xFE') || (text[0] == '\xFE' && text[1] == '\xFF')))
    throw config_error(start, "the text starts with a UTF-16 byte order mark; a topology is UTF-8 text");
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto hex = [c] {
      char code[8];
      std::snprintf(code, sizeof code, "0x%02X", c);
      return std::string(code);
    };
    if (c < 0x20 ? c != '\t' && c != '\n' && c != '\r' : c == 0x7F)
      throw config_error(position_of_byte(text, i, source, first_column),
                         std::string("YAML text cannot hold control characters, but here is ") +
                             (c == 0 ? "a NUL byte (0x00)" : "the control character " + hex()));
    const std::size_t length = utf8_length(text, i);
    if (length == 0)
      throw config_error(position_of_byte(text, i, source, first_column),
                         "the byte " + hex() + " is not UTF-8 text; a topology is UTF-8");
    i += length;
  }
}

/// Builds the yaml_node tree from yaml-cpp's parse events, one document, without recursion: nesting,
/// size and aliases are bounded (yaml_limits) as the events arrive, before anything is built for them.
/// yaml-cpp's own tree has neither bound: an alias inside the node it names is a cycle that converting it
/// follows without end, and each alias of a nested alias multiplies the nodes a conversion makes.
class tree_builder final : public YAML::EventHandler {
 public:
  tree_builder(std::string_view text, const std::string& source, int first_column)
      : text_(text), source_(source), first_column_(first_column) {}

  /// The document, once its end was seen; null when the text holds none.
  bool has_document() const { return documents_ > 0; }
  yaml_node take_root() { return std::move(root_); }
  std::vector<diagnostic>& problems() { return problems_; }
  std::size_t documents() const { return documents_; }
  /// Where the second document's first node is (reported when there is one).
  const source_pos& second_document() const { return second_document_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    // yaml-cpp starts a document at a token it cannot begin a node with (a ',' outside a flow collection)
    // without consuming it, and then again and again: a document that starts where the last one did
    // read nothing.
    if (documents_ > 0 && mark.pos == last_document_start_) {
      const std::string found = character_at(mark);
      throw config_error(here(mark), found == ","
                                         ? "YAML syntax: ',' outside a flow list or map (a ',' separates the "
                                           "items of [a, b] or {a: 1, b: 2})"
                                         : "YAML syntax: unexpected '" + found + "'");
    }
    last_document_start_ = mark.pos;
    ++documents_;
    first_event_ = true;
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    yaml_node node;
    node.pos = here(mark);
    add_leaf(std::move(node), mark, anchor);
  }

  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    yaml_node node;
    node.type = yaml_node::kind::scalar;
    node.scalar = value;
    node.pos = here(mark);
    add_leaf(std::move(node), mark, anchor);
  }

  void OnAnchor(const YAML::Mark&, const std::string& name) override { anchor_name_ = name; }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (!building(mark)) return;
    const auto named = anchors_.find(anchor);
    if (named == anchors_.end())
      throw config_error(here(mark), "alias '*" + name_of(anchor) +
                                         "' is inside the node it names: the node would contain itself");
    count(here(mark), named->second.nodes);
    built_ += named->second.nodes;
    place(yaml_node(named->second.node));
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor, yaml_node::kind::list);
  }
  void OnSequenceEnd() override { close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor, yaml_node::kind::map);
  }
  void OnMapEnd() override { close(); }

 private:
  /// A list or map whose end has not been seen yet.
  struct open_node {
    yaml_node node;
    YAML::anchor_t anchor = 0;
    std::size_t built_before = 0;  ///< built_ when it opened: its own count is the difference
    bool has_key = false;          ///< a map: its next node is the value of `entry`
    bool key_refused = false;      ///< …whose key was not a name (reported), so the value is dropped
    yaml_entry entry;
  };

  struct anchored {
    yaml_node node;
    std::size_t nodes = 0;
  };

  source_pos here(const YAML::Mark& mark) const {
    source_pos pos = position(mark, source_, first_column_);
    return pos.known() ? pos : source_pos{source_, 1, first_column_};
  }

  /// Only the first document is built; later ones are counted, and where the second starts is kept.
  bool building(const YAML::Mark& mark) {
    if (documents_ == 1) return true;
    if (documents_ == 2 && first_event_) second_document_ = here(mark);
    first_event_ = false;
    return false;
  }

  /// The character (its UTF-8 bytes) at `mark`, which is counted in lines and characters.
  std::string character_at(const YAML::Mark& mark) const {
    std::size_t i = 0;
    for (int line = 0; line < mark.line && i < text_.size(); ++i)
      if (text_[i] == '\n') ++line;
    for (int column = 0; i < text_.size(); ++i) {
      if ((static_cast<unsigned char>(text_[i]) & 0xC0) == 0x80) continue;
      if (column++ == mark.column) break;
    }
    std::size_t end = i + 1;
    while (end < text_.size() && (static_cast<unsigned char>(text_[end]) & 0xC0) == 0x80) ++end;
    return i < text_.size() ? std::string(text_.substr(i, end - i)) : std::string("end of text");
  }

  std::string name_of(YAML::anchor_t anchor) const {
    const auto it = anchor_names_.find(anchor);
    return it == anchor_names_.end() ? std::string("?") : it->second;
  }

  /// Charges `nodes` made at `where` to the document's bound: the tree's nodes, and the copies kept of
  /// anchored nodes (nested anchors each keep one of what they hold).
  void count(const source_pos& where, std::size_t nodes) {
    nodes_ += nodes;
    if (nodes_ > yaml_limits::max_nodes)
      throw config_error(where, "the document holds more than " + std::to_string(yaml_limits::max_nodes) +
                                    " nodes (an alias counts as a copy of what it names, an anchor as one "
                                    "more), more than a topology may hold");
  }

  /// Keeps a copy of an anchored node of `nodes` nodes, for its aliases.
  void keep(YAML::anchor_t anchor, const yaml_node& node, std::size_t nodes) {
    if (anchor == 0) return;
    count(node.pos, nodes);
    anchors_[anchor] = anchored{node, nodes};
  }

  void name_anchor(YAML::anchor_t anchor) {
    if (anchor != 0) anchor_names_[anchor] = anchor_name_;
    anchor_name_.clear();
  }

  void add_leaf(yaml_node node, const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (!building(mark)) return;
    name_anchor(anchor);
    count(node.pos, 1);
    ++built_;
    keep(anchor, node, 1);
    place(std::move(node));
  }

  void open(const YAML::Mark& mark, YAML::anchor_t anchor, yaml_node::kind type) {
    // Counted in every document: yaml-cpp's own bound (500 levels, "bad file") is past what a topology
    // needs and says nothing of why.
    if (++depth_ > yaml_limits::max_depth)
      throw config_error(here(mark), "lists and maps are nested more than " +
                                         std::to_string(yaml_limits::max_depth) +
                                         " levels deep here, more than a topology may be");
    if (!building(mark)) return;
    name_anchor(anchor);
    open_node opened;
    opened.node.type = type;
    opened.node.pos = here(mark);
    opened.anchor = anchor;
    opened.built_before = built_;
    count(opened.node.pos, 1);
    ++built_;
    stack_.push_back(std::move(opened));
  }

  void close() {
    --depth_;
    if (documents_ != 1) return;
    open_node closed = std::move(stack_.back());
    stack_.pop_back();
    keep(closed.anchor, closed.node, built_ - closed.built_before);
    place(std::move(closed.node));
  }

  /// Puts a finished node where it belongs: the root, a list's next item, or a map's next key or value.
  void place(yaml_node node) {
    if (stack_.empty()) {
      root_ = std::move(node);
      return;
    }
    open_node& parent = stack_.back();
    if (parent.node.type == yaml_node::kind::list) {
      parent.node.items.push_back(std::move(node));
      return;
    }
    if (!parent.has_key) {
      parent.has_key = true;
      parent.key_refused = node.type != yaml_node::kind::scalar;
      parent.entry = yaml_entry{};
      parent.entry.key_pos = node.pos;
      if (parent.key_refused)
        problems_.push_back({node.pos, "a map key must be a name, not " +
                                           std::string(node.type == yaml_node::kind::null  ? "empty"
                                                       : node.type == yaml_node::kind::map ? "a map"
                                                                                           : "a list")});
      else
        parent.entry.key = std::move(node.scalar);
      return;
    }
    parent.has_key = false;
    if (parent.key_refused) return;
    parent.entry.value = std::move(node);
    // yaml-cpp marks an empty value ("key:" then a newline) at whatever token follows it, often the next
    // key's line; the key itself is the honest place to point at.
    if (parent.entry.value.type == yaml_node::kind::null &&
        parent.entry.value.pos.line != parent.entry.key_pos.line)
      parent.entry.value.pos = parent.entry.key_pos;
    parent.node.entries.push_back(std::move(parent.entry));
  }

  std::string_view text_;
  const std::string& source_;
  int first_column_;
  yaml_node root_;
  std::vector<open_node> stack_;
  std::map<YAML::anchor_t, anchored> anchors_;
  std::map<YAML::anchor_t, std::string> anchor_names_;
  std::string anchor_name_;  ///< the name OnAnchor gave the next node
  std::size_t nodes_ = 0;    ///< charged to yaml_limits::max_nodes
  std::size_t built_ = 0;    ///< in the tree
  std::size_t depth_ = 0;    ///< lists and maps open, in whichever document
  std::size_t documents_ = 0;
  int last_document_start_ = -1;  ///< YAML::Mark::pos of the last document start
  bool first_event_ = false;
  source_pos second_document_;
  std::vector<diagnostic> problems_;
};

}  // namespace

yaml_node parse_yaml(std::string_view text, const std::string& source_name, int first_column) {
  const source_pos start{source_name, 1, first_column};
  check_text(text, source_name, first_column);
  tree_builder builder(text, source_name, first_column);
  try {
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder)) {
    }
  } catch (const YAML::Exception& e) {
    source_pos where = position(e.mark, source_name, first_column);
    if (!where.known()) where = start;
    throw config_error(where, "YAML syntax: " + e.msg);
  }
  if (builder.documents() > 1)
    throw config_error(builder.second_document(), "a topology is one YAML document, but this text holds " +
                                                      std::to_string(builder.documents()));
  if (!builder.problems().empty()) throw config_error(std::move(builder.problems()));
  yaml_node root = builder.take_root();
  if (!builder.has_document()) root.pos = start;
  return root;
}

}  // namespace xf
