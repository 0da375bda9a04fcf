// xeflow-setquery-ckc: Set Query the conventional way, copy → kernel → copy (CKC), as the baselines that
// xeflow's skip transfer is measured against. The table sits in pinned host memory, frames as the table file
// holds them. A pass over a family copies to the GPU either
//   columns  every page of each column the family's variants name, with the frames' index pages: what a
//            GPU column store loads (one strided copy per column: a column's pages are adjacent in each
//            frame, at the same offset in every frame), or
//   table    the whole table, every column of every frame (what loading a row-format table moves),
// then runs the `query` operator's own compute over every resident frame, one block per frame and variant
// (the same filter and aggregate code xeflow's kernel runs, the index included), and copies each variant's
// accumulator back. The copy and the kernel do not overlap: that is what CKC means. A table larger than the
// GPU's free memory goes in chunks of as many frames as fit, each copied, then run, before the next.
//
// Timed with CUDA events, per pass: host→device, kernel, device→host, and the total, over --reps passes
// (median and minimum). With --out-dir, each variant's result is written as the operator writes it
// (DIR/ID.csv), so the answers compare byte for byte with xeflow-setquery-ref's.
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "apps/setquery/ckc_kernel.hpp"
#include "apps/setquery/setquery_queries.hpp"
#include "framework/core/cuda_buffer.hpp"
#include "framework/core/cuda_check.hpp"
#include "framework/core/worker_team.hpp"
#include "operators/olap/query.hpp"
#include "operators/sources/columnar_table.hpp"

namespace {

namespace sq = xf::apps::setquery;
using xf::query_op;

constexpr int exit_failed = 1, exit_no_gpu = 2, exit_usage = 3;
constexpr unsigned block_threads = 256;

/// The topic a table_source of this file would feed: what the query binds to.
xf::topic_info topic_of(const xf::columnar_table_file& table) {
  xf::topic_info info;
  info.name = "bench";
  info.frame_bytes = table.frame_bytes();
  info.element = xf::element_type::u8;
  info.columnar = table.geometry();
  for (const auto& c : table.schema().columns) info.column_names.push_back(c.name);
  return info;
}

query_op::params bind_variant(const sq::query_variant& v, const xf::topic_info& topic,
                              std::uint32_t max_rows) {
  query_op::params p{};
  const auto stored = [&](const char* problem) {
    if (*problem != '\0') throw std::invalid_argument(v.id + ": " + problem);
  };
  stored(xf::olap::store_where(v.where_text(), p.where));
  stored(xf::olap::store_select(v.select_text(), p.select));
  stored(xf::olap::store_group_by("", p.group_by));
  p.max_rows = max_rows;
  if (auto problem = query_op::bind(p, topic)) throw std::invalid_argument(v.id + ": " + problem->message);
  return p;
}

struct pass_times {
  float h2d_ms, kernel_ms, d2h_ms, total_ms;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

int run(int argc, char** argv) {
  std::string path, out_dir, json_path, layouts = "columns,table";
  std::vector<std::string> families;
  unsigned reps = 5;
  std::uint64_t max_chunk_frames = 0;
  std::uint32_t max_rows = 1u << 22;
  CLI::App app{
      "xeflow-setquery-ckc: Set Query families copied to the GPU whole (their columns, or the whole table) "
      "and "
      "then run by the query operator's compute: the copy-kernel-copy baselines of skip transfer"};
  app.option_defaults()->always_capture_default();
  app.add_option("table", path, "the BENCH table file (xeflow-setquery-gen)")->required();
  app.add_option("--query", families, "families (Q1 … Q4B) or variant ids; default: every family");
  app.add_option("--layout", layouts, "what a pass copies: columns, table, or both comma-separated");
  app.add_option("--reps", reps, "timed passes per family and layout")->check(CLI::Range(1u, 1000u));
  app.add_option("--chunk-frames", max_chunk_frames,
                 "frames a chunk holds at most (0: as many as the GPU's free memory holds)");
  app.add_option("--max-rows", max_rows,
                 "rows a projection may return (its result room in device memory); a run with more fails")
      ->check(CLI::Range(1u, 1u << 30));
  app.add_option("--out-dir", out_dir, "write each variant's result as DIR/LAYOUT/ID.csv");
  app.add_option("--json", json_path, "write the timings here");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : exit_usage;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    (void)cudaGetLastError();
    std::cerr << "xeflow-setquery-ckc: no CUDA device\n";
    return exit_no_gpu;
  }
  std::vector<std::string> layout_list;
  for (std::size_t at = 0; at <= layouts.size();) {
    const std::size_t comma = std::min(layouts.find(',', at), layouts.size());
    layout_list.push_back(layouts.substr(at, comma - at));
    if (layout_list.back() != "columns" && layout_list.back() != "table") {
      std::cerr << "xeflow-setquery-ckc: --layout: '" << layout_list.back() << "' is not columns or table\n";
      return exit_usage;
    }
    at = comma + 1;
  }

