// Stands in for metrics_server.cpp in builds without prometheus-cpp or civetweb: no live metrics.
#include <stdexcept>

#include "framework/launch/metrics_server.hpp"

namespace xf {

struct metrics_server::impl {};

bool metrics_available() noexcept {
  return false;
}

metrics_server::metrics_server(const metrics_address&, const std::string&) {
  throw std::runtime_error(
      "--metrics: this build has no live metrics (it was configured without prometheus-cpp and civetweb: "
      "install prometheus-cpp-dev and libcivetweb-dev and configure again, meson option metrics)");
}
metrics_server::~metrics_server() = default;
std::string metrics_server::url() const {
  return {};
}
void metrics_server::update(const run_sample&) {}
void metrics_server::finish(const run_stats&) {}

}  // namespace xf
