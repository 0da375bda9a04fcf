// Formatting run stats as tables and JSON.
#include "framework/run_stats.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

namespace xf {
namespace {

std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

double gb(std::uint64_t bytes) { return static_cast<double>(bytes) / 1e9; }
double seconds(std::uint64_t ns) { return static_cast<double>(ns) / 1e9; }

/// A minimal column-aligned table: first column left-aligned, the rest right-aligned.
class text_table {
 public:
  explicit text_table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string str() const {
    std::vector<std::size_t> width(rows_[0].size(), 0);
    for (const auto& row : rows_)
      for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    std::ostringstream out;
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      for (std::size_t c = 0; c < rows_[r].size(); ++c) {
        const std::string& cell = rows_[r][c];
        const std::string pad(width[c] - cell.size(), ' ');
        out << (c ? "  " : "") << (c == 0 ? cell + pad : pad + cell);
      }
      out << '\n';
    }
    return out.str();
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace

std::string format_stats_table(const run_stats& s) {
  std::ostringstream out;
  const double wall = s.wall_seconds > 0 ? s.wall_seconds : 1e-9;
  out << "topology " << (s.topology.empty() ? "(unnamed)" : s.topology) << ": " << s.status << " in "
      << fixed(s.wall_seconds, 3) << " s (executor: " << s.executor << ")\n";
  if (!s.error.empty()) out << "error: " << s.error << '\n';
  text_table ops({"operator", "class", "on", "workers", "frames in", "frames out", "GB in", "GB out", "GB/s",
                  "busy s", "wait-in s", "blocked s"});
  for (const auto& o : s.operators) {
    const std::uint64_t moved = o.bytes_in ? o.bytes_in : o.bytes_out;
    ops.add({o.name, o.class_name, o.placement,
             std::to_string(o.workers) + (o.placement == "gpu" ? "b x " + std::to_string(o.warps) + "w" : "t"),
             std::to_string(o.frames_in), std::to_string(o.frames_out), fixed(gb(o.bytes_in), 3),
             fixed(gb(o.bytes_out), 3), fixed(gb(moved) / wall, 3), fixed(seconds(o.busy_ns), 3),
             fixed(seconds(o.input_wait_ns), 3), fixed(seconds(o.blocked_ns), 3)});
  }
  out << '\n' << ops.str();
  text_table topics({"topic", "frame", "capacity", "frames", "GB", "GB/s", "blocked s", "end offset"});
  for (const auto& t : s.topics)
    topics.add({t.name, std::to_string(t.frame_bytes / 1024) + " KiB", std::to_string(t.capacity),
                std::to_string(t.frames), fixed(gb(t.bytes), 3), fixed(gb(t.bytes) / wall, 3),
                fixed(seconds(t.blocked_ns), 3), std::to_string(t.end_offset)});
  out << '\n' << topics.str();
  bool any_counters = false;
  for (const auto& o : s.operators) any_counters = any_counters || !o.counters.empty();
  if (any_counters) {
    text_table counters({"operator", "counter", "value"});
    for (const auto& o : s.operators)
      for (const auto& [key, value] : o.counters) counters.add({o.name, key, std::to_string(value)});
    out << '\n' << counters.str();
  }
  return out.str();
}

std::string format_stats_json(const run_stats& s) {
  nlohmann::ordered_json doc;
  doc["topology"] = s.topology;
  doc["executor"] = s.executor;
  doc["status"] = s.status;
  if (!s.error.empty()) doc["error"] = s.error;
  doc["wall_seconds"] = s.wall_seconds;
  doc["operators"] = nlohmann::ordered_json::array();
  for (const auto& o : s.operators) {
    nlohmann::ordered_json j;
    j["name"] = o.name;
    j["class"] = o.class_name;
    j["on"] = o.placement;
    j["workers"] = o.workers;
    if (o.placement == "gpu") j["warps"] = o.warps;
    j["frames_in"] = o.frames_in;
    j["bytes_in"] = o.bytes_in;
    j["frames_out"] = o.frames_out;
    j["bytes_out"] = o.bytes_out;
    j["busy_seconds"] = seconds(o.busy_ns);
    j["input_wait_seconds"] = seconds(o.input_wait_ns);
    j["blocked_seconds"] = seconds(o.blocked_ns);
    j["counters"] = nlohmann::ordered_json::object();
    for (const auto& [key, value] : o.counters) j["counters"][key] = value;
    doc["operators"].push_back(std::move(j));
  }
  doc["topics"] = nlohmann::ordered_json::array();
  for (const auto& t : s.topics) {
    nlohmann::ordered_json j;
    j["name"] = t.name;
    j["frame_bytes"] = t.frame_bytes;
    j["capacity"] = t.capacity;
    j["frames"] = t.frames;
    j["bytes"] = t.bytes;
    j["blocked_seconds"] = seconds(t.blocked_ns);
    j["end_offset"] = t.end_offset;
    doc["topics"].push_back(std::move(j));
  }
  return doc.dump(2);
}

}  // namespace xf