  const xf::columnar_table_file table(path);
  const xf::topic_info topic = topic_of(table);
  const xf::columnar_geometry& g = table.geometry();
  const std::uint64_t frames = table.frames(), frame_bytes = table.frame_bytes();
  const std::uint64_t table_bytes = frames * frame_bytes;
  std::size_t free_bytes = 0, total_bytes = 0;
  XF_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  // Room for the accumulators (a projection's, 4 M rows, per variant) and the runtime besides the frames.
  constexpr std::uint64_t room = std::uint64_t{8} << 30;
  if (free_bytes < room + frame_bytes)
    throw std::runtime_error("the GPU's " + std::to_string(free_bytes) + " free bytes hold no frame of " +
                             std::to_string(frame_bytes) + " bytes beside 8 GiB for the accumulators");
  std::uint64_t chunk_frames = std::min<std::uint64_t>(frames, (free_bytes - room) / frame_bytes);
  if (max_chunk_frames != 0) chunk_frames = std::min(chunk_frames, max_chunk_frames);
  const std::uint64_t chunks = (frames + chunk_frames - 1) / chunk_frames;

  const auto load_start = std::chrono::steady_clock::now();
  xf::pinned_buffer<std::byte> host(table_bytes);
  {
    // Read on several threads: a table of 200 GB takes a minute on one.
    xf::worker_team team(std::min(16u, std::max(1u, std::thread::hardware_concurrency())));
    std::atomic<std::uint64_t> next{0};
    team.run([&](unsigned) {
      for (std::uint64_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < frames;)
        table.read_frame(k, host.get() + k * frame_bytes);
    });
  }
  const double load_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  xf::device_buffer<std::byte> device(chunk_frames * frame_bytes);
  xf::cuda_stream stream;
  xf::cuda_event start(true), copied(true), computed(true), done(true);
  int sms = 0;
  XF_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));

  // Families in the benchmark's order, each run as one pass over its variants.
  std::vector<std::vector<const sq::query_variant*>> groups;
  for (const std::string_view family : sq::query_families) {
    std::vector<const sq::query_variant*> chosen;
    const std::vector<std::string> wanted =
        families.empty() ? std::vector<std::string>{std::string(family)} : families;
    for (const sq::query_variant* v : sq::select_variants(wanted))
      if (v->family == family) chosen.push_back(v);
    if (!chosen.empty()) groups.push_back(std::move(chosen));
  }

  nlohmann::json runs = nlohmann::json::array();
  std::cout << std::left << std::setw(5) << "fam" << std::setw(9) << "layout" << std::right << std::setw(9)
            << "variants" << std::setw(12) << "GB copied" << std::setw(10) << "h2d ms" << std::setw(11)
            << "kernel ms" << std::setw(10) << "d2h ms" << std::setw(11) << "total ms" << std::setw(11)
            << "min ms\n";
  for (const auto& variants : groups) {
    const std::uint32_t nv = static_cast<std::uint32_t>(variants.size());
    std::vector<query_op::params> params;
    std::set<std::uint32_t> columns;
    for (const sq::query_variant* v : variants) {
      params.push_back(bind_variant(*v, topic, max_rows));
      for (std::uint32_t s = 0; s < params.back().program.slot_count; ++s)
        columns.insert(params.back().program.slots[s].column);
    }
    xf::device_buffer<query_op::params> device_params(nv);
    XF_CUDA_TRY(cudaMemcpy(device_params.get(), params.data(), nv * sizeof(query_op::params),
                           cudaMemcpyHostToDevice));
    std::vector<std::uint64_t> state_bytes(nv);
    std::uint64_t states_total = 0;
    for (std::uint32_t i = 0; i < nv; ++i) states_total += state_bytes[i] = query_op::state_bytes(params[i]);
    xf::device_buffer<std::byte> device_states(states_total);
    xf::pinned_buffer<std::byte> host_states(states_total);
    std::vector<std::byte*> state_at(nv);
    for (std::uint64_t i = 0, at = 0; i < nv; at += state_bytes[i], ++i)
      state_at[i] = device_states.get() + at;
    xf::device_buffer<std::byte*> device_state_at(nv);
    XF_CUDA_TRY(
        cudaMemcpy(device_state_at.get(), state_at.data(), nv * sizeof(std::byte*), cudaMemcpyHostToDevice));
    xf::device_buffer<std::uint64_t> failures(nv);
    const auto host_at = [&](std::uint32_t i) {
      return host_states.get() + (state_at[i] - device_states.get());
    };

    for (const std::string& layout : layout_list) {
      // A column's pages are adjacent and at the same offset in every frame: one 2-D copy each (frames
      // rows of its pages' bytes, pitch the frame), plus one for the header and index pages.
      struct strip {
        std::uint64_t offset, bytes;
      };
      std::vector<strip> strips;
      if (layout == "table") {
        strips.push_back({0, frame_bytes});
      } else {
        strips.push_back({0, std::uint64_t{g.index_pages} * xf::columnar_page_bytes});
        for (const std::uint32_t c : columns)
          strips.push_back(
              {g.page_offset(c, 0), std::uint64_t{g.columns[c].pages} * xf::columnar_page_bytes});
      }
      std::uint64_t copied_bytes = 0;
      for (const strip& s : strips) copied_bytes += s.bytes * frames;
      const dim3 grid(static_cast<unsigned>(std::min<std::uint64_t>(chunk_frames, std::uint64_t(sms) * 8)),
                      nv);

      std::vector<double> totals;
      pass_times sum{};
      for (unsigned rep = 0; rep < reps; ++rep) {
        XF_CUDA_TRY(cudaMemsetAsync(device_states.get(), 0, states_total, stream.get()));
        XF_CUDA_TRY(cudaMemsetAsync(failures.get(), 0, nv * sizeof(std::uint64_t), stream.get()));
        pass_times t{};
        for (std::uint64_t chunk = 0; chunk < chunks; ++chunk) {
          const std::uint64_t first = chunk * chunk_frames, count = std::min(chunk_frames, frames - first);
          // Nothing left from before (an earlier pass, or chunk, of pages this layout does not copy).
          XF_CUDA_TRY(cudaMemsetAsync(device.get(), 0, count * frame_bytes, stream.get()));
          XF_CUDA_TRY(cudaEventRecord(start.get(), stream.get()));
          for (const strip& s : strips)
            XF_CUDA_TRY(cudaMemcpy2DAsync(device.get() + s.offset, frame_bytes,
                                          host.get() + first * frame_bytes + s.offset, frame_bytes, s.bytes,
                                          count, cudaMemcpyHostToDevice, stream.get()));
          XF_CUDA_TRY(cudaEventRecord(copied.get(), stream.get()));
          sq::launch_queries(grid, block_threads, stream.get(), device_params.get(), device.get(),
                             frame_bytes, first, count, device_state_at.get(), failures.get());
          XF_CUDA_TRY(cudaEventRecord(computed.get(), stream.get()));
          XF_CUDA_TRY(cudaEventSynchronize(computed.get()));
          float h2d = 0, kernel = 0;
          XF_CUDA_TRY(cudaEventElapsedTime(&h2d, start.get(), copied.get()));
          XF_CUDA_TRY(cudaEventElapsedTime(&kernel, copied.get(), computed.get()));
          t.h2d_ms += h2d;
          t.kernel_ms += kernel;
        }
        XF_CUDA_TRY(cudaEventRecord(computed.get(), stream.get()));
        // Back: each accumulator's header, then what its result uses (a projection's rows taken, not its
        // room for max_rows), as xeflow's device executor copies it.
        for (std::uint32_t i = 0; i < nv; ++i)
          XF_CUDA_TRY(cudaMemcpyAsync(host_at(i), state_at[i], query_op::state_head_bytes,
                                      cudaMemcpyDeviceToHost, stream.get()));
        XF_CUDA_TRY(cudaStreamSynchronize(stream.get()));
        for (std::uint32_t i = 0; i < nv; ++i) {
          const std::uint64_t used = std::min<std::uint64_t>(
              state_bytes[i],
              query_op::state_bytes_used(params[i], {host_at(i), query_op::state_head_bytes}));
          if (used > query_op::state_head_bytes)
            XF_CUDA_TRY(cudaMemcpyAsync(
                host_at(i) + query_op::state_head_bytes, state_at[i] + query_op::state_head_bytes,
                used - query_op::state_head_bytes, cudaMemcpyDeviceToHost, stream.get()));
        }
        XF_CUDA_TRY(cudaEventRecord(done.get(), stream.get()));
        XF_CUDA_TRY(cudaStreamSynchronize(stream.get()));
        XF_CUDA_TRY(cudaEventElapsedTime(&t.d2h_ms, computed.get(), done.get()));
        // The chunks' memsets are not the pass's: its time is its copies, kernels and copy back.
        t.total_ms = t.h2d_ms + t.kernel_ms + t.d2h_ms;
        totals.push_back(t.total_ms);
        sum = {sum.h2d_ms + t.h2d_ms, sum.kernel_ms + t.kernel_ms, sum.d2h_ms + t.d2h_ms, 0};
      }
      std::vector<std::uint64_t> failure_words(nv);
      XF_CUDA_TRY(cudaMemcpy(failure_words.data(), failures.get(), nv * sizeof(std::uint64_t),
                             cudaMemcpyDeviceToHost));
      for (std::uint32_t i = 0; i < nv; ++i) {
        if (const std::uint32_t code = xf::failure_code(failure_words[i]); code != 0) {
          const char* why = query_op::failure_reason(code);
          throw std::runtime_error(variants[i]->id + ": the kernel failed: " + (why ? why : "unknown code") +
                                   (code == query_op::result_full
                                        ? " (--max-rows is " + std::to_string(max_rows) + ")"
                                        : std::string{}));
        }
        if (!out_dir.empty()) {
          const auto dir = std::filesystem::path(out_dir) / layout;
          std::filesystem::create_directories(dir);
          query_op::params p = params[i];
          if (const char* problem =
                  xf::parse_path_text((dir / (variants[i]->id + ".csv")).string(), p.result);
              *problem != '\0')
            throw std::runtime_error(problem);
          query_op::finish(p, {host_at(i), state_bytes[i]});
        }
      }
      const double n = reps;
      const double min_ms = *std::min_element(totals.begin(), totals.end());
      std::cout << std::left << std::setw(5) << variants[0]->family << std::setw(9) << layout << std::right
                << std::setw(9) << nv << std::setw(12) << std::fixed << std::setprecision(3)
                << copied_bytes / 1e9 << std::setw(10) << std::setprecision(2) << sum.h2d_ms / n
                << std::setw(11) << sum.kernel_ms / n << std::setw(10) << sum.d2h_ms / n << std::setw(11)
                << median(totals) << std::setw(11) << min_ms << "\n";
      runs.push_back({{"family", variants[0]->family},
                      {"layout", layout},
                      {"variants", nv},
                      {"copied_bytes", copied_bytes},
                      {"h2d_ms", sum.h2d_ms / n},
                      {"kernel_ms", sum.kernel_ms / n},
                      {"d2h_ms", sum.d2h_ms / n},
                      {"median_ms", median(totals)},
                      {"min_ms", min_ms}});
    }
  }
  if (!json_path.empty()) {
    cudaDeviceProp prop{};
    XF_CUDA_TRY(cudaGetDeviceProperties(&prop, 0));
    const nlohmann::json doc = {{"benchmark", "setquery-ckc"},
                                {"device", prop.name},
                                {"rows", table.rows()},
                                {"frames", frames},
                                {"table_bytes", table_bytes},
                                {"reps", reps},
                                {"chunks", chunks},
                                {"load_seconds", load_seconds},
                                {"runs", runs}};
    std::ofstream(json_path) << doc.dump(1) << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "xeflow-setquery-ckc: " << e.what() << "\n";
    return exit_failed;
  }
}
