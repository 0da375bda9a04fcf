// The table and the JSON rows (report.hpp).
#include "apps/shared_objects/report.hpp"

#include <algorithm>
#include <cstdio>

#include "framework/core/units.hpp"

namespace xf::shared_bench {
namespace {

std::string bytes_text(std::uint64_t bytes) {
  return bytes == 0 ? "0" : format_bytes(bytes);
}

std::string spec_block(const run_spec& s) {
  return s.which == variant::rolling && s.block_bytes != 0 ? format_bytes(s.block_bytes) : "-";
}

std::string spec_rolling(const run_spec& s) {
  if (s.which != variant::rolling) return "-";
  return s.rolling_size == 0 ? "adapt" : std::to_string(s.rolling_size);
}

/// The median time of the explicit run of the same experiment, workload and size, or 0.
double explicit_ms(const std::vector<row>& rows, const row& r) {
  for (const row& o : rows)
    if (o.experiment == r.experiment && o.workload == r.workload && o.size == r.size &&
        o.spec.which == variant::explicit_copies && o.status == "ok" && o.median() != nullptr)
      return o.median()->ms;
  return 0;
}

nlohmann::json record_json(const run_record& r) {
  nlohmann::json phases = nlohmann::json::object(), phase_bytes = nlohmann::json::object();
  for (std::size_t p = 0; p < phase_count; ++p) {
    const std::string name(name_of(static_cast<phase>(p)));
    phases[name] = r.phase_ms[p];
    if (r.bytes)
      phase_bytes[name] = {{"to_gpu", r.phase_bytes[p].to_gpu}, {"to_host", r.phase_bytes[p].to_host}};
  }
  return {{"ms", r.ms},
          {"ms_with_alloc", r.ms_with_alloc},
          {"kernel_ms", r.kernel_ms},
          {"phases_ms", phases},
          {"bytes_to_gpu", r.bytes ? nlohmann::json(r.bytes->to_gpu) : nlohmann::json(nullptr)},
          {"bytes_to_host", r.bytes ? nlohmann::json(r.bytes->to_host) : nlohmann::json(nullptr)},
          {"phase_bytes", r.bytes ? phase_bytes : nlohmann::json(nullptr)},
          {"faults", r.faults},
          {"evictions", r.evictions}};
}

}  // namespace

std::string size_text(const std::vector<std::pair<std::string, std::uint64_t>>& size) {
  std::string s;
  for (const auto& [name, value] : size) s += (s.empty() ? "" : " ") + name + "=" + std::to_string(value);
  return s;
}

void print_title(const std::string& title) {
  std::printf("\n== %s ==\n", title.c_str());
  std::printf("%-8s %-34s %-16s %8s %5s %9s %6s %9s %8s %7s %7s %7s %7s %7s %10s %10s %7s %6s\n", "workload",
              "size", "variant", "block", "roll", "ms", "x expl", "+alloc ms", "kernel", "write", "to_gpu",
              "gpu", "to_host", "read", "to GPU", "to host", "faults", "evict");
}

void print_rows(const std::vector<row>& rows) {
  for (const row& r : rows) {
    const std::string size = size_text(r.size);
    const std::string v(name_of(r.spec.which));
    const run_record* m = r.median();
    if (r.status != "ok" || m == nullptr) {
      std::printf("%-8s %-34s %-16s %8s %5s %s: %s\n", r.workload.c_str(), size.c_str(), v.c_str(),
                  spec_block(r.spec).c_str(), spec_rolling(r.spec).c_str(),
                  r.status == "ok" ? "NO RUNS" : (r.status == "wrong" ? "WRONG" : r.status.c_str()),
                  r.detail.c_str());
      continue;
    }
    const double base = explicit_ms(rows, r);
    char slowdown[16] = "-";
    if (base > 0) std::snprintf(slowdown, sizeof slowdown, "%.3f", m->ms / base);
    const std::string to_gpu = m->bytes ? bytes_text(m->bytes->to_gpu) : "n/m";
    const std::string to_host = m->bytes ? bytes_text(m->bytes->to_host) : "n/m";
    std::printf(
        "%-8s %-34s %-16s %8s %5s %9.2f %6s %9.2f %8.2f %7.2f %7.2f %7.2f %7.2f %7.2f %10s %10s %7llu "
        "%6llu\n",
        r.workload.c_str(), size.c_str(), v.c_str(), spec_block(r.spec).c_str(), spec_rolling(r.spec).c_str(),
        m->ms, slowdown, m->ms_with_alloc, m->kernel_ms, m->phase_ms[0], m->phase_ms[1], m->phase_ms[2],
        m->phase_ms[3], m->phase_ms[4], to_gpu.c_str(), to_host.c_str(),
        static_cast<unsigned long long>(m->faults), static_cast<unsigned long long>(m->evictions));
  }
}

nlohmann::json to_json(const row& r) {
  nlohmann::json size = nlohmann::json::object();
  for (const auto& [name, value] : r.size) size[name] = value;
  nlohmann::json j = {
      {"experiment", r.experiment},
      {"workload", r.workload},
      {"size", size},
      {"variant", name_of(r.spec.which)},
      {"block_bytes",
       r.spec.which == variant::rolling ? nlohmann::json(r.spec.block_bytes) : nlohmann::json(nullptr)},
      {"rolling_size", r.spec.which != variant::rolling ? nlohmann::json(nullptr)
                       : r.spec.rolling_size == 0       ? nlohmann::json("adaptive")
                                                        : nlohmann::json(r.spec.rolling_size)},
      {"status", r.status},
      {"detail", r.detail},
      {"cut_short", r.cut_short.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.cut_short)},
      {"warmup", r.warmup},
      {"reps", r.runs.size()}};
  nlohmann::json runs = nlohmann::json::array();
  for (const run_record& run : r.runs) runs.push_back(record_json(run));
  j["runs"] = runs;
  if (const run_record* m = r.median(); m != nullptr && r.status == "ok") {
    double low = m->ms, high = m->ms;
    for (const run_record& run : r.runs) {
      low = std::min(low, run.ms);
      high = std::max(high, run.ms);
    }
    j["median"] = record_json(*m);
    j["min_ms"] = low;
    j["max_ms"] = high;
  } else {
    j["median"] = nullptr;
  }
  return j;
}

}  // namespace xf::shared_bench
