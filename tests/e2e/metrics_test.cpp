// Live metrics end to end: xeflow-run --metrics serves /metrics, /healthz and /readyz while a long run on
// the host executor streams; scraped over HTTP (libcurl) a few times, its counters rise, every consumer lag
// stays within its ring, and an interrupt still drains. Bad addresses and ports in use are refused before
// anything runs; a build without live metrics refuses --metrics.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/run_checks.hpp"
#include "tests/support/sanitizer.hpp"
#include "tests/support/subprocess.hpp"

#if XF_TEST_METRICS
#include <curl/curl.h>
#endif

using namespace xf::test;
using namespace std::chrono_literals;

namespace {

/// How long the child may take to come up or wind down; the run itself takes a few seconds.
const std::chrono::milliseconds deadline = xf::test::under_sanitizer ? 60s : 20s;

std::vector<std::string> long_run(const std::string& metrics) {
  return {xeflow_run(), (source_root() / "topologies/pingpong.yaml").string(),
          "--host",     "-q",
          "--stats",    "json",
          "--set",      "operators.source.params.total_bytes=1TiB",
          "--metrics",  metrics};
}

/// A socket listening on a free loopback port: what a port in use looks like.
class listening_socket {
 public:
  listening_socket() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    REQUIRE(fd_ >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof a;
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd_, 1) == 0);
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &length) == 0);
    port_ = ntohs(a.sin_port);
  }
  ~listening_socket() { ::close(fd_); }
  listening_socket(const listening_socket&) = delete;
  listening_socket& operator=(const listening_socket&) = delete;
  int port() const noexcept { return port_; }

 private:
  int fd_;
  int port_ = 0;
};

}  // namespace

TEST_CASE("metrics.bad_address_or_port_in_use_is_refused") {
  for (const std::string bad : {"not-an-address", "127.0.0.1:70000", "localhost:9464", "1.2.3:80"}) {
    CAPTURE(bad);
    const process_result r = run_process(long_run(bad), deadline);
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--metrics '" + bad + "'") != std::string::npos);
    CHECK(r.out.empty());  // refused before the run: no stats
  }
#if XF_TEST_METRICS
  const listening_socket taken;
  const std::string address = "127.0.0.1:" + std::to_string(taken.port());
  const process_result r = run_process(long_run(address), deadline);
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--metrics " + address + ": cannot listen there") != std::string::npos);
  CHECK(r.err.find("in use") != std::string::npos);
  CHECK(r.out.empty());
#else
  const process_result r = run_process(long_run("127.0.0.1:0"), deadline);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("built without live metrics") != std::string::npos);
  MESSAGE(
      "skipped the port-in-use case: this build has no live metrics (prometheus-cpp-dev, libcivetweb-dev)");
#endif
}

#if !XF_TEST_METRICS
TEST_CASE("metrics.scraped_while_the_run_streams") {
  MESSAGE(
      "skipped: this build has no live metrics, or no libcurl to scrape them with (prometheus-cpp-dev, "
      "libcivetweb-dev, libcurl4-openssl-dev)");
}
#endif

#if XF_TEST_METRICS
namespace {

struct http_reply {
  long status = 0;
  std::string body;
};

std::size_t append_body(char* data, std::size_t size, std::size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

/// GET `url` with libcurl (5 s at most); status 0 when nothing answered.
http_reply http_get(const std::string& url) {
  http_reply reply;
  CURL* curl = curl_easy_init();
  REQUIRE(curl != nullptr);
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 5000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply.body);
  if (curl_easy_perform(curl) == CURLE_OK) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply.status);
  curl_easy_cleanup(curl);
  return reply;
}

/// One sample line of the Prometheus text format: name{label="value",...} number.
struct series {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

/// Every sample line of an exposition, checking each line's form on the way (prometheus-cpp writes no
/// escapes in our label values: names of operators, topics and groups).
std::vector<series> parse_exposition(const std::string& text) {
  std::vector<series> all;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    CAPTURE(line);
    series s;
    const std::size_t brace = line.find('{'), space = line.rfind(' ');
    REQUIRE(space != std::string::npos);
    s.name = line.substr(0, std::min(brace, space));
    if (brace != std::string::npos) {
      const std::size_t close = line.find('}', brace);
      REQUIRE(close != std::string::npos);
      std::string body = line.substr(brace + 1, close - brace - 1);
      for (std::size_t at = 0; at < body.size();) {
        const std::size_t eq = body.find("=\"", at), end = body.find('"', eq + 2);
        REQUIRE(eq != std::string::npos);
        REQUIRE(end != std::string::npos);
        s.labels[body.substr(at, eq - at)] = body.substr(eq + 2, end - eq - 2);
        at = end + 2;  // past '",'
      }
    }
    const std::string number = line.substr(space + 1);
    s.value = number == "+Inf" ? 1e300 : std::stod(number);
    CHECK(s.name.rfind("xeflow_", 0) == 0);
    all.push_back(std::move(s));
  }
  return all;
}

