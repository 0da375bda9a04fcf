// Live metrics over HTTP: prometheus-cpp's registry rendered by its text serializer, served by civetweb.
#include "framework/launch/metrics_server.hpp"

#include <CivetServer.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <spdlog/spdlog.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <vector>

namespace xf {
// Named, not anonymous: metrics_server::impl (declared in the header) holds these types, and a type with
// external linkage may not hold one of an anonymous namespace (g++: -Wsubobject-linkage in a unity build).
namespace metrics_detail {

namespace prom = prometheus;

/// The sinks' latency buckets (seconds): from a GPU pipeline's tens of microseconds unloaded to the
/// seconds a frame waits in a full ring under backpressure.
const std::vector<double>& latency_bounds() {
  static const std::vector<double> bounds{1e-5,   2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2,
                                          2.5e-2, 5e-2,   0.1,  0.25, 0.5,    1,    2.5,  5,      10};
  return bounds;
}

/// A Prometheus counter that follows a total the runtime keeps: it grows by what the total grew since the
/// last look (prometheus-cpp's counters only increment), scaled (ns to seconds).
class followed_counter {
 public:
  followed_counter() = default;
  followed_counter(prom::Counter& counter, double scale) : counter_(&counter), scale_(scale) {}
  void follow(std::uint64_t total) {
    if (counter_ == nullptr || total <= seen_) return;
    counter_->Increment(static_cast<double>(total - seen_) * scale_);
    seen_ = total;
  }

 private:
  prom::Counter* counter_ = nullptr;
  double scale_ = 1;
  std::uint64_t seen_ = 0;
};

/// The response civetweb sends for a handler: status, a plain-text or exposition-format body.
void respond(mg_connection* conn, int status, const char* content_type, const std::string& body) {
  mg_printf(conn,
            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: no-store\r\n"
            "Connection: close\r\n\r\n",
            status, status == 200 ? "OK" : "Service Unavailable", content_type, body.size());
  mg_write(conn, body.data(), body.size());
}

/// One civetweb handler per endpoint, answering GET with what `answer` gives (status and body).
class endpoint : public CivetHandler {
 public:
  using answer_fn = std::function<std::pair<int, std::string>()>;
  endpoint(const char* content_type, answer_fn answer)
      : content_type_(content_type), answer_(std::move(answer)) {}
  bool handleGet(CivetServer*, mg_connection* conn) override {
    std::pair<int, std::string> a;
    try {
      a = answer_();
    } catch (const std::exception& e) {
      a = {503, std::string("error: ") + e.what() + "\n"};
    }
    respond(conn, a.first, a.first == 200 ? content_type_ : "text/plain; charset=utf-8", a.second);
    return true;
  }

 private:
  const char* content_type_;
  answer_fn answer_;
};

/// civetweb reports why it cannot listen through its log callback, on the thread that starts it: the
/// message is kept here for the exception that names the address.
thread_local std::string* startup_log = nullptr;

int on_civetweb_log(const mg_connection*, const char* message) {
  if (startup_log != nullptr) {
    if (!startup_log->empty()) *startup_log += "; ";
    *startup_log += message;
  } else {
    spdlog::debug("metrics server: {}", message);
  }
  return 1;  // handled: civetweb writes nothing itself
}

/// Connects to the server's own port and hangs up: civetweb's listening thread waits on its sockets for
/// 2 s at a time (a constant of the library) before it looks at the stop flag again, so without a knock
/// every stop would take that long. The unspecified address (0.0.0.0) is knocked on at loopback.
void knock(const std::string& host, int port) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(port));
  if (inet_pton(AF_INET, host == "0.0.0.0" ? "127.0.0.1" : host.c_str(), &to.sin_addr) != 1) return;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  (void)::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to);
  ::close(fd);
}

enum class run_phase : int { starting, running, draining, ended };

// The series of one operator, topic, file cache and bridge, added as the first sample names them.
struct operator_series {
  followed_counter frames_in, bytes_in, frames_out, bytes_out, busy, wait, blocked;
  prom::Histogram* latency = nullptr;       ///< CPU sinks
  std::vector<std::uint64_t> latency_seen;  ///< per latency_histogram bucket, folded in so far
};
struct topic_series {
  followed_counter frames, bytes, blocked;
  prom::Gauge* occupancy = nullptr;
  std::map<std::string, prom::Gauge*> lag;  ///< by group
};
struct cache_series {
  followed_counter hits, misses, ahead_hits;
  prom::Gauge* hit_ratio = nullptr;
};
struct bridge_series {
  followed_counter frames, bytes;
};

}  // namespace metrics_detail

