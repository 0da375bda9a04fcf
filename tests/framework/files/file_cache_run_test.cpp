// File readers in the kernel's blocks: whole topologies whose reader, placed on gpu, reads through
// the file cache — on the host executor's blocks (host memory; CI) and, where a GPU is, on the device
// executor's (device memory, the H100) — verified frame by frame against a replay with direct reads. The
// same fetch protocol, page slots, LRA shares and I/O threads either way. Small caches force replacement;
// errors (a missing file, a range past the end, a stage larger than a block's share, a file truncated
// while read) end the run naming the operator, topic and offset.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "apps/custom_operator/golden_diff_op.hpp"
#include "framework/model/spec_validation.hpp"
#include "framework/runtime/executor.hpp"
#if defined(XF_HAVE_CUDA)
#include "framework/kernel/kernel_program.hpp"
#endif
#include "framework/core/units.hpp"
#include "framework/model/topology_builder.hpp"
#include "framework/plan/device_probe.hpp"
#include "framework/plan/plan.hpp"
#include "operators/builtin.hpp"
#include "operators/sources/readahead_file_source.hpp"
#include "tests/framework/files/indexed_add.hpp"
#include "tests/framework/files/pattern_file.hpp"
#include "tests/framework/files/small_files_reader.hpp"
#include "tests/support/test_kernel.hpp"

namespace xf {
namespace {

/// Keeps every frame it receives, by offset (the test checks them against the files themselves).
struct collect_sink final : public cpu_sink {
  struct params {};
  static void describe(operator_schema<params>& s) { s.describe("keeps the frames (test)"); }
  explicit collect_sink(const params&) {}
  void on_frame(std::uint64_t offset, const frame_in& in) override {
    std::lock_guard lock(mutex());
    frames()[offset].assign(in.data, in.data + in.bytes);
  }
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static std::map<std::uint64_t, std::vector<std::byte>>& frames() {
    static std::map<std::uint64_t, std::vector<std::byte>> f;
    return f;
  }
};

/// Passes frames through; at offset 0 it cuts the file `path` to `keep` bytes (a file truncated while the
/// run reads it).
struct truncate_at_start final : public cpu_map {
  struct params {
    std::string path;
    std::int64_t keep = 0;
  };
  static void describe(operator_schema<params>& s) {
    s.describe("truncates a file when frame 0 passes (test)");
    s.param(&params::path, "path", "file to cut", required);
    s.param(&params::keep, "keep", "bytes kept", std::int64_t{0});
  }
  explicit truncate_at_start(const params& p) : params_(p) {}
  void on_frame(std::uint64_t offset, const frame_in& in, frame_out& out) override {
    if (offset == 0) std::filesystem::resize_file(params_.path, static_cast<std::uintmax_t>(params_.keep));
    std::memcpy(out.data, in.data, in.bytes);
    out.bytes = in.bytes;
  }

