// io_service: the I/O threads' loop, chunking, answers, and the watchdog.
#include "framework/files/io_service.hpp"

#include <algorithm>
#include <string>

#include "framework/core/backoff.hpp"
#include "framework/core/fault_injection.hpp"
#include "framework/core/trace.hpp"

namespace xf {
namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

io_service::io_service(const file_table& files, request_ring_view ring, request_slots_view slots,
                       site_of_request site_of, io_service_options options)
    : files_(files),
      ring_(ring),
      slots_(slots),
      site_of_(std::move(site_of)),
      options_(options),
      progress_(new progress[slots.slots.size()]),
      counters_(new thread_counters[options.threads]) {
  XF_EXPECTS(options_.threads > 0, "at least one I/O thread");
  XF_EXPECTS(options_.chunk_bytes > 0 && options_.chunk_bytes % 4096 == 0, "chunks of whole 4 KiB blocks");
  XF_EXPECTS(slots_.staging_bytes > 0 && slots_.staging_bytes % 4096 == 0, "staging of whole 4 KiB blocks");
  XF_EXPECTS(slots_.slots.size() <= UINT32_MAX, "slot numbers fit the ring's cells");
}

io_service::~io_service() {
  stop();
}

void io_service::start() {
  XF_EXPECTS(threads_.empty(), "io_service::start once");
  if (trace::enabled()) trace_read_ = trace::intern("read", "io", "bytes");
  for (unsigned t = 0; t < options_.threads; ++t) threads_.emplace_back([this, t] { run(t); });
}

void io_service::stop() {
  stopping_.store(true, std::memory_order_relaxed);
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  // Nothing may wait on an answer that no thread will give: what is rung or half read is answered now.
  std::uint32_t slot = 0;
  while (try_pop_request(ring_, &slot)) answer(slot, slots_.slots[slot].request.seq, file_status::stopped, 0);
  for (std::size_t s = 0; s < slots_.slots.size(); ++s) {
    const std::uint64_t seq = progress_[s].seq.load(std::memory_order_acquire);
    if (seq != 0) answer(static_cast<std::uint32_t>(s), seq, file_status::stopped, 0);
  }
  std::lock_guard lock(chunks_mutex_);
  chunks_.clear();
}

void io_service::run(unsigned thread) {
  thread_counters& counters = counters_[thread];
  if (trace::enabled()) trace::name_this_thread("file cache I/O #" + std::to_string(thread), 6);
  backoff wait;
  while (!stopping_.load(std::memory_order_relaxed)) {
    chunk c{};
    std::uint32_t slot = 0;
    if (take_chunk(c)) {
      serve(c, counters);
    } else if (try_pop_request(ring_, &slot)) {
      begin(slot, counters);
    } else {
      wait.pause();
      continue;
    }
    wait = backoff();
  }
}

bool io_service::take_chunk(chunk& c) {
  std::lock_guard lock(chunks_mutex_);
  if (chunks_.empty()) return false;
  c = chunks_.front();
  chunks_.pop_front();
  return true;
}

std::uint32_t io_service::chunks_of(const file_request& r) const {
  return static_cast<std::uint32_t>(
      std::max<std::uint64_t>(1, (r.bytes + options_.chunk_bytes - 1) / options_.chunk_bytes));
}

std::string io_service::malformed(const file_request& r) const {
  if (r.file >= files_.count()) return "a request names file id " + std::to_string(r.file) + ", not opened";
  const opened_file& f = files_.file(r.file);
  if (r.offset > f.size || r.bytes > f.size - r.offset) {
    return "file '" + f.path + "': a request for " + std::to_string(r.bytes) + " bytes at byte offset " +
           std::to_string(r.offset) + " runs past its size (" + std::to_string(f.size) + " bytes)";
  }
  if (r.bytes > slots_.staging_bytes) {
    return "file '" + f.path + "': a request for " + std::to_string(r.bytes) +
           " bytes is larger than a slot's " + std::to_string(slots_.staging_bytes) + " bytes of staging";
  }
  if (r.offset % f.alignment != 0) {
    return "file '" + f.path + "': a request at byte offset " + std::to_string(r.offset) +
           " is not aligned to the file's " + std::to_string(f.alignment) + " bytes";
  }
  return "";
}

void io_service::begin(std::uint32_t slot, thread_counters& counters) {
  XF_EXPECTS(slot < slots_.slots.size(), "a rung slot number inside the slots");
  counters.requests.fetch_add(1, std::memory_order_relaxed);
  const file_request r = slots_.slots[slot].request;  // the ring's acquire made it visible
  progress& p = progress_[slot];
  if (failed_.load(std::memory_order_acquire)) {
    complete_request(slots_.slots[slot], r.seq, file_status::stopped, 0);
    return;
  }
  if (const std::string why = malformed(r); !why.empty()) {
    fail(run_error(site_of_(r.op, r.frame_offset),
                   why));  // first: a reader that sees the answer finds the error
    complete_request(slots_.slots[slot], r.seq, file_status::io_error, 0);
    return;
  }
  const std::uint32_t n = chunks_of(r);
  p.chunks_left.store(n, std::memory_order_relaxed);
  p.status.store(static_cast<std::int32_t>(file_status::ok), std::memory_order_relaxed);
  p.started_ns.store(now_ns(), std::memory_order_relaxed);
  p.seq.store(r.seq, std::memory_order_release);  // the watchdog and stop() look at slots with a seq
  if (n > 1) {
    std::lock_guard lock(chunks_mutex_);
    for (std::uint32_t i = 1; i < n; ++i) chunks_.push_back({r.seq, slot, i});
  }
  serve({r.seq, slot, 0}, counters);
}

void io_service::serve(chunk c, thread_counters& counters) {
  progress& p = progress_[c.slot];
  if (p.seq.load(std::memory_order_acquire) != c.seq) return;  // answered already (watchdog, stop)
  const file_request r = slots_.slots[c.slot].request;  // a copy: once answered, the reader may reuse it
  const std::uint64_t first = std::uint64_t{c.index} * options_.chunk_bytes;
  const std::uint64_t bytes = std::min(options_.chunk_bytes, r.bytes - first);
  std::byte* dst = slots_.staging + std::uint64_t{c.slot} * slots_.staging_bytes + first;
  const std::int64_t t0 = now_ns();
  read_outcome out;
  try {
    if (!inject::armed(inject::site::cache_read) || !injected_read(r, c, first, bytes, out))
      out = files_.read(r.file, r.offset + first, bytes, dst, slots_.staging_bytes - first);
  } catch (const std::exception& e) {
    // A read the table refuses (a chunk off the file's O_DIRECT alignment): the run's error, not this
    // thread's end, and the reader still gets its answer.
    fail(run_error(site_of_(r.op, r.frame_offset), "file '" + files_.file(r.file).path + "': " + e.what()));
    out = {file_status::io_error, 0, 0};
  }
  const std::int64_t t1 = now_ns();
  counters.busy_ns.fetch_add(static_cast<std::uint64_t>(t1 - t0), std::memory_order_relaxed);
  // --trace: one chunk in trace::sample_every() on this thread's track.
  if (trace::enabled() && counters.chunks.load(std::memory_order_relaxed) % trace::sample_every() == 0)
    trace::span(trace_read_, static_cast<std::uint64_t>(t0), static_cast<std::uint64_t>(t1), bytes, true);
  counters.chunks.fetch_add(1, std::memory_order_relaxed);
  counters.bytes.fetch_add(out.bytes, std::memory_order_relaxed);
  if (out.status != file_status::ok) {
    std::int32_t ok = static_cast<std::int32_t>(file_status::ok);
    p.status.compare_exchange_strong(ok, static_cast<std::int32_t>(out.status), std::memory_order_relaxed);
    if (out.error != 0 || out.status != file_status::io_error) {  // a refused read was reported above
      fail(files_.failure(r.file, out, r.offset + first, site_of_(r.op, r.frame_offset)));
    }
  }
  // acq_rel: the thread that reads the last chunk sees every other chunk's status before it answers.
  if (p.chunks_left.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    const auto status = static_cast<file_status>(p.status.load(std::memory_order_relaxed));
    answer(c.slot, c.seq, status, status == file_status::ok ? r.bytes : 0);
  }
}

bool io_service::injected_read(const file_request& r, chunk c, std::uint64_t first, std::uint64_t bytes,
                               read_outcome& out) {
  const std::uint64_t from = r.offset + first;
  const std::optional<inject::fired> fault = inject::fires(inject::site::cache_read, from, from + bytes,
                                                           site_of_(r.op, r.frame_offset).operator_name);
  if (!fault) return false;
  const std::uint64_t at = fault->at - from;
  switch (fault->what) {
    case inject::kind::eio:
      out = {file_status::io_error, at, EIO};
      return true;
    case inject::kind::short_:
      out = {file_status::truncated, at, 0};  // the file seems to end at the injected byte
      return true;
    default:
      break;
  }
  // A hung disk: the read returns once nobody waits for it any more (the watchdog answered the request,
  // or the service stops); whoever answered named the failure.
  progress& p = progress_[c.slot];
  while (!stopping_.load(std::memory_order_relaxed) && p.seq.load(std::memory_order_acquire) == c.seq)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  out = {file_status::stopped, 0, 0};
  return true;
}

void io_service::answer(std::uint32_t slot, std::uint64_t seq, file_status status, std::uint64_t bytes) {
  progress& p = progress_[slot];
  std::uint64_t expected = seq;
  // Rung but never taken (stop() drains the ring): no progress to claim.
  if (!p.seq.compare_exchange_strong(expected, 0, std::memory_order_acq_rel) && expected != 0) return;
  if (expected == 0 && status != file_status::stopped) return;  // the watchdog or stop() answered first
  p.started_ns.store(0, std::memory_order_relaxed);
  complete_request(slots_.slots[slot], seq, status, bytes);
}

void io_service::fail(run_error error) {
  std::lock_guard lock(error_mutex_);
  if (!error_) error_.emplace(std::move(error));
  failed_.store(true, std::memory_order_release);
}

std::optional<run_error> io_service::poll() {
  if (options_.watchdog.count() > 0) {
    const std::int64_t now = now_ns();
    const std::int64_t limit =
        std::chrono::duration_cast<std::chrono::nanoseconds>(options_.watchdog).count();
    for (std::size_t s = 0; s < slots_.slots.size(); ++s) {
      progress& p = progress_[s];
      const std::uint64_t seq = p.seq.load(std::memory_order_acquire);
      const std::int64_t started = p.started_ns.load(std::memory_order_relaxed);
      if (seq == 0 || started == 0 || now - started <= limit) continue;
      const file_request& r = slots_.slots[s].request;
      const opened_file& f = files_.file(r.file);
      fail(run_error(site_of_(r.op, r.frame_offset),
                     "file '" + f.path + "': read of " + std::to_string(r.bytes) + " bytes at byte offset " +
                         std::to_string(r.offset) + " has not completed after " +
                         std::to_string((now - started) / 1'000'000) + " ms (runtime.watchdog_ms)"));
      answer(static_cast<std::uint32_t>(s), seq, file_status::timed_out, 0);
    }
  }
  std::lock_guard lock(error_mutex_);
  return error_;
}

std::vector<io_thread_stats> io_service::stats() const {
  std::vector<io_thread_stats> out(options_.threads);
  for (unsigned t = 0; t < options_.threads; ++t) {
    out[t] = {counters_[t].requests.load(std::memory_order_relaxed),
              counters_[t].chunks.load(std::memory_order_relaxed),
              counters_[t].bytes.load(std::memory_order_relaxed),
              counters_[t].busy_ns.load(std::memory_order_relaxed)};
  }
  return out;
}

}  // namespace xf