using namespace metrics_detail;

struct metrics_server::impl {
  prom::Registry registry;
  // The families, registered once; their series are added as the first sample names them.
  prom::Family<prom::Counter>& op_frames_in;
  prom::Family<prom::Counter>& op_bytes_in;
  prom::Family<prom::Counter>& op_frames_out;
  prom::Family<prom::Counter>& op_bytes_out;
  prom::Family<prom::Counter>& op_busy;
  prom::Family<prom::Counter>& op_wait;
  prom::Family<prom::Counter>& op_blocked;
  prom::Family<prom::Counter>& topic_frames;
  prom::Family<prom::Counter>& topic_bytes;
  prom::Family<prom::Counter>& topic_blocked;
  prom::Family<prom::Gauge>& topic_capacity;
  prom::Family<prom::Gauge>& topic_occupancy;
  prom::Family<prom::Gauge>& consumer_lag;
  prom::Family<prom::Histogram>& sink_latency;
  prom::Family<prom::Counter>& cache_hits;
  prom::Family<prom::Counter>& cache_misses;
  prom::Family<prom::Counter>& cache_ahead_hits;
  prom::Family<prom::Gauge>& cache_hit_ratio;
  prom::Family<prom::Counter>& bridge_frames;
  prom::Family<prom::Counter>& bridge_bytes;
  prom::Family<prom::Gauge>& kernel_phase_share;
  prom::Family<prom::Gauge>& kernel_heartbeat_age;
  prom::Family<prom::Gauge>& run_info;
  prom::Family<prom::Gauge>& run_elapsed;

  std::mutex update_mutex;  // update() and finish(): the monitor thread, then the launcher's
  std::map<std::string, operator_series> operators;
  std::map<std::string, topic_series> topics;
  std::optional<cache_series> cache;
  std::map<std::tuple<std::string, std::uint32_t, bool>, bridge_series> bridges;
  prom::Gauge& elapsed;
  prom::Gauge* heartbeat_age = nullptr;

  // What /healthz and /readyz answer from, written by update() and finish().
  std::atomic<run_phase> phase{run_phase::starting};
  std::atomic<bool> warned{false};  // a failed update was logged
  std::mutex health_mutex;
  std::optional<run_sample::heartbeat> heartbeat;  // guarded by health_mutex
  std::optional<std::string> failure;              // guarded by health_mutex

  endpoint metrics_endpoint, health_endpoint, ready_endpoint;
  std::unique_ptr<CivetServer> server;  // last: stops serving before anything it reads goes
  std::string host, url;
  int port = 0;