 private:
  params params_;
};

const operator_registry& registry() {
  static const operator_registry r = [] {
    operator_registry reg;
    register_builtin_operators(reg);
    reg.add_gpu_operators<
        gpu_operator_list<indexed_add, test::small_files_reader, example::golden_diff_op>>();
    reg.add<collect_sink>("collect_sink");
    reg.add<truncate_at_start>("truncate_at_start");
    return reg;
  }();
  return r;
}

struct reader_files {
  test::scratch_dir dir;
  std::string index, data;
  std::uint64_t data_bytes = 1 << 20;
  explicit reader_files(std::uint64_t index_bytes = 64 * KiB) {
    index = test::write_pattern_file(dir, "index", 0, index_bytes);
    data = test::write_pattern_file(dir, "data", 1, data_bytes);
  }
};

/// sequence_source → indexed_add (gpu) → verify_sink, `frames` frames of 4 KiB u32 (the last one short).
topology_spec reader_topology(const reader_files& f, std::uint64_t frames, std::uint32_t warps = 2) {
  topology_builder b("reader");
  b.topic("in").frame_bytes(4 * KiB).capacity(8).element(element_type::u32);
  b.topic("out").frame_bytes(4 * KiB).capacity(8).element(element_type::u32);
  b.link({}, op("source", "sequence_source").param("total_bytes", std::int64_t(frames * 4 * KiB - 12)),
         {"in"});
  b.link({"in"},
         op("add", "indexed_add")
             .on(placement::gpu)
             .warps(warps)
             .param("index", f.index)
             .param("data", f.data)
             .param("window", std::int64_t(f.data_bytes - 4 * KiB)),
         {"out"});
  b.link({"out"}, op("verify", "verify_sink").threads(2), {});
  b.runtime().partition(partition_policy::explicit_warps).warps_per_block(warps).blocks(3);
  return b.build();
}

/// Where `run` puts the kernel's operators: the host executor's blocks (CI), or the device's (the H100).
enum class kernel_on { host, device, skipped };
kernel_on& current_executor() {
  static kernel_on where = kernel_on::host;
  return where;
}

const device_status& gpu() {
  static const device_status status = probe_device();
  return status;
}

/// Subcases of the calling test: the kernel's operators on the host executor, then on the device executor
/// (a GPU case: said and skipped visibly where there is no GPU, or no kernel in this build). Returns
/// `skipped` for a device subcase that cannot run.
kernel_on each_executor() {
  kernel_on where = kernel_on::host;
  SUBCASE("host executor") {
    where = kernel_on::host;
  }
  SUBCASE("device executor (GPU)") {
    where = kernel_on::device;
    if (!gpu().usable || compiled_kernel<test::test_gpu_operators>() == nullptr) {
      const std::string why = compiled_kernel<test::test_gpu_operators>() == nullptr
                                  ? std::string("a build without CUDA")
                                  : gpu().reason;
      MESSAGE("skipped on the device executor: " << why);
      static bool said = false;  // once in the log, whatever doctest's verbosity
      if (!said)
        std::printf("files_test: the device-executor subcases are skipped (GPU tests): %s\n", why.c_str());
      said = true;
      where = kernel_on::skipped;
    }
  }
  current_executor() = where;
  return where;
}

run_stats run(topology_spec spec, run_control& control) {
  validate_topology(spec, registry());
  plan_options options;
  options.host_cores = 3;
  run_options run;
  if (current_executor() == kernel_on::device) {
    if (spec.runtime.blocks == 0) spec.runtime.blocks = 3;  // the host's blocks, so the shares match
    spec.runtime.executor = executor_kind::device;
    const kernel_program* kernel = compiled_kernel<test::test_gpu_operators>();
    options.device.usable = true;
    options.device.sm_count = gpu().sm_count;
#if defined(XF_HAVE_CUDA)  // (each_executor never picks the device without a kernel)
    options.device.blocks_per_sm = [kernel](int threads) { return kernel->blocks_per_sm(threads); };
    options.device.compiled_in = [kernel](std::type_index t) { return kernel->index_of(t).has_value(); };
#endif
    run.kernel = kernel;
  }
  const plan p = make_plan(spec, registry(), options);
  const bool gpu_ops = std::any_of(spec.operators.begin(), spec.operators.end(),
                                   [](const operator_spec& o) { return o.on == placement::gpu; });
  REQUIRE(p.executor == (current_executor() == kernel_on::device && gpu_ops ? resolved_executor::device
                                                                            : resolved_executor::host));
  return run_topology(p, spec, control, run);
}

const operator_stats& stats_of(const run_stats& s, const std::string& name) {
  for (const auto& o : s.operators)
    if (o.name == name) return o;
  FAIL("no operator " << name);
  return s.operators.front();
}

void check_verified(const run_stats& stats, std::uint64_t frames) {
  const operator_stats& verify = stats_of(stats, "verify");
  CHECK(verify.counters.at("frames") == frames);
  CHECK(verify.counters.at("lost") == 0);
  CHECK(verify.counters.at("corrupt") == 0);
  CHECK(verify.counters.at("reordered") == 0);
  CHECK(verify.counters.at("duplicated") == 0);
}

}  // namespace

TEST_CASE("file cache run: a reader in the kernel's blocks reads every frame's pages through the cache") {
  if (each_executor() == kernel_on::skipped) return;
  reader_files files;
  for (const page_replacement replacement : {page_replacement::lra, page_replacement::global}) {
    for (const std::uint64_t cache_pages : {std::uint64_t{12}, std::uint64_t{3 * 64}}) {
      CAPTURE(name_of(replacement));
      CAPTURE(cache_pages);
      topology_spec spec = reader_topology(files, 700);
      file_cache_spec cache;
      cache.size = cache_pages * 4 * KiB;  // 12 pages: 4 a block, so pages are replaced all the time
      cache.replacement = replacement;
      cache.io_threads = 2;
      spec.runtime.file_cache = cache;
      run_control control;
      const run_stats stats = run(spec, control);
      REQUIRE_MESSAGE(stats.status == xf::run_status::completed, stats.error);
      check_verified(stats, 700);
      REQUIRE(stats.file_cache.has_value());
      const file_cache_stats& c = *stats.file_cache;
      CHECK(c.slots == cache_pages);
      CHECK(c.replacement == name_of(replacement));
      // Each frame reads 1 index page (512 words a page: consecutive offsets share it) and 2 data pages.
      CHECK(c.hits + c.misses >= 700 * 2);
      CHECK(c.misses > 0);
      CHECK(c.hits > 0);
      std::uint64_t read = 0;
      for (const auto& t : c.io_threads) read += t.bytes;
      CHECK(read >= c.misses * 4 * KiB - 4 * KiB);  // a file's last page may be short
      const std::string table = format_stats_table(stats);
      CHECK(table.find("file cache: " + std::to_string(cache_pages) + " pages of 4 KiB") !=
            std::string::npos);
    }
  }
}

TEST_CASE(
    "file cache run: a range past the end of a file fails the run naming operator, topic, offset and path") {
  if (each_executor() == kernel_on::skipped) return;
  reader_files files(4 * KiB);  // 512 index words: the frame at offset 512 reads past the end
  topology_spec spec = reader_topology(files, 600);
  run_control control;
  const run_stats stats = run(spec, control);
  CHECK(stats.status == xf::run_status::failed);
  const std::string expected = "operator 'add', topic 'in', offset 512: file '" + files.index +
                               "': the operator reads bytes [4096, 4104), past its size (4096 bytes)";
  CHECK_MESSAGE(stats.error.find(expected) != std::string::npos, stats.error);
}

TEST_CASE("file cache run: a missing file fails the start naming the operator and the path") {
  if (each_executor() == kernel_on::skipped) return;
  reader_files files;
  topology_spec spec = reader_topology(files, 10);
  for (operator_spec& o : spec.operators)
    if (o.name == "add") o.params["data"] = files.dir.file("missing");
  run_control control;
  const run_stats stats = run(spec, control);
  CHECK(stats.status == xf::run_status::failed);
  CHECK_MESSAGE(stats.error.find("operator 'add', topic 'in'") != std::string::npos, stats.error);
  CHECK_MESSAGE(stats.error.find(files.dir.file("missing")) != std::string::npos, stats.error);
}

TEST_CASE(
    "file cache run: a stage that needs more pages than a block's share fails instead of waiting forever") {
  if (each_executor() == kernel_on::skipped) return;
  reader_files files;
  topology_spec spec = reader_topology(files, 10);
  file_cache_spec cache;
  cache.size = 3 * 4 * KiB;  // one page a block; a data stage spans two
  spec.runtime.file_cache = cache;
  run_control control;
  const run_stats stats = run(spec, control);
  CHECK(stats.status == xf::run_status::failed);
  CHECK_MESSAGE(
      stats.error.find("stage 1 reads 2 pages of 4 KiB, more than a block's share of the file cache (1 "
                       "pages of 3 blocks)") != std::string::npos,
      stats.error);
}

namespace {

/// readahead_file_source (on `where`) → verify_sink (replays the files with direct reads) and collect_sink.
topology_spec source_topology(const std::string& paths, placement where,
                              std::uint64_t frame_bytes = 16 * KiB) {
  topology_builder b("files");
  b.topic("frames").frame_bytes(frame_bytes).capacity(16).element(element_type::u8);
  b.link({}, op("files", "readahead_file_source").on(where).param("path", paths), {"frames"});
  b.link({"frames"}, op("verify", "verify_sink"), {});
  b.link({"frames"}, op("copy", "collect_sink"), {});
  if (where == placement::gpu) b.runtime().blocks(3);
  return b.build();
}

}  // namespace

TEST_CASE(
    "file source: files of 0 B, 1 B and sizes off the page and frame grid stream byte-exact, on gpu and "
    "cpu") {
  if (each_executor() == kernel_on::skipped) return;
  test::scratch_dir dir;
  const std::vector<std::uint64_t> sizes = {0, 1, 16 * KiB, 100000, 3 * 16 * KiB + 5, 4096, 70001, 2};
  std::string paths;
  std::vector<std::vector<std::byte>> contents;
  for (std::uint32_t f = 0; f < sizes.size(); ++f) {
    const std::string path = test::write_pattern_file(dir, "f" + std::to_string(f), f, sizes[f]);
    paths += (f ? "; " : "") + path;
    contents.push_back(test::pattern(f, sizes[f]));
  }
  std::uint64_t frames = 0;
  for (std::uint64_t size : sizes) frames += frames_in_file(size, 16 * KiB);
  for (const placement where : {placement::gpu, placement::cpu}) {
    for (const std::uint64_t cache_pages : {std::uint64_t{3 * 8}, std::uint64_t{3 * 256}}) {
      CAPTURE(name_of(where));
      CAPTURE(cache_pages);
      collect_sink::frames().clear();
      topology_spec spec = source_topology(paths, where);
      if (where == placement::gpu) {
        file_cache_spec cache;
        cache.size = cache_pages * 4 * KiB;  // 8 pages a block: 16 KiB frames and 32 KiB of readahead squeeze
        cache.readahead = 32 * KiB;
        spec.runtime.file_cache = cache;
      }
      run_control control;
      const run_stats stats = run(spec, control);
      REQUIRE_MESSAGE(stats.status == xf::run_status::completed, stats.error);
      check_verified(stats, frames);
      CHECK(stats_of(stats, "files").frames_out == frames);
      // Frame o: the next 16 KiB of the current file, each file's last frame short, empty files none.
      const auto& got = collect_sink::frames();
      std::uint64_t frame = 0;
      bool exact = got.size() == frames;
      for (std::uint32_t f = 0; f < sizes.size(); ++f) {
        for (std::uint64_t at = 0; at < sizes[f]; at += 16 * KiB, ++frame) {
          const std::uint64_t n = std::min<std::uint64_t>(16 * KiB, sizes[f] - at);
          const auto it = got.find(frame);
          exact = exact && it != got.end() && it->second.size() == n &&
                  std::memcmp(it->second.data(), contents[f].data() + at, n) == 0;
        }
      }
      CHECK(frame == frames);
      CHECK(exact);
      if (where == placement::gpu) {
        REQUIRE(stats.file_cache.has_value());
        CHECK(stats.file_cache->ahead_hits > 0);  // sequential advice: blocks' runs read ahead
        // … and never past their run's end: every page read ahead was read.
        CHECK(stats.file_cache->ahead_pages == stats.file_cache->ahead_hits);
      }
    }
  }
}

TEST_CASE("file source: an empty file is an empty stream, and bad paths are refused or named") {
  if (each_executor() == kernel_on::skipped) return;
  test::scratch_dir dir;
  const std::string empty = test::write_pattern_file(dir, "empty", 0, 0);
  run_control control;
  const run_stats stats = run(source_topology(empty, placement::gpu), control);
  REQUIRE_MESSAGE(stats.status == xf::run_status::completed, stats.error);
  CHECK(stats_of(stats, "files").frames_out == 0);

  run_control missing_control;
  const run_stats missing =
      run(source_topology(empty + "; " + dir.file("nope"), placement::gpu), missing_control);
  CHECK(missing.status == xf::run_status::failed);
  CHECK_MESSAGE(missing.error.find("operator 'files', topic 'frames'") != std::string::npos, missing.error);
  CHECK_MESSAGE(missing.error.find(dir.file("nope")) != std::string::npos, missing.error);

  path_list list;
  CHECK(std::string(parse_path_list("a.bin;; b.bin", list)) ==
        "a list of paths separated by ';', none empty");
  CHECK(std::string(parse_path_list("1;2;3;4;5;6;7;8;9", list)) == "at most 8 files");
  CHECK(std::string(parse_path_list(" a.bin ;b.bin", list)).empty());
  CHECK(list.count == 2);
  CHECK(list.paths[0].str() == "a.bin");
  topology_spec none = source_topology("", placement::gpu);
  CHECK_THROWS_WITH_AS(validate_topology(none, registry()), doctest::Contains("path: name at least one file"),
                       config_error);
}

TEST_CASE(
    "file readers: the README's example (golden_diff) shows where a stream differs from its golden file") {
  if (each_executor() == kernel_on::skipped) return;
  test::scratch_dir dir;
  const std::uint64_t size = 300000;
  const std::string data = test::write_pattern_file(dir, "data", 3, size);
  // The golden file: the data's first 250 000 bytes, one of them changed.
  std::vector<std::byte> golden = test::pattern(3, 250000);
  golden[123457] ^= std::byte{0x5a};
  const std::string golden_path = dir.file("golden");
  std::ofstream(golden_path, std::ios::binary)
      .write(reinterpret_cast<const char*>(golden.data()), static_cast<std::streamsize>(golden.size()));
  for (const placement where : {placement::gpu, placement::cpu}) {
    CAPTURE(name_of(where));
    collect_sink::frames().clear();
    topology_builder b("golden");
    b.topic("frames").frame_bytes(16 * KiB).capacity(16).element(element_type::u8);
    b.topic("diff").frame_bytes(16 * KiB).capacity(16).element(element_type::u8);
    b.link({}, op("files", "readahead_file_source").on(placement::gpu).param("path", data), {"frames"});
    b.link({"frames"}, op("compare", "golden_diff").on(where).param("golden", golden_path), {"diff"});
    b.link({"diff"}, op("verify", "verify_sink"), {});
    b.link({"diff"}, op("keep", "collect_sink"), {});
    b.runtime().blocks(2);
    run_control control;
    const run_stats stats = run(b.build(), control);
    REQUIRE_MESSAGE(stats.status == xf::run_status::completed, stats.error);
    check_verified(stats, (size + 16 * KiB - 1) / (16 * KiB));
    const std::vector<std::byte> pattern = test::pattern(3, size);
    std::uint64_t differing = 0, wrong = 0;
    for (const auto& [offset, frame] : collect_sink::frames()) {
      for (std::uint64_t i = 0; i < frame.size(); ++i) {
        const std::uint64_t at = offset * 16 * KiB + i;
        const std::byte expected = at == 123457 ? std::byte{0x5a} : at < 250000 ? std::byte{0} : pattern[at];
        wrong += frame[i] != expected;
        differing += at < 250000 && frame[i] != std::byte{0};
      }
    }
    CHECK(wrong == 0);
    CHECK(differing == 1);
  }
}

TEST_CASE("file source: a file truncated while the run reads it fails the run naming the path and offset") {
  if (each_executor() == kernel_on::skipped) return;
  test::scratch_dir dir;
  const std::string data = test::write_pattern_file(dir, "data", 5, 4 << 20);
  topology_builder b("truncated");
  b.topic("frames").frame_bytes(16 * KiB).capacity(8).element(element_type::u8);
  b.topic("passed").frame_bytes(16 * KiB).capacity(8).element(element_type::u8);
  b.link({}, op("files", "readahead_file_source").on(placement::gpu).param("path", data), {"frames"});
  b.link({"frames"}, op("cut", "truncate_at_start").param("path", data).param("keep", std::int64_t{64 * KiB}),
         {"passed"});
  b.link({"passed"}, op("sink", "null_sink"), {});
  b.runtime().blocks(2);
  topology_spec spec = b.build();
  file_cache_spec cache;
  cache.size = 2 * 64 * 4 * KiB;
  cache.readahead = 32 * KiB;
  spec.runtime.file_cache = cache;
  run_control control;
  const run_stats stats = run(spec, control);
  CHECK(stats.status == xf::run_status::failed);
  // The source is at most a ring and a readahead ahead of the cut: a later frame finds the file short.
  CHECK_MESSAGE(stats.error.find("operator 'files', topic 'frames', offset ") != std::string::npos,
                stats.error);
  CHECK_MESSAGE(stats.error.find("file '" + data + "': file ends at byte offset") != std::string::npos,
                stats.error);
  CHECK_MESSAGE(stats.error.find("truncated while being read") != std::string::npos, stats.error);
}

TEST_CASE(
    "file readers: many small files, each read whole, byte-exact through a cache smaller than them all") {
  if (each_executor() == kernel_on::skipped) return;
  test::scratch_dir dir;
  constexpr std::uint32_t count = 300;
  std::vector<std::vector<std::byte>> contents;
  for (std::uint32_t k = 0; k < count; ++k) {
    const std::uint64_t size = (k * 977) % 9000;  // 0 B, 1 B and everything up to 9 KB: 0 to 3 pages
    test::write_pattern_file(dir, "small" + std::to_string(k), k, size);
    contents.push_back(test::pattern(k, size));
  }
  collect_sink::frames().clear();
  topology_builder b("small");
  b.topic("in").frame_bytes(12 * KiB).capacity(16).element(element_type::u8);
  b.topic("out").frame_bytes(12 * KiB).capacity(16).element(element_type::u8);
  b.link({}, op("source", "sequence_source").param("total_bytes", std::int64_t(2 * count * 12 * KiB)),
         {"in"});
  b.link({"in"},
         op("read", "small_files_reader")
             .on(placement::gpu)
             .param("dir", dir.file(""))
             .param("count", std::int64_t{count}),
         {"out"});
  b.link({"out"}, op("verify", "verify_sink"), {});
  b.link({"out"}, op("keep", "collect_sink"), {});
  b.runtime().blocks(3);
  topology_spec spec = b.build();
  file_cache_spec cache;
  cache.size = 3 * 32 * 4 * KiB;  // 96 pages for ~500 pages of files: replaced as the frames cycle twice
  spec.runtime.file_cache = cache;
  run_control control;
  const run_stats stats = run(spec, control);
  REQUIRE_MESSAGE(stats.status == xf::run_status::completed, stats.error);
  check_verified(stats, 2 * count);
  std::uint64_t wrong = 0;
  for (const auto& [offset, frame] : collect_sink::frames()) {
    const std::vector<std::byte>& file = contents[offset % count];
    for (std::uint64_t i = 0; i < frame.size(); ++i)
      wrong += frame[i] != (i < file.size() ? file[i] : std::byte{0});
  }
  CHECK(collect_sink::frames().size() == 2 * count);
  CHECK(wrong == 0);
}

}  // namespace xf