/// The value of the one series `name` with (at least) `labels`.
double value_of(const std::vector<series>& all, const std::string& name,
                const std::map<std::string, std::string>& labels = {}) {
  const series* found = nullptr;
  for (const series& s : all) {
    if (s.name != name) continue;
    bool match = true;
    for (const auto& [k, v] : labels) match = match && s.labels.count(k) && s.labels.at(k) == v;
    if (!match) continue;
    REQUIRE_MESSAGE(found == nullptr, "one series " << name);
    found = &s;
  }
  REQUIRE_MESSAGE(found != nullptr, "a series " << name);
  return found->value;
}

/// The URL the child prints on stderr ("metrics: http://127.0.0.1:NNNN/metrics"), or "" by the deadline.
std::string metrics_url(const child_process& child) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    const std::string err = child.err_so_far();
    const std::size_t at = err.find("metrics: http://");
    const std::size_t end = err.find('\n', at);
    if (at != std::string::npos && end != std::string::npos) return err.substr(at + 9, end - at - 9);
    std::this_thread::sleep_for(20ms);
  }
  return {};
}

}  // namespace

TEST_CASE("metrics.scraped_while_the_run_streams") {
  REQUIRE(curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK);
  child_process child(long_run("127.0.0.1:0"));
  const std::string url = metrics_url(child);
  INFO(child.err_so_far());
  REQUIRE(url.rfind("http://127.0.0.1:", 0) == 0);
  REQUIRE(url.size() > 8);
  REQUIRE(url.substr(url.size() - 8) == "/metrics");
  const std::string base = url.substr(0, url.size() - 8);

  // Not ready while the run sets up ("starting"), ready once every operator has started.
  http_reply ready;
  for (const auto until = std::chrono::steady_clock::now() + deadline;
       std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(50ms)) {
    ready = http_get(base + "/readyz");
    if (ready.status == 200) break;
    CHECK(ready.status == 503);
    CHECK(ready.body == "starting\n");
  }
  REQUIRE(ready.status == 200);
  CHECK(ready.body == "ready\n");
  const http_reply health = http_get(base + "/healthz");
  CHECK(health.status == 200);
  CHECK(health.body == "ok\n");
  CHECK(http_get(base + "/nothing-here").status == 404);

  std::vector<std::vector<series>> scrapes;
  for (int i = 0; i < 3; ++i) {
    if (i > 0) std::this_thread::sleep_for(400ms);
    const http_reply r = http_get(url);
    REQUIRE(r.status == 200);
    scrapes.push_back(parse_exposition(r.body));
  }
  const std::vector<series>& first = scrapes.front();
  const std::vector<series>& last = scrapes.back();
  // The counters rise while the stream goes: the CPU sink's and source's, the host executor's kernel
  // operator (the round's counters, read live), the topics', the sink's latency histogram.
  for (const auto& rising : std::vector<std::pair<std::string, std::map<std::string, std::string>>>{
           {"xeflow_operator_input_frames_total", {{"operator", "verify"}}},
           {"xeflow_operator_input_bytes_total", {{"operator", "verify"}}},
           {"xeflow_operator_output_frames_total", {{"operator", "source"}}},
           {"xeflow_operator_output_frames_total", {{"operator", "scale"}}},
           {"xeflow_operator_busy_seconds_total", {{"operator", "scale"}}},
           {"xeflow_topic_frames_total", {{"topic", "c2g"}}},
           {"xeflow_topic_bytes_total", {{"topic", "g2c"}}},
           {"xeflow_sink_latency_seconds_count", {{"sink", "verify"}}}}) {
    const std::string& name = rising.first;
    CAPTURE(name);
    CHECK(value_of(last, name, rising.second) > value_of(first, name, rising.second));
  }
  for (const std::vector<series>& s : scrapes) {
    // Every frame counted into the histogram is in its +Inf bucket.
    CHECK(value_of(s, "xeflow_sink_latency_seconds_bucket", {{"sink", "verify"}, {"le", "+Inf"}}) ==
          value_of(s, "xeflow_sink_latency_seconds_count", {{"sink", "verify"}}));
    // A subscriber group never lags its topic by more than the ring holds.
    for (const auto& topic_group : {std::pair{"c2g", "scale"}, std::pair{"g2c", "verify"}}) {
      const std::string topic = topic_group.first, group = topic_group.second;
      CAPTURE(topic);
      const double capacity = value_of(s, "xeflow_topic_capacity_frames", {{"topic", topic}});
      CHECK(capacity == 64);
      const double lag =
          value_of(s, "xeflow_topic_consumer_lag_frames", {{"topic", topic}, {"group", group}});
      CHECK(lag >= 0);
      CHECK(lag <= capacity);
      const double occupancy = value_of(s, "xeflow_topic_occupancy_frames", {{"topic", topic}});
      CHECK(occupancy >= lag);
      CHECK(occupancy <= capacity);
    }
    CHECK(value_of(s, "xeflow_run_info", {{"topology", "pingpong"}}) == 1);
  }

  // An interrupt drains as without metrics; the stats count at least what the last scrape saw.
  child.signal(SIGINT);
  const process_result r = child.wait(deadline);
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 130);
  const nlohmann::json doc = parse_json(r);
  CHECK(doc["status"] == "interrupted");
  check_verified(doc);
  for (const auto& op : doc["operators"])
    if (op["name"] == "verify")
      CHECK(op["frames_in"].get<double>() >=
            value_of(last, "xeflow_operator_input_frames_total", {{"operator", "verify"}}));
  curl_global_cleanup();
}
#endif
