// The CPU operators' workers.
#include "framework/runtime/cpu_workers.hpp"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <string>
#include <system_error>

#include "framework/core/fault_injection.hpp"
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

/// An armed worker fault at this frame (fault_injection.hpp): the thread exits here, mid-frame, without
/// publishing or releasing anything, as a thread killed by a bug would; worker() must notice.
void die_if_injected(const run_context& run, std::size_t op, std::uint64_t offset) {
  if (inject::fires(inject::site::worker, offset, offset + 1, run.plan_of().operators[op].spec->name))
    pthread_exit(nullptr);
}

void source_worker(run_context& run, std::size_t op, std::uint64_t& at) {
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
    at = t.offset;
    run.count_blocked(op, out, blocked);
    frame_out f{t.data, v.frame_bytes, 0, element, t.frame, run.parts_read(out)};
    open_columnar(columnar, f);
    if (writer) run.objects().begin_frame(t.offset);
    const bool more = run.call_hook(op, out, t.offset, [&] { return source->produce(t.offset, f); });
    if (writer) run.objects().finished_frame(op, t.offset);
    if (inject::armed(inject::site::worker)) die_if_injected(run, op, t.offset);
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

void map_worker(run_context& run, std::size_t op, std::uint64_t& at) {
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
    at = d.offset;
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
    if (inject::armed(inject::site::worker)) die_if_injected(run, op, d.offset);
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

void sink_worker(run_context& run, std::size_t op, std::uint64_t& at) {
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
    at = d.offset;
    if (run.ledger != nullptr) record(run, in, group, d);
    if (!d.is_void()) {
      frame_in fi{d.data(vi), d.slot->bytes, element};
      if (writer) run.objects().begin_frame(d.offset);
      run.call_hook(op, in, d.offset, [&] { sink->on_frame(d.offset, fi); });
      if (inject::armed(inject::site::worker)) die_if_injected(run, op, d.offset);
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
void worker(run_context& run, std::size_t op, std::uint32_t index,
            void (*loop)(run_context&, std::size_t, std::uint64_t&)) {
  if (trace::enabled())
    trace::name_this_thread("cpu " + run.plan_of().operators[op].spec->name + " #" + std::to_string(index),
                            static_cast<std::uint32_t>(100 + op));
  // A thread that leaves its loop neither by returning nor by an exception the guard handles was ended
  // from inside (pthread_exit, a forced unwind): the frame it held is never published, so the run would
  // wait for it forever. The run fails instead, naming the frame.
  struct exit_watch {
    run_context& run;
    std::size_t op;
    std::uint32_t index;
    std::uint64_t at = ~std::uint64_t{0};  // the frame the loop holds (its last, between frames)
    bool left = false;
    ~exit_watch() {
      if (left) return;
      const std::size_t topic = run.error_topic(op);
      run.control().fail(run_error(
          run.site(op, topic, at == ~std::uint64_t{0} ? std::nullopt : std::optional<std::uint64_t>(at)),
          "worker thread #" + std::to_string(index) +
              " exited in the middle of its frame without publishing it (a thread ended from inside)"));
    }
  } watch{run, op, index};
  bool ended = false;
  run.guarded(op, [&] {
    loop(run, op, watch.at);
    ended = true;
  });
  watch.left = true;
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
    const auto loop = po.entry->info.role == operator_role::source ? source_worker
                      : po.entry->info.role == operator_role::map  ? map_worker
                                                                   : sink_worker;
    for (std::uint32_t w = 0; w < po.workers; ++w)
      start_run_thread(threads, fault_site{po.spec->name, {}, {}},
                       "worker thread " + std::to_string(w + 1) + " of " + std::to_string(po.workers) +
                           " (its threads: " + std::to_string(po.spec->threads) + ")",
                       [&run, i, w, loop] { worker(run, i, w, loop); });
  }
}

void start_run_thread(std::vector<std::thread>& threads, const fault_site& site, const std::string& which,
                      std::function<void()> body) {
  try {
    const std::uint64_t n = threads.size();
    if (inject::armed(inject::site::thread_create) && inject::fires(inject::site::thread_create, n, n + 1))
      throw std::system_error(EAGAIN, std::generic_category(), "injected fault thread_create:again");
    threads.emplace_back(std::move(body));
  } catch (const std::system_error& e) {
    // The threads already started stop with the run (the caller fails it with this error).
    throw run_error(site, "cannot create its " + which + ": " + e.code().message() +
                              " (the system's limit on threads or memory; lower the setting)");
  }
}

}  // namespace xf