  impl(const metrics_address& address, const std::string& topology)
      : op_frames_in(counter("xeflow_operator_input_frames_total", "Frames an operator received")),
        op_bytes_in(
            counter("xeflow_operator_input_bytes_total", "Valid bytes of the frames an operator received")),
        op_frames_out(counter("xeflow_operator_output_frames_total", "Frames an operator published")),
        op_bytes_out(counter("xeflow_operator_output_bytes_total", "Valid bytes an operator published")),
        op_busy(
            counter("xeflow_operator_busy_seconds_total",
                    "Time inside the operator's own code, summed over its threads (or the host executor's "
                    "blocks)")),
        op_wait(counter("xeflow_operator_input_wait_seconds_total",
                        "Time an operator's threads waited for an input frame, summed over them")),
        op_blocked(counter("xeflow_operator_blocked_seconds_total",
                           "Time an operator's threads waited for a free output slot (backpressure)")),
        topic_frames(
            counter("xeflow_topic_frames_total", "Frames published on a topic (void slots excluded)")),
        topic_bytes(counter("xeflow_topic_bytes_total", "Valid bytes published on a topic")),
        topic_blocked(counter("xeflow_topic_blocked_seconds_total",
                              "Time a topic's publishers waited for a free slot (backpressure)")),
        topic_capacity(gauge("xeflow_topic_capacity_frames", "Frames a topic holds in flight")),
        topic_occupancy(gauge("xeflow_topic_occupancy_frames",
                              "Offsets published on a topic and not yet released by every subscriber group")),
        consumer_lag(gauge("xeflow_topic_consumer_lag_frames",
                           "Offsets published on a topic that a subscriber group has not released yet "
                           "(published offset minus released offset; at most the capacity)")),
        sink_latency(
            prom::BuildHistogram()
                .Name("xeflow_sink_latency_seconds")
                .Help("Per-frame latency from the source's publish to a CPU sink's delivery (the sum "
                      "from the runtime's log-linear buckets' midpoints, within 3 %)")
                .Register(registry)),
        cache_hits(
            counter("xeflow_file_cache_hits_total", "File cache pages the GPU file readers found resident")),
        cache_misses(
            counter("xeflow_file_cache_misses_total", "File cache pages the GPU file readers loaded")),
        cache_ahead_hits(
            counter("xeflow_file_cache_readahead_hits_total",
                    "File cache misses served from a block's readahead buffer, without a request")),
        cache_hit_ratio(gauge("xeflow_file_cache_hit_ratio", "File cache hits over hits and misses")),
        bridge_frames(counter("xeflow_bridge_frames_total",
                              "Frames a ranked run's bridge carried between ranks (void ones included)")),
        bridge_bytes(
            counter("xeflow_bridge_bytes_total", "Valid bytes a ranked run's bridge carried between ranks")),
        kernel_phase_share(
            gauge("xeflow_kernel_phase_share",
                  "The GPU kernel's round time by phase (share of its blocks' cycles; at the end of "
                  "a run on the device executor)")),
        kernel_heartbeat_age(
            gauge("xeflow_kernel_heartbeat_age_seconds",
                  "Time since the stalest running block of the GPU kernel showed a heartbeat")),
        run_info(gauge("xeflow_run_info", "The topology this process runs (always 1)")),
        run_elapsed(gauge("xeflow_run_elapsed_seconds", "Time since the run started")),
        elapsed(run_elapsed.Add({})),
        metrics_endpoint("text/plain; version=0.0.4; charset=utf-8", [this] { return render(); }),
        health_endpoint("text/plain; charset=utf-8", [this] { return health(); }),
        ready_endpoint("text/plain; charset=utf-8", [this] { return readiness(); }) {
    run_info.Add({{"topology", topology}}).Set(1);
    // Two threads answer (a scrape and a probe at once); a stalled client is cut off after 2 s, which
    // bounds how long stopping the server at the end of the run can take.
    const std::vector<std::string> options{"listening_ports",    address.str(), "num_threads", "2",
                                           "request_timeout_ms", "2000"};
    CivetCallbacks callbacks;
    callbacks.log_message = on_civetweb_log;
    std::string why;
    startup_log = &why;
    try {
      server = std::make_unique<CivetServer>(options, &callbacks);
    } catch (const std::exception&) {
      // civetweb's exception says only that it could not start; its log said why.
    }
    startup_log = nullptr;
    if (!server)
      throw std::runtime_error("--metrics " + address.str() + ": cannot listen there" +
                               (why.empty() ? std::string() : ": " + why));
    const std::vector<int> ports = server->getListeningPorts();
    if (ports.empty() || ports.front() <= 0)
      throw std::runtime_error("--metrics " + address.str() + ": civetweb reports no port it listens on");
    host = address.host;
    port = ports.front();
    url = "http://" + host + ":" + std::to_string(port) + "/metrics";
    server->addHandler("/metrics", metrics_endpoint);
    server->addHandler("/healthz", health_endpoint);
    server->addHandler("/readyz", ready_endpoint);
  }
  ~impl() {
    if (!server) return;
    // Knocks until civetweb has stopped (knock says why); a knock before the stop flag is a connection
    // that closes at once.
    std::atomic<bool> stopped{false};
    std::thread knocker([&] {
      while (!stopped.load()) {
        knock(host, port);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
    server->close();
    stopped.store(true);
    knocker.join();
  }

  prom::Family<prom::Counter>& counter(const char* name, const char* help) {
    return prom::BuildCounter().Name(name).Help(help).Register(registry);
  }
  prom::Family<prom::Gauge>& gauge(const char* name, const char* help) {
    return prom::BuildGauge().Name(name).Help(help).Register(registry);
  }

  std::pair<int, std::string> render() const {
    return {200, prom::TextSerializer().Serialize(registry.Collect())};
  }

  std::pair<int, std::string> health() {
    std::lock_guard lock(health_mutex);
    if (failure) return {503, "failed: " + failure->substr(0, failure->find('\n')) + "\n"};
    if (heartbeat && heartbeat->age_seconds > heartbeat->stale_seconds)
      return {503, "the GPU kernel's heartbeat is stale: " + std::to_string(heartbeat->age_seconds) + " s\n"};
    return {200, "ok\n"};
  }

  std::pair<int, std::string> readiness() const {
    switch (phase.load()) {
      case run_phase::starting:
        return {503, "starting\n"};
      case run_phase::running:
        return {200, "ready\n"};
      case run_phase::draining:
        return {503, "draining\n"};
      case run_phase::ended:
        break;
    }
    return {503, "ended\n"};
  }

  operator_series& operator_of(const std::string& name) {
    auto [it, added] = operators.try_emplace(name);
    if (added) {
      const prom::Labels l{{"operator", name}};
      operator_series& o = it->second;
      o.frames_in = {op_frames_in.Add(l), 1};
      o.bytes_in = {op_bytes_in.Add(l), 1};
      o.frames_out = {op_frames_out.Add(l), 1};
      o.bytes_out = {op_bytes_out.Add(l), 1};
      o.busy = {op_busy.Add(l), 1e-9};
      o.wait = {op_wait.Add(l), 1e-9};
      o.blocked = {op_blocked.Add(l), 1e-9};
    }
    return it->second;
  }

  topic_series& topic_of(const std::string& name, std::uint32_t capacity) {
    auto [it, added] = topics.try_emplace(name);
    if (added) {
      const prom::Labels l{{"topic", name}};
      topic_series& t = it->second;
      t.frames = {topic_frames.Add(l), 1};
      t.bytes = {topic_bytes.Add(l), 1};
      t.blocked = {topic_blocked.Add(l), 1e-9};
      topic_capacity.Add(l).Set(capacity);
    }
    return it->second;
  }

  cache_series& cache_of() {
    if (!cache) {
      cache.emplace();
      cache->hits = {cache_hits.Add({}), 1};
      cache->misses = {cache_misses.Add({}), 1};
      cache->ahead_hits = {cache_ahead_hits.Add({}), 1};
      cache->hit_ratio = &cache_hit_ratio.Add({});
    }
    return *cache;
  }
  void follow_cache(std::uint64_t hits, std::uint64_t misses, std::uint64_t ahead_hits) {
    cache_series& c = cache_of();
    c.hits.follow(hits);
    c.misses.follow(misses);
    c.ahead_hits.follow(ahead_hits);
    if (hits + misses > 0) c.hit_ratio->Set(static_cast<double>(hits) / static_cast<double>(hits + misses));
  }

  void follow_bridges(const std::vector<bridge_stats>& all) {
    for (const bridge_stats& b : all) {
      auto [it, added] = bridges.try_emplace({b.topic, b.peer, b.sends});
      if (added) {
        const prom::Labels l{{"topic", b.topic},
                             {"peer", std::to_string(b.peer)},
                             {"direction", b.sends ? "send" : "receive"}};
        it->second.frames = {bridge_frames.Add(l), 1};
        it->second.bytes = {bridge_bytes.Add(l), 1};
      }
      it->second.frames.follow(b.frames);
      it->second.bytes.follow(b.bytes);
    }
  }

  /// Folds a sink's latency buckets into its histogram: what each bucket gained since the last sample, at
  /// the first bound at or above the bucket's value.
  void follow_latency(const std::string& name, operator_series& o, const std::vector<std::uint64_t>& counts) {
    if (o.latency == nullptr) {
      o.latency = &sink_latency.Add({{"sink", name}}, latency_bounds());
      o.latency_seen.assign(latency_histogram::buckets, 0);
    }
    const std::vector<double>& bounds = latency_bounds();
    std::vector<double> increments(bounds.size() + 1, 0.0);
    double sum = 0;
    bool any = false;
    for (std::size_t b = 0; b < counts.size() && b < o.latency_seen.size(); ++b) {
      if (counts[b] <= o.latency_seen[b]) continue;
      const std::uint64_t added = counts[b] - o.latency_seen[b];
      o.latency_seen[b] = counts[b];
      const double seconds = static_cast<double>(latency_histogram::bucket_value(b)) * 1e-9;
      const auto at = std::lower_bound(bounds.begin(), bounds.end(), seconds) - bounds.begin();
      increments[static_cast<std::size_t>(at)] += static_cast<double>(added);
      sum += seconds * static_cast<double>(added);
      any = true;
    }
    if (any) o.latency->ObserveMultiple(increments, sum);
  }

  void update(const run_sample& s) {
    std::lock_guard lock(update_mutex);
    elapsed.Set(s.elapsed_seconds);
    for (const run_sample::operator_sample& so : s.operators) {
      operator_series& o = operator_of(so.name);
      if (so.frames_live) {
        o.frames_in.follow(so.frames_in);
        o.bytes_in.follow(so.bytes_in);
        o.frames_out.follow(so.frames_out);
        o.bytes_out.follow(so.bytes_out);
      }
      o.busy.follow(so.busy_ns);
      o.wait.follow(so.input_wait_ns);
      o.blocked.follow(so.blocked_ns);
      if (!so.latency.empty()) follow_latency(so.name, o, so.latency);
    }
    for (const run_sample::topic_sample& st : s.topics) {
      topic_series& t = topic_of(st.name, st.capacity);
      t.frames.follow(st.frames);
      t.bytes.follow(st.bytes);
      t.blocked.follow(st.blocked_ns);
      if (!st.index_sampled) continue;
      if (t.occupancy == nullptr) t.occupancy = &topic_occupancy.Add({{"topic", st.name}});
      t.occupancy->Set(static_cast<double>(st.occupancy));
      for (const run_sample::group_sample& g : st.groups) {
        prom::Gauge*& lag = t.lag[g.name];
        if (lag == nullptr) lag = &consumer_lag.Add({{"topic", st.name}, {"group", g.name}});
        lag->Set(static_cast<double>(g.lag));
      }
    }
    if (s.file_cache) follow_cache(s.file_cache->hits, s.file_cache->misses, s.file_cache->ahead_hits);
    follow_bridges(s.bridges);
    if (s.kernel_heartbeat) {
      if (heartbeat_age == nullptr) heartbeat_age = &kernel_heartbeat_age.Add({});
      heartbeat_age->Set(s.kernel_heartbeat->age_seconds);
    }
    {
      std::lock_guard health_lock(health_mutex);
      heartbeat = s.kernel_heartbeat;
      if (s.failure) failure = s.failure;
    }
    if (phase.load() != run_phase::ended) phase.store(s.draining ? run_phase::draining : run_phase::running);
  }

  void finish(const run_stats& stats) {
    std::lock_guard lock(update_mutex);
    for (const operator_stats& so : stats.operators) {
      operator_series& o = operator_of(so.name);
      o.frames_in.follow(so.frames_in);
      o.bytes_in.follow(so.bytes_in);
      o.frames_out.follow(so.frames_out);
      o.bytes_out.follow(so.bytes_out);
      o.busy.follow(so.busy_ns);
      o.wait.follow(so.input_wait_ns);
      o.blocked.follow(so.blocked_ns);
    }
    for (const topic_stats& st : stats.topics) {
      topic_series& t = topic_of(st.name, st.capacity);
      t.frames.follow(st.frames);
      t.bytes.follow(st.bytes);
      t.blocked.follow(st.blocked_ns);
    }
    if (stats.file_cache)
      follow_cache(stats.file_cache->hits, stats.file_cache->misses, stats.file_cache->ahead_hits);
    follow_bridges(stats.bridges);
    if (stats.kernel) {
      const kernel_breakdown& k = *stats.kernel;
      const double total = static_cast<double>(k.subscribe + k.schedule + k.compute + k.publish + k.idle);
      const std::pair<const char*, std::uint64_t> phases[] = {{"subscribe", k.subscribe},
                                                              {"schedule", k.schedule},
                                                              {"compute", k.compute},
                                                              {"publish", k.publish},
                                                              {"idle", k.idle}};
      if (total > 0)
        for (const auto& [name, cycles] : phases)
          kernel_phase_share.Add({{"phase", name}}).Set(static_cast<double>(cycles) / total);
    }
    {
      std::lock_guard health_lock(health_mutex);
      heartbeat.reset();  // the kernel has ended
      if (stats.status == run_status::failed) failure = stats.error;
    }
    phase.store(run_phase::ended);
  }
};

bool metrics_available() noexcept {
  return true;
}

metrics_server::metrics_server(const metrics_address& address, const std::string& topology)
    : impl_(std::make_unique<impl>(address, topology)) {}
metrics_server::~metrics_server() = default;
std::string metrics_server::url() const {
  return impl_->url;
}
// The run goes on whatever the metrics do: a failure here (prometheus-cpp throws on what it cannot take)
// is logged once and the metrics stay as they were.
void metrics_server::update(const run_sample& sample) {
  try {
    impl_->update(sample);
  } catch (const std::exception& e) {
    if (!impl_->warned.exchange(true)) spdlog::warn("live metrics not updated: {}", e.what());
  }
}
void metrics_server::finish(const run_stats& stats) {
  try {
    impl_->finish(stats);
  } catch (const std::exception& e) {
    if (!impl_->warned.exchange(true)) spdlog::warn("live metrics not updated at the end: {}", e.what());
  }
}

}  // namespace xf
