// --metrics' value, in builds with and without live metrics alike.
#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

#include "framework/launch/metrics_server.hpp"

namespace xf {

std::optional<metrics_address> parse_metrics_address(std::string_view text, std::string& why) {
  const auto fail = [&](const std::string& what) -> std::optional<metrics_address> {
    why = "--metrics '" + std::string(text) + "': " + what +
          " (expected PORT, or ADDRESS:PORT with a numeric IPv4 address: 9464, 127.0.0.1:0, 0.0.0.0:9464)";
    return std::nullopt;
  };
  metrics_address a;
  std::string_view port = text;
  if (const std::size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    std::string host(text.substr(0, colon));
    port = text.substr(colon + 1);
    if (host.empty()) return fail("no address before the port");
    // IPv4 only: civetweb as Debian builds it (and prometheus-cpp with it) has no IPv6.
    in_addr bytes{};
    if (inet_pton(AF_INET, host.c_str(), &bytes) != 1)
      return fail("'" + host + "' is not a numeric IPv4 address");
    a.host = std::move(host);
  }
  if (port.empty() || port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      }))
    return fail("the port is not a number");
  a.port = static_cast<std::uint32_t>(std::stoul(std::string(port)));
  if (a.port > 65535) return fail("the port is above 65535");
  return a;
}

}  // namespace xf
