// Formatting run stats as tables and JSON.
#include "framework/runtime/run_stats.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "framework/core/units.hpp"

namespace xf {
namespace {

double gb(std::uint64_t bytes) {
  return static_cast<double>(bytes) / 1e9;
}
double seconds(std::uint64_t ns) {
  return static_cast<double>(ns) / 1e9;
}

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

template <class T>
nlohmann::ordered_json or_null(const std::optional<T>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json provenance_json(const run_provenance& p) {
  return {{"version", p.version},
          {"commit", p.commit},
          {"build_type", p.build_type},
          {"cuda_runtime", or_null(p.cuda_runtime)},
          {"cuda_driver", or_null(p.cuda_driver)},
          {"gpu", or_null(p.gpu)},
          {"host", p.host}};
}

}  // namespace

std::string format_stats_table(const run_stats& s) {
  std::ostringstream out;
  const double wall = s.wall_seconds > 0 ? s.wall_seconds : 1e-9;
  out << "topology " << (s.topology.empty() ? "(unnamed)" : s.topology);
  if (s.ranks > 1) out << ", rank " << s.rank << " of " << s.ranks;
  out << ": " << name_of(s.status) << " in " << format_fixed(s.wall_seconds, 3)
      << " s (executor: " << s.executor << ")\n";
  if (s.stream_seconds > 0) {
    std::uint64_t sink_bytes = 0;
    for (const auto& o : s.operators)
      if (o.latency_frames > 0) sink_bytes += o.bytes_in;
    out << "stream: first publish to last delivery " << format_fixed(s.stream_seconds, 3) << " s";
    if (sink_bytes > 0)
      out << ", " << format_fixed(gb(sink_bytes) / s.stream_seconds, 3) << " GB/s into the sinks";
    out << '\n';
  }
  if (!s.phases.empty()) {
    out << "phases:";
    for (std::size_t i = 0; i < s.phases.size(); ++i)
      out << (i ? ", " : " ") << s.phases[i].name << ' ' << format_fixed(s.phases[i].seconds, 3) << " s";
    out << '\n';
  }
  if (!s.error.empty()) out << "error: " << s.error << '\n';
  text_table ops({"operator", "class", "on", "workers", "frames in", "frames out", "GB in", "GB out", "GB/s",
                  "busy s", "wait-in s", "blocked s"});
  for (const auto& o : s.operators) {
    const std::uint64_t moved = o.bytes_in ? o.bytes_in : o.bytes_out;
    ops.add(
        {o.name, o.class_name, o.placement,
         std::to_string(o.workers) + (o.placement == "gpu" ? "b x " + std::to_string(o.warps) + "w" : "t"),
         std::to_string(o.frames_in), std::to_string(o.frames_out), format_fixed(gb(o.bytes_in), 3),
         format_fixed(gb(o.bytes_out), 3), format_fixed(gb(moved) / wall, 3),
         format_fixed(seconds(o.busy_ns), 3), format_fixed(seconds(o.input_wait_ns), 3),
         format_fixed(seconds(o.blocked_ns), 3)});
  }
  out << '\n' << ops.str();
  text_table topics({"topic", "frame", "capacity", "frames", "GB", "GB/s", "blocked s", "end offset"});
  for (const auto& t : s.topics)
    topics.add({t.name, std::to_string(t.frame_bytes / 1024) + " KiB", std::to_string(t.capacity),
                std::to_string(t.frames), format_fixed(gb(t.bytes), 3), format_fixed(gb(t.bytes) / wall, 3),
                format_fixed(seconds(t.blocked_ns), 3), std::to_string(t.end_offset)});
  out << '\n' << topics.str();
  bool any_copied = false;
  for (const auto& t : s.topics) any_copied = any_copied || !t.copied_to.empty();
  if (any_copied) {
    text_table copied({"topic", "copied to", "copies", "GB copied", "GB skipped", "KiB per copy",
                       "CUDA calls", "bridge busy s", "choice wait s"});
    for (const auto& t : s.topics)
      if (!t.copied_to.empty())
        copied.add({t.name, t.copied_to, std::to_string(t.copies), format_fixed(gb(t.copied_bytes), 3),
                    format_fixed(gb(t.skipped_bytes), 3),
                    format_fixed(t.copies ? static_cast<double>(t.copied_bytes) / 1024.0 / t.copies : 0.0, 1),
                    std::to_string(t.copy_cuda_calls), format_fixed(seconds(t.copy_busy_ns), 3),
                    format_fixed(seconds(t.copy_choice_wait_ns), 3)});
    out << "\ncopy engines:\n" << copied.str();
  }
  bool any_columns = false;
  for (const auto& t : s.topics) any_columns = any_columns || !t.columns.empty();
  if (any_columns) {
    text_table pages({"topic", "column", "pages read", "pages skipped", "GB skipped"});
    for (const auto& t : s.topics)
      for (const auto& c : t.columns)
        pages.add({t.name, c.column, std::to_string(c.pages - c.pages_skipped),
                   std::to_string(c.pages_skipped), format_fixed(gb(c.bytes_skipped), 3)});
    out << "\ncolumnar pages (the readers' index walks):\n" << pages.str();
  }
  if (!s.objects.empty()) {
    text_table objects({"object", "protocol", "bytes", "versions", "MB moved", "MB written", "publish ms",
                        "writer wait ms", "reader wait ms"});
    for (const auto& o : s.objects)
      objects.add({o.name, o.protocol, std::to_string(o.bytes), std::to_string(o.publishes.versions),
                   format_fixed(static_cast<double>(o.publishes.bytes_moved) / 1e6, 3),
                   format_fixed(static_cast<double>(o.publishes.bytes_written) / 1e6, 3),
                   format_fixed(static_cast<double>(o.publishes.publish_ns) / 1e6, 3),
                   format_fixed(static_cast<double>(o.publishes.wait_ns) / 1e6, 3),
                   format_fixed(static_cast<double>(o.reader_wait_ns) / 1e6, 3)});
    out << "\nshared objects (versions published after the initial one):\n" << objects.str();
  }
  if (!s.bridges.empty()) {
    text_table bridges({"topic", "to/from", "frames", "GB", "s", "GB/s", "credit wait s", "credits"});
    for (const auto& b : s.bridges)
      bridges.add({b.topic, (b.sends ? "to rank " : "from rank ") + std::to_string(b.peer),
                   std::to_string(b.frames), format_fixed(gb(b.bytes), 3), format_fixed(b.seconds, 3),
                   format_fixed(b.seconds > 0 ? gb(b.bytes) / b.seconds : 0, 3),
                   format_fixed(seconds(b.credit_wait_ns), 3), std::to_string(b.credit_messages)});
    out << "\nbridges (topics carried between ranks):\n" << bridges.str();
  }
  bool any_um = false;
  for (const auto& t : s.topics) any_um = any_um || t.um_known;
  if (any_um) {
    text_table um({"topic", "GPU page faults", "CPU page faults", "migrated to GPU", "migrated to CPU"});
    for (const auto& t : s.topics)
      if (t.um_known)
        um.add({t.name, std::to_string(t.gpu_page_faults), std::to_string(t.cpu_page_faults),
                format_fixed(gb(t.bytes_to_device), 3) + " GB",
                format_fixed(gb(t.bytes_to_host), 3) + " GB"});
    out << "\nunified memory (CUPTI):\n" << um.str();
  } else if (!s.um_note.empty()) {
    out << "\nunified memory: " << s.um_note << '\n';
  }
  bool any_latency = false;
  for (const auto& o : s.operators) any_latency = any_latency || o.latency_frames > 0;
  if (any_latency) {
    text_table latency({"sink", "frames", "latency p50 us", "latency p99 us"});
    for (const auto& o : s.operators)
      if (o.latency_frames > 0)
        latency.add({o.name, std::to_string(o.latency_frames),
                     format_fixed(static_cast<double>(o.latency_p50_ns) / 1e3, 1),
                     format_fixed(static_cast<double>(o.latency_p99_ns) / 1e3, 1)});
    out << '\n' << latency.str();
  }
  if (s.kernel) {
    const kernel_breakdown& k = *s.kernel;
    const double total = static_cast<double>(k.subscribe + k.schedule + k.compute + k.publish + k.idle);
    auto share = [&](std::uint64_t v) {
      return format_fixed(total > 0 ? 100.0 * static_cast<double>(v) / total : 0, 1);
    };
    const double busy = static_cast<double>(k.subscribe + k.schedule + k.compute + k.publish);
    auto busy_share = [&](std::uint64_t v) {
      return format_fixed(busy > 0 ? 100.0 * static_cast<double>(v) / busy : 0, 1);
    };
    text_table phases({"kernel phase", "% of round time", "% of busy rounds' time"});
    phases.add({"subscribe", share(k.subscribe), busy_share(k.subscribe)});
    phases.add({"schedule", share(k.schedule), busy_share(k.schedule)});
    phases.add({"compute", share(k.compute), busy_share(k.compute)});
    phases.add({"publish", share(k.publish), busy_share(k.publish)});
    phases.add({"  of which fences", share(k.fence), busy_share(k.fence)});
    phases.add({"idle", share(k.idle), "-"});
    out << "\nkernel: " << k.blocks << " blocks x " << k.warps_per_block << " warps, " << k.rounds
        << " rounds (" << k.busy_rounds << " with work)\n"
        << phases.str();
    if (k.busy_rounds > 0) {
      const auto busy_rounds = static_cast<double>(k.busy_rounds);
      out << "a busy round: " << format_fixed(static_cast<double>(k.placed_warps) / busy_rounds, 1) << " of "
          << k.warps_per_block << " warps ran "
          << format_fixed(static_cast<double>(k.computed_items) / busy_rounds, 1) << " items\n";
    }
    if (k.fences > 0 && k.sm_clock_mhz > 0)
      out << "a round's system-scope release fence: "
          << format_fixed(static_cast<double>(k.fence) / static_cast<double>(k.fences) / k.sm_clock_mhz, 2)
          << " us on average over " << k.fences << " fences\n";
  }
  if (s.file_cache) {
    const file_cache_stats& c = *s.file_cache;
    const std::uint64_t looks = c.hits + c.misses;
    out << "\nfile cache: " << c.slots << " pages of " << c.page_bytes / 1024 << " KiB, replacement "
        << c.replacement << "; " << c.hits << " hits, " << c.misses << " misses ("
        << format_fixed(looks > 0 ? 100.0 * static_cast<double>(c.hits) / static_cast<double>(looks) : 0, 1)
        << "% hits), " << c.waits << " waits on loading pages, " << c.requests << " requests, " << c.no_page
        << " fetches restarted on a full share; " << c.ahead_pages << " pages read ahead, " << c.ahead_hits
        << " misses served from them\n";
    text_table io({"I/O thread", "requests", "reads", "GB read", "busy s"});
    for (std::size_t t = 0; t < c.io_threads.size(); ++t) {
      const auto& th = c.io_threads[t];
      io.add({std::to_string(t), std::to_string(th.requests), std::to_string(th.chunks),
              format_fixed(gb(th.bytes), 3), format_fixed(seconds(th.busy_ns), 3)});
    }
    out << io.str();
  }
  if (s.partition) {
    const partition_stats& p = *s.partition;
    text_table ops(
        {"GPU operator", "warps", "items/round", "items/frame", "items", "us per item", "% of busy round"});
    for (std::size_t k = 0; k < p.operators.size(); ++k)
      ops.add({p.operators[k], std::to_string(p.warps[k]), std::to_string(p.items_per_round[k]),
               std::to_string(p.items_per_frame[k]), std::to_string(p.items[k]),
               format_fixed(p.item_us[k], 2),
               format_fixed(p.busy_round_us > 0 ? 100.0 * p.item_us[k] / p.busy_round_us : 0, 1)});
    out << "\npartition: " << p.policy << ", busy round " << format_fixed(p.busy_round_us, 2) << " us";
    if (!p.tunings.empty())
      out << ", " << p.tunings.size() << (p.tunings.size() == 1 ? " tuning" : " tunings") << ", "
          << p.switches << " switches";
    out << '\n' << ops.str();
    for (const tuning_record& t : p.tunings) {
      out << "tuning at " << format_fixed(t.start_ms, 1) << " ms (" << t.reason << "): " << t.samples.size()
          << " windows, " << t.sample_items << " items sampled, fit " << format_fixed(t.fit_us, 0) << " us";
      if (t.chosen) {
        out << ", chose";
        for (std::uint32_t w : t.result()) out << ' ' << w;
        if (t.kept_initial)
          out << " (the starting partition; the candidate measured no shorter round)";
        else if (t.fallback)
          out << " (a sampled partition; the models' choice measured slower)";
        out << " at " << format_fixed(t.end_ms, 1) << " ms";
      } else {
        out << ", unfinished";
      }
      out << '\n';
    }
  }
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
  doc["schema_version"] = stats_schema_version;
  doc["provenance"] = provenance_json(s.provenance);
  doc["topology"] = s.topology;
  doc["executor"] = s.executor;
  if (s.gpu) doc["gpu"] = *s.gpu;
  if (s.ranks > 1) {
    doc["rank"] = s.rank;
    doc["ranks"] = s.ranks;
  }
  doc["status"] = std::string(name_of(s.status));
  if (!s.error.empty()) doc["error"] = s.error;
  doc["wall_seconds"] = s.wall_seconds;
  if (s.stream_seconds > 0) doc["stream_seconds"] = s.stream_seconds;
  doc["phases"] = nlohmann::ordered_json::array();
  for (const auto& ph : s.phases) doc["phases"].push_back({{"name", ph.name}, {"seconds", ph.seconds}});
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
    if (o.latency_frames > 0) {
      j["latency_frames"] = o.latency_frames;
      j["latency_p50_us"] = static_cast<double>(o.latency_p50_ns) / 1e3;
      j["latency_p99_us"] = static_cast<double>(o.latency_p99_ns) / 1e3;
    }
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
    if (!t.copied_to.empty())
      j["copy_engines"] = {{"to", t.copied_to},
                           {"copies", t.copies},
                           {"bytes", t.copied_bytes},
                           {"bytes_skipped", t.skipped_bytes},
                           {"cuda_calls", t.copy_cuda_calls},
                           {"bridge_busy_seconds", seconds(t.copy_busy_ns)},
                           {"bridge_choice_wait_seconds", seconds(t.copy_choice_wait_ns)}};
    if (!t.columns.empty()) {
      j["columns"] = nlohmann::ordered_json::array();
      for (const auto& c : t.columns)
        j["columns"].push_back({{"column", c.column},
                                {"pages", c.pages},
                                {"pages_skipped", c.pages_skipped},
                                {"bytes_skipped", c.bytes_skipped}});
    }
    if (t.um_known)
      j["unified_memory"] = {{"gpu_page_faults", t.gpu_page_faults},
                             {"cpu_page_faults", t.cpu_page_faults},
                             {"bytes_to_device", t.bytes_to_device},
                             {"bytes_to_host", t.bytes_to_host}};
    doc["topics"].push_back(std::move(j));
  }
  if (!s.objects.empty()) {
    doc["shared_objects"] = nlohmann::ordered_json::array();
    for (const auto& o : s.objects)
      doc["shared_objects"].push_back({{"name", o.name},
                                       {"protocol", o.protocol},
                                       {"bytes", o.bytes},
                                       {"versions", o.publishes.versions},
                                       {"bytes_moved", o.publishes.bytes_moved},
                                       {"bytes_written", o.publishes.bytes_written},
                                       {"publish_seconds", seconds(o.publishes.publish_ns)},
                                       {"writer_wait_seconds", seconds(o.publishes.wait_ns)},
                                       {"reader_wait_seconds", seconds(o.reader_wait_ns)}});
  }
  if (!s.bridges.empty()) {
    doc["bridges"] = nlohmann::ordered_json::array();
    for (const auto& b : s.bridges)
      doc["bridges"].push_back({{"topic", b.topic},
                                {"peer", b.peer},
                                {"direction", b.sends ? "send" : "receive"},
                                {"frames", b.frames},
                                {"bytes", b.bytes},
                                {"seconds", b.seconds},
                                {"gb_per_second", b.seconds > 0 ? gb(b.bytes) / b.seconds : 0.0},
                                {"credit_wait_seconds", seconds(b.credit_wait_ns)},
                                {"credit_messages", b.credit_messages}});
  }
  if (!s.um_note.empty()) doc["unified_memory_note"] = s.um_note;
  if (s.kernel) {
    const kernel_breakdown& k = *s.kernel;
    doc["kernel"] = {{"blocks", k.blocks},
                     {"warps_per_block", k.warps_per_block},
                     {"rounds", k.rounds},
                     {"busy_rounds", k.busy_rounds},
                     {"subscribe_cycles", k.subscribe},
                     {"schedule_cycles", k.schedule},
                     {"compute_cycles", k.compute},
                     {"publish_cycles", k.publish},
                     {"fence_cycles", k.fence},
                     {"fences", k.fences},
                     {"sm_clock_mhz", k.sm_clock_mhz},
                     {"placed_warps", k.placed_warps},
                     {"computed_items", k.computed_items},
                     {"idle_cycles", k.idle}};
  }
  if (s.file_cache) {
    const file_cache_stats& c = *s.file_cache;
    nlohmann::ordered_json threads = nlohmann::ordered_json::array();
    for (const auto& th : c.io_threads)
      threads.push_back({{"requests", th.requests},
                         {"reads", th.chunks},
                         {"bytes", th.bytes},
                         {"busy_seconds", seconds(th.busy_ns)}});
    doc["file_cache"] = {{"page_bytes", c.page_bytes},
                         {"slots", c.slots},
                         {"replacement", c.replacement},
                         {"hits", c.hits},
                         {"misses", c.misses},
                         {"waits", c.waits},
                         {"requests", c.requests},
                         {"no_page", c.no_page},
                         {"ahead_pages", c.ahead_pages},
                         {"ahead_hits", c.ahead_hits},
                         {"io_threads", std::move(threads)}};
  }
  if (!s.timeline.empty()) {
    nlohmann::ordered_json t = nlohmann::ordered_json::array();
    for (const auto& sample : s.timeline)
      t.push_back({sample.seconds, sample.sink_frames, sample.sink_bytes});
    doc["timeline"] = {{"columns", {"seconds", "sink_frames", "sink_bytes"}}, {"samples", std::move(t)}};
  }
  if (s.partition) {
    const partition_stats& p = *s.partition;
    const double cycles_per_us = p.sm_clock_mhz > 0 ? p.sm_clock_mhz : 1;
    auto window_json = [&](const partition_window& w) {
      nlohmann::ordered_json j;
      j["warps"] = w.warps;
      std::vector<double> us;
      for (double c : w.cost) us.push_back(c / cycles_per_us);
      j["item_us"] = us;
      j["items"] = w.items;
      j["start_ms"] = w.start_ms;
      j["duration_ms"] = w.duration_ms;
      j["round_us"] = w.measured_round() / cycles_per_us;
      return j;
    };
    auto fits_json = [&](const std::vector<cost_fit>& fits) {
      nlohmann::ordered_json a = nlohmann::ordered_json::array();
      for (const cost_fit& f : fits) {
        // θ in cycles (f(N) = θ2·N² + θ1·N + θ0 cycles per item); null when nothing was measured.
        nlohmann::ordered_json j;
        if (f.model.finite())
          j["theta"] = {f.model.theta2, f.model.theta1, f.model.theta0};
        else
          j["theta"] = nullptr;
        j["passes"] = f.passes;
        j["rms_error_cycles"] = f.rms_error;
        j["distinct_warps"] = f.distinct_warps;
        a.push_back(std::move(j));
      }
      return a;
    };
    auto choice_json = [&](const partition_choice& c) {
      return nlohmann::ordered_json{{"warps", c.warps},
                                    {"eq3_warps", c.eq3_warps},
                                    {"eq3_shares", c.shares},
                                    {"f0_cycles", c.f0},
                                    {"predicted_round_us", c.predicted / cycles_per_us},
                                    {"eq3_predicted_round_us", c.eq3_predicted / cycles_per_us},
                                    {"moves", c.moves},
                                    {"note", c.note}};
    };
    nlohmann::ordered_json j;
    j["policy"] = p.policy;
    j["sm_clock_mhz"] = p.sm_clock_mhz;
    j["busy_round_us"] = p.busy_round_us;
    j["switches"] = p.switches;
    j["operators"] = nlohmann::ordered_json::array();
    for (std::size_t k = 0; k < p.operators.size(); ++k)
      j["operators"].push_back(
          {{"name", p.operators[k]},
           {"warps", p.warps[k]},
           {"items_per_round", p.items_per_round[k]},
           {"items_per_frame", p.items_per_frame[k]},
           {"items", p.items[k]},
           {"item_us", p.item_us[k]},
           {"busy_round_share", p.busy_round_us > 0 ? p.item_us[k] / p.busy_round_us : 0}});
    j["tunings"] = nlohmann::ordered_json::array();
    for (const tuning_record& t : p.tunings) {
      nlohmann::ordered_json r;
      r["reason"] = t.reason;
      r["start_ms"] = t.start_ms;
      r["end_ms"] = t.end_ms;
      r["sample_items"] = t.sample_items;
      r["fit_us"] = t.fit_us;
      r["coarse_windows"] = t.coarse_windows;
      r["local_rounds"] = t.local_rounds;
      r["windows"] = nlohmann::ordered_json::array();
      for (const partition_window& w : t.samples) r["windows"].push_back(window_json(w));
      r["coarse_fits"] = fits_json(t.coarse_fits);
      r["coarse_choice"] = choice_json(t.coarse_choice);
      r["fits"] = fits_json(t.fits);
      r["choice"] = choice_json(t.choice);
      if (t.chosen) r["chosen"] = window_json(*t.chosen);
      if (t.fallback) r["fallback"] = window_json(*t.fallback);
      if (t.initial) r["initial"] = window_json(*t.initial);
      r["kept_initial"] = t.kept_initial;
      if (t.chosen) r["result"] = t.result();
      j["tunings"].push_back(std::move(r));
    }
    doc["partition"] = std::move(j);
  }
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string format_ranked_stats_json(const std::vector<std::string>& rank_documents) {
  nlohmann::ordered_json doc;
  doc["schema_version"] = stats_schema_version;
  doc["provenance"] = nullptr;
  doc["ranks"] = rank_documents.size();
  doc["per_rank"] = nlohmann::ordered_json::array();
  for (std::size_t r = 0; r < rank_documents.size(); ++r) {
    nlohmann::ordered_json rank = nlohmann::ordered_json::parse(rank_documents[r]);
    rank.erase("schema_version");
    if (r == 0) doc["provenance"] = rank["provenance"];
    // A rank keeps its machine (host, GPU, driver), and whatever else of its build differs from rank 0's:
    // mpirun may start another installation on another node.
    nlohmann::ordered_json own = nlohmann::ordered_json::object();
    for (const auto& [key, value] : rank["provenance"].items())
      if (key == "host" || key == "gpu" || key == "cuda_driver" || value != doc["provenance"][key])
        own[key] = value;
    rank["provenance"] = std::move(own);
    doc["per_rank"].push_back(std::move(rank));
  }
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace xf
