// xeflow-file-read: the GPUfs readahead paper's microbenchmark over xeflow's file cache (read_bench.hpp) —
// blocks reading their strides of a file with block_read, or data-dependent chains of random reads — printing
// GB/s, the cache's counters and whether the bytes on the GPU were the file's, as a table line or JSON.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "apps/file_baseline/read_bench.hpp"
#include "framework/core/units.hpp"

namespace {

/// `text` as bytes with units, or exits with the option named.
std::uint64_t bytes_of(const std::string& option, const std::string& text) {
  const auto bytes = xf::parse_bytes(text);
  if (!bytes || *bytes == 0) {
    std::cerr << "xeflow-file-read: error: " << option << ": a size with units (4KiB, 1MiB), not '" << text
              << "'\n";
    std::exit(2);
  }
  return *bytes;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace xf::file_baseline;
  read_config c;
  std::string request = "4KiB", cache_size = "2GiB", page = "4KiB", readahead = "64KiB",
              max_request = "256KiB";
  std::string mode = "adaptive", replacement = "lra", direct = "auto", pattern = "stride";
  bool json = false, no_verify = false;
  CLI::App app{
      "Reads a file on the GPU through xeflow's file cache: blocks each reading their own stride with "
      "block_read (the GPUfs readahead paper's microbenchmark), or each following a chain of random "
      "reads whose next offset comes from the bytes just read (the paper's Mosaic case)"};
  app.add_option("file", c.path, "the file to read")->required();
  app.add_option("--blocks", c.blocks, "blocks, each reading its own contiguous stride")
      ->check(CLI::Range(1u, 4096u));
  app.add_option("--threads", c.threads, "threads a block (a multiple of 32)")->check(CLI::Range(32u, 1024u));
  app.add_option("--request", request, "bytes per read");
  app.add_option("--pattern", pattern,
                 "stride (each block its contiguous stride, in order) or random (each block a chain: the "
                 "next request-aligned offset from the first word just read, the block and the step)")
      ->check(CLI::IsMember({"stride", "random"}));
  auto* reads = app.add_option("--reads", c.reads, "reads per block (--pattern random)")
                    ->check(CLI::Range(1u, 1u << 30));
  app.add_option("--cache-size", cache_size, "file cache bytes (device memory)");
  app.add_option("--page", page, "cache page size, 4KiB to 64KiB");
  app.add_option("--readahead", readahead, "the most a block reads ahead (0 = none)");
  app.add_option("--readahead-mode", mode, "adaptive, on or off")
      ->check(CLI::IsMember({"adaptive", "on", "off"}));
  app.add_option("--replacement", replacement, "lra (per-block queues) or global")
      ->check(CLI::IsMember({"lra", "global"}));
  app.add_option("--io-threads", c.cache.io_threads,
                 "host I/O threads (by default one per hardware thread, up to 16)")
      ->check(CLI::Range(1u, 256u));
  app.add_option("--io-slots", c.cache.io_slots_per_block, "requests a block may have in flight")
      ->check(CLI::Range(1u, 32u));
  app.add_option("--max-request", max_request, "the longest request to the I/O threads");
  app.add_option("--direct", direct, "O_DIRECT: auto, on, off")->check(CLI::IsMember({"auto", "on", "off"}));
  app.add_flag("--no-verify", no_verify, "skip the checksum against the file");
  app.add_flag("--json", json, "print the result as JSON");
  CLI11_PARSE(app, argc, argv);
  if (reads->count() != 0 && pattern != "random") {
    std::cerr << "xeflow-file-read: error: --reads: only with --pattern random (a stride reads the file)\n";
    return 2;
  }
  c.pattern = pattern == "random" ? read_pattern::random : read_pattern::stride;
  c.request = bytes_of("--request", request);
  c.cache.size = bytes_of("--cache-size", cache_size);
  c.cache.page_bytes = static_cast<std::uint32_t>(bytes_of("--page", page));
  c.cache.readahead = readahead == "0" ? 0 : bytes_of("--readahead", readahead);
  c.cache.max_request = bytes_of("--max-request", max_request);
  c.cache.readahead_policy = mode == "on"    ? xf::readahead_mode::on
                             : mode == "off" ? xf::readahead_mode::off
                                             : xf::readahead_mode::adaptive;
  c.cache.replacement = replacement == "global" ? xf::page_replacement::global : xf::page_replacement::lra;
  c.cache.direct = direct == "on"    ? xf::direct_io_mode::on
                   : direct == "off" ? xf::direct_io_mode::off
                                     : xf::direct_io_mode::automatic;
  c.verify = !no_verify;
  read_result r;
  try {
    r = run_reads(c);
  } catch (const std::invalid_argument& e) {
    std::cerr << "xeflow-file-read: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "xeflow-file-read: error: " << e.what() << "\n";
    return 1;
  }
  if (json) {
    nlohmann::ordered_json io = nlohmann::ordered_json::array();
    for (const auto& t : r.io)
      io.push_back(
          {{"requests", t.requests}, {"reads", t.chunks}, {"bytes", t.bytes}, {"busy_ns", t.busy_ns}});
    std::cout << nlohmann::ordered_json{{"device", r.device},
                                        {"file", c.path},
                                        {"bytes", r.bytes},
                                        {"blocks", c.blocks},
                                        {"threads", c.threads},
                                        {"pattern", pattern},
                                        {"reads", c.pattern == read_pattern::random ? c.reads : 0},
                                        {"request", c.request},
                                        {"page", c.cache.page_bytes},
                                        {"readahead", c.cache.readahead},
                                        {"readahead_mode", mode},
                                        {"replacement", replacement},
                                        {"cache_size", c.cache.size},
                                        {"io_threads", xf::io_threads_of(c.cache)},
                                        {"direct", r.direct},
                                        {"seconds", r.seconds},
                                        {"gbps", r.gbps()},
                                        {"verified", r.verified},
                                        {"device_checksum", r.device_checksum},
                                        {"file_checksum", r.file_checksum},
                                        {"hits", r.fetch.hits},
                                        {"misses", r.fetch.misses},
                                        {"waits", r.fetch.waits},
                                        {"requests", r.fetch.requests},
                                        {"ahead_pages", r.fetch.ahead_pages},
                                        {"ahead_hits", r.fetch.ahead_hits},
                                        {"io", io}}
                     .dump()
              << std::endl;
  } else {
    std::printf(
        "%s: %llu bytes, %u blocks x %u threads, %s %llu B reads, %u B pages, readahead %llu B "
        "(%s)%s: %.3f s, %.2f GB/s, %llu requests, %llu pages read ahead (%llu used)%s\n",
        r.device.c_str(), static_cast<unsigned long long>(r.bytes), c.blocks, c.threads, pattern.c_str(),
        static_cast<unsigned long long>(c.request), c.cache.page_bytes,
        static_cast<unsigned long long>(c.cache.readahead), mode.c_str(), r.direct ? ", O_DIRECT" : "",
        r.seconds, r.gbps(), static_cast<unsigned long long>(r.fetch.requests),
        static_cast<unsigned long long>(r.fetch.ahead_pages),
        static_cast<unsigned long long>(r.fetch.ahead_hits),
        c.verify ? (r.verified ? ", verified" : ", CHECKSUM MISMATCH") : "");
  }
  if (c.verify && !r.verified) {
    std::cerr << "xeflow-file-read: error: the blocks' checksum " << r.device_checksum
              << " is not the host's " << r.file_checksum
              << (c.pattern == read_pattern::random ? " (the host's walk of the same chains with pread)" : "")
              << "\n";
    return 1;
  }
  return 0;
}
