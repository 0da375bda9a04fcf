// xeflow-file-baseline: the CPU I/O baseline of the file benchmark (file_baseline.hpp) — reads a file
// into GPU memory the way a user would without xeflow, verifies the copy, and prints GB/s as a table line
// or JSON.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "apps/file_baseline/file_baseline.hpp"
#include "framework/core/units.hpp"

int main(int argc, char** argv) {
  using namespace xf::file_baseline;
  config c;
  std::string request = "1MiB", direct = "auto";
  bool json = false, no_verify = false;
  CLI::App app{
      "Reads a file into GPU memory with N pread threads, pinned buffers and cudaMemcpyAsync (the CPU I/O "
      "baseline of xeflow's file benchmark)"};
  app.add_option("file", c.path, "the file to read")->required();
  app.add_option("--threads", c.threads, "reading threads, each with its own contiguous part of the file")
      ->check(CLI::Range(1u, 256u));
  app.add_option("--request", request, "bytes per read and per copy (a multiple of 4KiB)");
  app.add_option("--buffers", c.buffers, "pinned buffers per thread")->check(CLI::Range(1u, 64u));
  app.add_option("--direct", direct, "O_DIRECT: auto (where the filesystem allows), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  app.add_flag("--no-verify", no_verify, "skip the checksum of the device copy against the file");
  app.add_flag("--json", json, "print the result as JSON");
  CLI11_PARSE(app, argc, argv);
  const auto bytes = xf::parse_bytes(request);
  if (!bytes || *bytes == 0 || *bytes % 4096 != 0) {
    std::cerr << "xeflow-file-baseline: error: --request: a multiple of 4KiB, not '" << request << "'\n";
    return 2;
  }
  c.request = *bytes;
  c.direct = direct == "on"    ? xf::direct_io_mode::on
             : direct == "off" ? xf::direct_io_mode::off
                               : xf::direct_io_mode::automatic;
  c.verify = !no_verify;
  result r;
  try {
    r = run(c);
  } catch (const std::invalid_argument& e) {
    std::cerr << "xeflow-file-baseline: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "xeflow-file-baseline: error: " << e.what() << "\n";
    return 1;
  }
  if (json) {
    std::cout << nlohmann::ordered_json{{"device", r.device},
                                        {"file", c.path},
                                        {"bytes", r.bytes},
                                        {"threads", c.threads},
                                        {"request", c.request},
                                        {"buffers", c.buffers},
                                        {"direct", r.direct},
                                        {"seconds", r.seconds},
                                        {"gbps", r.gbps()},
                                        {"verified", r.verified},
                                        {"device_checksum", r.device_checksum},
                                        {"file_checksum", r.file_checksum}}
                     .dump()
              << std::endl;
  } else {
    std::printf("%s: %llu bytes, %u threads x %llu B requests (%s): %.3f s, %.2f GB/s%s\n", r.device.c_str(),
                static_cast<unsigned long long>(r.bytes), c.threads,
                static_cast<unsigned long long>(c.request), r.direct ? "O_DIRECT" : "buffered", r.seconds,
                r.gbps(), c.verify ? (r.verified ? ", verified" : ", CHECKSUM MISMATCH") : "");
  }
  if (c.verify && !r.verified) {
    std::cerr << "xeflow-file-baseline: error: the device copy's checksum " << r.device_checksum
              << " is not the file's " << r.file_checksum << "\n";
    return 1;
  }
  return 0;
}
