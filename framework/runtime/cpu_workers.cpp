// The CPU operators' workers.
#include "framework/runtime/cpu_workers.hpp"

#include <spdlog/spdlog.h>

#include <string>

#include "framework/core/trace.hpp"
#include "framework/core/units.hpp"
#include "framework/model/columnar_checks.hpp"
#include "topics/columnar_index.hpp"
#include "topics/topic_driver.hpp"

namespace xf {
namespace {

void record(run_context& run, std::size_t topic, std::uint32_t group, const delivery& d) {
  const topic_view& v = run.view(topic);
  run.ledger->record(static_cast<std::uint32_t>(topic), group, d.offset, d.is_void() ? nullptr : d.data(v),
                     d.slot->bytes, d.slot->tag, d.is_void());
}

/// A CPU publisher's columnar frame, after its hook: its header must say how many rows it holds (as
/// columnar_writer::finish writes it); its index pages are the publisher's when it marked them valid (a
/// frame copied whole from a table file), else built here from the data pages. The whole frame is
/// published. The flag is cleared before each hook (open_columnar), so a stale index is never trusted.
void seal_columnar(run_context& run, std::size_t op, std::size_t topic, std::uint64_t offset,
                   const columnar_geometry& g, frame_out& f) {
  columnar_frame_header& h = columnar_header(f.data);
  if (h.magic != columnar_magic || h.column_count != g.column_count || h.rows > g.rows_per_frame)
    throw run_error(run.site(op, topic, offset),
                    "published a columnar frame without a valid header (magic, column count, rows at most " +
                        std::to_string(g.rows_per_frame) +
                        "): fill it through columnar_writer and call finish");
  if ((h.flags & columnar_frame_header::index_valid) == 0) build_columnar_index(g, f.data, h.rows);
  f.bytes = g.frame_bytes();
}

/// Before a publisher's hook fills a columnar frame: its index is not valid until the publisher says so.
void open_columnar(const std::optional<columnar_geometry>& g, const frame_out& f) {
  if (g) columnar_header(f.data).flags &= ~columnar_frame_header::index_valid;
}

void source_worker(run_context& run, std::size_t op) {
  const plan& p = run.plan_of();
  run_control& control = run.control();
  const planned_operator& po = p.operators[op];
  const std::size_t out = po.outputs[0];
  const topic_view& v = run.view(out);
  const std::string& topic_name = p.topics[out].spec->name;
  auto* source = static_cast<cpu_source*>(run.instances()[op].cpu.get());
  const element_type element = p.topics[out].spec->element;
  const std::optional<columnar_geometry> columnar = columnar_geometry_of(*p.topics[out].spec);
  const bool writer = run.objects().writes(op);
  std::uint64_t end = 0;       // one past the last offset this worker published
  std::uint64_t first_ns = 0;  // this worker's first publish (the stream window's start)
  while (!control.draining()) {
    std::uint64_t blocked = 0;
    const publish_ticket t = reserve_claimed(v, topic_name, control.abort_flag(), &blocked);
    run.count_blocked(op, out, blocked);
    frame_out f{t.data, v.frame_bytes, 0, element, t.frame, run.parts_read(out)};
    open_columnar(columnar, f);
    if (writer) run.objects().begin_frame(t.offset);
    const bool more = run.call_hook(op, out, t.offset, [&] { return source->produce(t.offset, f); });
    if (writer) run.objects().finished_frame(op, t.offset);
    end = t.offset + 1;
    if (!more) {
      publish_void(v, t);
      break;
    }
    if (columnar) seal_columnar(run, op, out, t.offset, *columnar, f);
    if (f.bytes > v.frame_bytes)
      throw run_error(
          run.site(op, out, t.offset),
          "produced " + std::to_string(f.bytes) + " bytes into a frame of " + std::to_string(v.frame_bytes));
    const std::uint64_t born = now_ns();
    if (first_ns == 0) first_ns = born;
    publish_frame(v, t, f.bytes, t.offset, born);
    run.count_publish(op, out, f.bytes);
  }
  v.close(end);
  if (first_ns != 0) fetch_min_relaxed(run.stream_first_ns, first_ns);
}

void map_worker(run_context& run, std::size_t op) {
  const plan& p = run.plan_of();
  run_control& control = run.control();
  const planned_operator& po = p.operators[op];
  const std::size_t in = po.inputs[0], out = po.outputs[0];
  const std::uint32_t group = po.input_groups[0];
  const topic_view& vi = run.view(in);
  const topic_view& vo = run.view(out);
  const std::string& out_name = p.topics[out].spec->name;
  auto* map = static_cast<cpu_map*>(run.instances()[op].cpu.get());
  const element_type in_element = p.topics[in].spec->element;
  const element_type out_element = p.topics[out].spec->element;
  const std::optional<columnar_geometry> columnar = columnar_geometry_of(*p.topics[out].spec);
  const bool writer = run.objects().writes(op);
  while (true) {
    std::uint64_t waited = 0, blocked = 0;
    const delivery d = next_frame(vi, group, control.abort_flag(), &waited);
    add_relaxed(run.counters()[op].input_wait_ns, waited);
    if (d.ended) break;
    if (run.ledger != nullptr) record(run, in, group, d);
    if (d.is_void()) {
      publish_void(vo, reserve_void_at(vo, d.offset, control.abort_flag(), &blocked));
      run.count_blocked(op, out, blocked);
      if (writer) run.objects().finished_frame(op, d.offset);
      vi.release(group, d.offset);
      continue;
    }
    const publish_ticket t = reserve_at(vo, out_name, d.offset, control.abort_flag(), &blocked);
    run.count_blocked(op, out, blocked);
    add_relaxed(run.counters()[op].frames_in, 1);
    add_relaxed(run.counters()[op].bytes_in, d.slot->bytes);
    frame_in fi{d.data(vi), d.slot->bytes, in_element};
    frame_out fo{t.data, vo.frame_bytes, d.slot->bytes, out_element};
    open_columnar(columnar, fo);
    if (writer) run.objects().begin_frame(d.offset);
    run.call_hook(op, in, d.offset, [&] { map->on_frame(d.offset, fi, fo); });
    if (writer) run.objects().finished_frame(op, d.offset);
    if (columnar) seal_columnar(run, op, out, d.offset, *columnar, fo);
    if (fo.bytes > vo.frame_bytes)
      throw run_error(
          run.site(op, out, d.offset),
          "wrote " + std::to_string(fo.bytes) + " bytes into a frame of " + std::to_string(vo.frame_bytes));
    publish_frame(vo, t, fo.bytes, d.slot->tag, d.slot->born_ns);
    vi.release(group, d.offset);
    run.count_publish(op, out, fo.bytes);
  }
  vo.close(vi.end());
}

void sink_worker(run_context& run, std::size_t op) {
  const plan& p = run.plan_of();
  run_control& control = run.control();
  const planned_operator& po = p.operators[op];
  const std::size_t in = po.inputs[0];
  const std::uint32_t group = po.input_groups[0];
  const topic_view& vi = run.view(in);
  auto* sink = static_cast<cpu_sink*>(run.instances()[op].cpu.get());
  const element_type element = p.topics[in].spec->element;
  std::uint64_t last_ns = 0;  // this worker's last delivery (the stream window's end)
  const bool writer = run.objects().writes(op);
  while (true) {
    std::uint64_t waited = 0;
    const delivery d = next_frame(vi, group, control.abort_flag(), &waited);
    add_relaxed(run.counters()[op].input_wait_ns, waited);
    if (d.ended) break;
    if (run.ledger != nullptr) record(run, in, group, d);
    if (!d.is_void()) {
      frame_in fi{d.data(vi), d.slot->bytes, element};
      if (writer) run.objects().begin_frame(d.offset);
      run.call_hook(op, in, d.offset, [&] { sink->on_frame(d.offset, fi); });
      const std::uint64_t delivered = now_ns();
      last_ns = delivered;
      if (d.slot->born_ns != 0) run.counters()[op].latency.record(delivered - d.slot->born_ns);
      add_relaxed(run.counters()[op].frames_in, 1);
      add_relaxed(run.counters()[op].bytes_in, d.slot->bytes);
    }
    if (writer) run.objects().finished_frame(op, d.offset);
    vi.release(group, d.offset);
  }
  if (last_ns != 0) fetch_max_relaxed(run.stream_last_ns, last_ns);
}

/// A worker's thread: its loop, then, if it ended well, one worker fewer for the objects it writes (the
/// last one makes their versions final, so no reader waits on a writer that is gone). A failed writer
/// leaves its horizon where it was: its readers stop with the run instead of reading a version it did not
/// publish.
void worker(run_context& run, std::size_t op, std::uint32_t index, void (*loop)(run_context&, std::size_t)) {
  if (trace::enabled())
    trace::name_this_thread("cpu " + run.plan_of().operators[op].spec->name + " #" + std::to_string(index),
                            static_cast<std::uint32_t>(100 + op));
  bool ended = false;
  run.guarded(op, [&] {
    loop(run, op);
    ended = true;
  });
  if (ended && run.objects().writes(op)) run.objects().worker_done(op);
  spdlog::trace("operator '{}': a worker thread {}", run.plan_of().operators[op].spec->name,
                ended ? "reached its stream's end" : "stopped with the run");
}

}  // namespace

void start_cpu_workers(run_context& run, std::vector<std::thread>& threads) {
  const plan& p = run.plan_of();
  for (std::size_t i = 0; i < p.operators.size(); ++i) {
    const planned_operator& po = p.operators[i];
    if (po.in_kernel) continue;
    for (std::uint32_t w = 0; w < po.workers; ++w) {
      switch (po.entry->info.role) {
        case operator_role::source:
          threads.emplace_back([&run, i, w] { worker(run, i, w, source_worker); });
          break;
        case operator_role::map:
          threads.emplace_back([&run, i, w] { worker(run, i, w, map_worker); });
          break;
        case operator_role::sink:
          threads.emplace_back([&run, i, w] { worker(run, i, w, sink_worker); });
          break;
      }
    }
  }
}

}  // namespace xf
