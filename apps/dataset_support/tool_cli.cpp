// The shared command-line pieces of the BigKernel reference tools.
#include "apps/dataset_support/tool_cli.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <limits>
#include <ostream>

#include "apps/dataset_support/parallel.hpp"
#include "framework/core/units.hpp"

namespace xf::apps {

std::uint64_t parse_count(std::string_view option, std::string_view text) {
  auto fail = [&](const std::string& why) -> std::uint64_t {
    throw usage_error(std::string(option) + " '" + std::string(text) + "': " + why +
                      " (a count: digits with an optional k, M, G, T (x1000) or Ki, Mi, Gi, Ti (x1024))");
  };
  std::string_view s = text;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  std::uint64_t value = 0;
  const auto [end, err] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (err == std::errc::result_out_of_range) return fail("too large");
  if (err != std::errc() || end == s.data()) return fail("not a whole number");
  std::string_view unit = s.substr(static_cast<std::size_t>(end - s.data()));
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  std::uint64_t scale = 1;
  if (!unit.empty()) {
    const bool binary = unit.size() == 2 && unit[1] == 'i';
    if (unit.size() != 1 && !binary) return fail("unknown unit '" + std::string(unit) + "'");
    int power = 0;
    switch (unit[0]) {
      case 'k':
      case 'K':
        power = 1;
        break;
      case 'M':
        power = 2;
        break;
      case 'G':
        power = 3;
        break;
      case 'T':
        power = 4;
        break;
      default:
        return fail("unknown unit '" + std::string(unit) + "'");
    }
    for (int i = 0; i < power; ++i) scale *= binary ? 1024 : 1000;
  }
  if (value > std::numeric_limits<std::uint64_t>::max() / scale) return fail("too large");
  return value * scale;
}

std::uint64_t parse_byte_size(std::string_view option, std::string_view text) {
  if (const auto bytes = xf::parse_bytes(text)) return *bytes;
  throw usage_error(std::string(option) + " '" + std::string(text) + "': " + xf::bytes_syntax_problem(text));
}

CLI::Option* add_threads_option(CLI::App& app, unsigned& threads) {
  threads = default_threads();
  return app.add_option("--threads", threads, "worker threads (default: the hardware's threads)")
      ->check(CLI::Range(1u, 4096u))
      ->default_str(std::to_string(threads));
}

CLI::Option* add_repeat_option(CLI::App& app, unsigned& repeats) {
  repeats = 1;
  return app
      .add_option("--repeat", repeats,
                  "run the computation this many times on one mapping of the file(s): the first run "
                  "includes mapping and first-touch page faults (\"seconds\"), the others show the warm "
                  "throughput (\"warm_seconds\")")
      ->check(CLI::Range(1u, 1000u));
}

std::optional<int> parse_or_exit(CLI::App& app, int argc, const char* const* argv, std::ostream& out,
                                 std::ostream& err) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e, out, err);
    return code == 0 ? 0 : exit_usage;
  }
  return std::nullopt;
}

int run_tool(std::string_view tool, std::ostream& err, const std::function<void()>& work) {
  try {
    work();
    return 0;
  } catch (const usage_error& e) {
    err << tool << ": error: " << e.what() << "\n";
    return exit_usage;
  } catch (const std::exception& e) {
    err << tool << ": error: " << e.what() << "\n";
    return exit_failed;
  }
}

void add_timing(nlohmann::json& j, double bytes_per_run, double seconds,
                const std::vector<double>& warm_seconds) {
  j["seconds"] = seconds;
  j["gb_per_s"] = seconds > 0 ? bytes_per_run / seconds / 1e9 : 0.0;
  if (warm_seconds.empty()) return;
  j["warm_seconds"] = warm_seconds;
  const double best = *std::min_element(warm_seconds.begin(), warm_seconds.end());
  j["warm_gb_per_s"] = best > 0 ? bytes_per_run / best / 1e9 : 0.0;
}

std::string hex32(std::uint32_t value) {
  char text[11];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

void print_timing(std::ostream& out, std::uint32_t digest, double seconds,
                  const std::vector<double>& warm_seconds, double bytes, const std::string& detail) {
  const auto precision = out.precision(4);
  out << "digest " << hex32(digest) << ", " << seconds << " s, " << bytes / seconds / 1e9 << " GB/s ("
      << detail << ")\n";
  if (!warm_seconds.empty()) {
    const double best = *std::min_element(warm_seconds.begin(), warm_seconds.end());
    out << "warm (best of " << warm_seconds.size() << "): " << best << " s, " << bytes / best / 1e9
        << " GB/s\n";
  }
  out.precision(precision);
}

}  // namespace xf::apps
