// Live metrics of a run over HTTP (xeflow-run --metrics): /metrics in the Prometheus text format, built with
// prometheus-cpp's registry, metric types and text serializer, and /healthz and /readyz beside it. civetweb
// serves all three: it is the HTTP server prometheus-cpp's own exposer runs on, and that exposer takes no
// handlers but its own. Fed by the run's monitor thread (run_options::on_sample) while the run goes and by
// the run's stats at its end; serves until it is destroyed, after the stats are printed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "framework/runtime/run_sample.hpp"
#include "framework/runtime/run_stats.hpp"

namespace xf {

/// Where the metrics are served. Loopback unless another address is given explicitly.
struct metrics_address {
  std::string host = "127.0.0.1";  ///< a numeric IPv4 address
  std::uint32_t port = 0;          ///< 0: any free port
  std::string str() const { return host + ":" + std::to_string(port); }
};

/// --metrics' value: "PORT" (127.0.0.1), or "ADDRESS:PORT" with a numeric IPv4 address ("0.0.0.0:9464"
/// serves every interface). Port 0: any free port. Nullopt, with `why` saying what is wrong, for anything
/// else (host names included: the address is bound as given).
std::optional<metrics_address> parse_metrics_address(std::string_view text, std::string& why);

/// Whether this build serves live metrics (meson found prometheus-cpp and civetweb: option `metrics`).
bool metrics_available() noexcept;

class metrics_server {
 public:
  /// Listens on `address` and serves from now on, on civetweb's threads. Throws std::runtime_error naming
  /// the address when it cannot listen there (in use, not an address of this machine), or when the build
  /// has no live metrics. `topology` labels xeflow_run_info.
  metrics_server(const metrics_address& address, const std::string& topology);
  /// Stops serving: returns once no request is being answered (a stalled client is cut off after 2 s).
  ~metrics_server();
  metrics_server(const metrics_server&) = delete;
  metrics_server& operator=(const metrics_server&) = delete;

  /// "http://ADDRESS:PORT/metrics", with the port chosen for port 0.
  std::string url() const;
  /// A sample of the running topology: the first makes /readyz ready (every operator has started).
  /// Thread-safe.
  void update(const run_sample& sample);
  /// The run ended: adds what only its end knows (the device kernel's operators, its round phases and
  /// file cache, the bridges' totals) from its stats, and /readyz says so. Thread-safe.
  void finish(const run_stats& stats);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace xf
