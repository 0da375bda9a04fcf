// The Chrome trace event format writer (trace_file.hpp).
#include "framework/runtime/trace_file.hpp"

#include <algorithm>
#include <limits>
#include <vector>

namespace xf {

void write_chrome_trace(std::ostream& out, const trace::recording& r, int pid, const std::string& process,
                        const nlohmann::json& metadata) {
  std::uint64_t origin = std::numeric_limits<std::uint64_t>::max();
  for (const trace::event& e : r.events) origin = std::min(origin, e.start_ns);
  if (r.events.empty()) origin = 0;
  const auto us = [&](std::uint64_t ns) { return static_cast<double>(ns - std::min(ns, origin)) / 1e3; };
  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":"
      << metadata.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << ",\"traceEvents\":[\n";
  bool first = true;
  const auto emit = [&](const nlohmann::json& e) {
    out << (first ? "" : ",\n") << e.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    first = false;
  };
  emit({{"ph", "M"}, {"pid", pid}, {"name", "process_name"}, {"args", {{"name", process}}}});
  // Only tracks with events: a thread that only drained others' (the kernel's rings) has none of its own.
  std::vector<bool> used;
  for (const trace::event& e : r.events) {
    if (e.track >= used.size()) used.resize(e.track + 1, false);
    used[e.track] = true;
  }
  for (const trace::track& t : r.tracks) {
    if (t.id >= used.size() || !used[t.id]) continue;
    emit({{"ph", "M"}, {"pid", pid}, {"tid", t.id}, {"name", "thread_name"}, {"args", {{"name", t.name}}}});
    emit({{"ph", "M"},
          {"pid", pid},
          {"tid", t.id},
          {"name", "thread_sort_index"},
          {"args", {{"sort_index", t.order}}}});
  }
  for (const trace::event& e : r.events) {
    const trace::name_entry& n = r.names.at(e.name);
    nlohmann::json j{
        {"name", n.name}, {"cat", n.category}, {"pid", pid}, {"tid", e.track}, {"ts", us(e.start_ns)}};
    if (e.instant) {
      j["ph"] = "i";
      j["s"] = "t";
    } else {
      j["ph"] = "X";
      j["dur"] = static_cast<double>(e.duration_ns) / 1e3;
    }
    if (e.has_arg) j["args"] = {{n.arg_name.empty() ? "value" : n.arg_name, e.arg}};
    emit(j);
  }
  out << "\n]}\n";
}

}  // namespace xf
