// The host executor, in process: topologies built in C++, run on CPU threads and host kernel blocks.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "framework/core/backoff.hpp"
#include "framework/core/timer_slack.hpp"
#include "framework/core/units.hpp"
#include "framework/model/spec_validation.hpp"
#include "framework/model/topology_builder.hpp"
#include "framework/plan/plan.hpp"
#include "framework/runtime/checkpoint.hpp"
#include "framework/runtime/executor.hpp"
#include "operators/builtin.hpp"
#include "operators/sources/mapped_file.hpp"
#include "tests/e2e/faulty_ops.hpp"
#include "tests/support/scratch_dir.hpp"

namespace {

using namespace xf;

/// Keeps the first 1/keep of each frame: a map whose output share its parameter sets.
struct keep_share_op {
  static constexpr char class_name[] = "keep_share";
  struct params {
    std::uint32_t keep = 2;
  };
  static void describe(operator_schema<params>& s) {
    s.describe("keeps the first 1/keep of each frame").whole_frames();
    s.param(&params::keep, "keep", "the share kept: 1/keep of the frame", params{}.keep, 1u, 64u);
  }
  static output_fraction output_share(const params& p) { return {1, p.keep}; }
  template <class T>
  XF_HOST_DEVICE static void compute(const params& p, const frame_task<T>& task) {
    const std::uint64_t n = task.count / p.keep;
    for (std::uint64_t i = task.thread_id; i < n; i += task.thread_count) task.out[i] = task.in[i];
  }
};

/// The built-ins, the faulty operators of tests/e2e and keep_share.
const operator_registry& executor_registry() {
  static const operator_registry r = [] {
    operator_registry reg;
    register_builtin_operators(reg);
    reg.add<test::throw_at_op>("throw_at");
    reg.add_gpu_operators<gpu_operator_list<test::corrupt_at_op, keep_share_op>>();
    return reg;
  }();
  return r;
}

struct run_outcome {
  run_stats stats;
  std::optional<run_error> failure;
};

run_outcome run(topology_spec spec, run_control* external = nullptr) {
  validate_topology(spec, executor_registry());
  plan_options options;
  options.host_cores = 3;  // more blocks than this machine's cores: blocks must interleave
  const plan p = make_plan(spec, executor_registry(), options);
  run_control local;
  run_control& control = external ? *external : local;
  run_outcome out{run_topology(p, spec, control), control.failure()};
  return out;
}

const operator_stats& stats_of(const run_stats& s, const std::string& name) {
  for (const auto& o : s.operators)
    if (o.name == name) return o;
  FAIL("no operator " << name);
  return s.operators.front();
}

void check_clean(const operator_stats& verify, std::uint64_t frames) {
  CHECK(verify.counters.at("frames") == frames);
  CHECK(verify.counters.at("lost") == 0);
  CHECK(verify.counters.at("duplicated") == 0);
  CHECK(verify.counters.at("reordered") == 0);
  CHECK(verify.counters.at("corrupt") == 0);
}

/// A source of `total_bytes` → scale (a GPU operator) → verify, 4 KiB frames in topics of `capacity`.
topology_builder scale_chain(const char* name, std::uint32_t capacity, const char* total_bytes) {
  topology_builder b(name);
  b.topic("c2g").frame_bytes(4 * KiB).capacity(capacity);
  b.topic("g2c").frame_bytes(4 * KiB).capacity(capacity);
  b.link({}, op("source", "sequence_source").param("total_bytes", total_bytes), {"c2g"});
  b.link({"c2g"}, op("scale", "scale").on(placement::gpu).param("factor", 2.0), {"g2c"});
  b.link({"g2c"}, op("verify", "verify_sink"), {});
  return b;
}

}  // namespace

TEST_CASE("host_executor.pingpong_small_capacities") {
  for (std::uint32_t capacity : {1u, 2u, 3u, 16u}) {
    CAPTURE(capacity);
    topology_builder b("pingpong");
    b.topic("c2g").frame_bytes(4 * KiB).capacity(capacity);
    b.topic("g2c").frame_bytes(4 * KiB).capacity(capacity);
    b.link({}, op("source", "sequence_source").threads(3).param("total_bytes", "2MiB"), {"c2g"});
    b.link({"c2g"}, op("scale", "scale").on(placement::gpu).param("factor", 2.0), {"g2c"});
    b.link({"g2c"}, op("verify", "verify_sink").threads(2), {});
    const auto out = run(b.build());
    CHECK(out.stats.status == xf::run_status::completed);
    check_clean(stats_of(out.stats, "verify"), 512);
    CHECK(stats_of(out.stats, "scale").frames_out == 512);
    CHECK(out.stats.topics[0].frames == 512);
    // Each of the 3 source threads claimed one offset past the stream and published it void.
    CHECK(out.stats.topics[0].end_offset == 512 + 3);
    CHECK(out.stats.topics[1].end_offset == 512 + 3);
  }
}

TEST_CASE("host_executor.kernel_chain_and_cpu_stages") {
  // C(G)3C and C(GC)2 shapes with a partial last frame, several blocks and explicit warps.
  topology_builder b("chain");
  for (const char* t : {"t0", "t1", "t2", "t3", "t4"}) b.topic(t).frame_bytes(8 * KiB).capacity(4);
  b.link({}, op("source", "sequence_source").threads(2).param("total_bytes", std::int64_t{3 * MiB + 4 * 100}),
         {"t0"});
  b.link({"t0"}, op("g1", "scale").on(placement::gpu).warps(1).param("factor", 3.0), {"t1"});
  b.link({"t1"}, op("g2", "fma").on(placement::gpu).warps(2).param("iterations", 4), {"t2"});
  b.link({"t2"}, op("c1", "scale").on(placement::cpu).threads(2).param("factor", 5.0), {"t3"});
  b.link({"t3"}, op("g3", "pass_through").on(placement::gpu).warps(3), {"t4"});
  b.link({"t4"}, op("verify", "verify_sink").threads(3), {});
  b.runtime().partition(partition_policy::explicit_warps).warps_per_block(6).blocks(4);
  const auto out = run(b.build());
  CHECK(out.stats.status == xf::run_status::completed);
  check_clean(stats_of(out.stats, "verify"), 385);
  CHECK(stats_of(out.stats, "verify").bytes_in == 3 * MiB + 400);
}

TEST_CASE("host_executor.a_map_outputs_the_share_its_parameters_set") {
  auto topology = [](std::int64_t keep) {
    topology_builder b("share");
    b.topic("in").frame_bytes(16 * KiB).capacity(4);
    b.topic("out").frame_bytes(4 * KiB).capacity(4);
    b.link({}, op("source", "sequence_source").param("total_bytes", std::int64_t{10 * 16 * KiB + 4 * KiB}),
           {"in"});
    b.link({"in"}, op("k", "keep_share").on(placement::gpu).param("keep", keep), {"out"});
    b.link({"out"}, op("sink", "null_sink"), {});
    b.runtime().blocks(3);
    return b.build();
  };
  const auto out = run(topology(4));
  CHECK(out.stats.status == xf::run_status::completed);
  CHECK(stats_of(out.stats, "k").bytes_out == 10 * 4 * KiB + KiB);  // a quarter of each frame
  CHECK(stats_of(out.stats, "sink").bytes_in == 10 * 4 * KiB + KiB);
  CHECK(stats_of(out.stats, "sink").frames_in == 11);
  // Half of a 16 KiB frame does not fit the output topic's 4 KiB frames.
  try {
    topology_spec too_small = topology(2);
    validate_topology(too_small, executor_registry());
    FAIL("expected a config_error");
  } catch (const config_error& e) {
    CHECK_MESSAGE(
        std::string(e.what()).find("its output of a frame of input topic 'in' (16 KiB) is 1/2 of it: 8 "
                                   "KiB") != std::string::npos,
        e.what());
  }
}

TEST_CASE("host_executor.fan_out_every_group_sees_every_frame") {
  topology_builder b("fanout");
  b.topic("raw").frame_bytes(4 * KiB).capacity(3).element(element_type::f32);
  b.topic("a").frame_bytes(4 * KiB).capacity(2).element(element_type::f32);
  b.topic("b").frame_bytes(4 * KiB).capacity(5).element(element_type::f32);
  b.link({}, op("source", "random_source").threads(2).param("total_bytes", "1MiB").param("seed", 9), {"raw"});
  b.link({"raw"}, op("half", "scale").on(placement::gpu).param("factor", 0.5), {"a"});
  b.link({"raw"}, op("fma", "fma").on(placement::gpu).param("iterations", 8), {"b"});
  b.link({"raw"}, op("raw_verify", "verify_sink"), {});
  b.link({"a"}, op("a_verify", "verify_sink").threads(2), {});
  b.link({"a"}, op("a_count", "null_sink"), {});
  b.link({"b"}, op("b_verify", "verify_sink"), {});
  const auto out = run(b.build());
  CHECK(out.stats.status == xf::run_status::completed);
  for (const char* v : {"raw_verify", "a_verify", "b_verify"}) check_clean(stats_of(out.stats, v), 256);
  CHECK(stats_of(out.stats, "a_count").frames_in == 256);
}

TEST_CASE("host_executor.operator_failure_names_operator_topic_offset") {
  topology_builder b("faulty");
  b.topic("t0").frame_bytes(4 * KiB).capacity(2);
  b.topic("t1").frame_bytes(4 * KiB).capacity(2);
  b.link({}, op("source", "sequence_source").threads(2).param("total_bytes", "1GiB"), {"t0"});
  b.link({"t0"}, op("boom", "throw_at").threads(2).param("at", 40), {"t1"});
  b.link({"t1"}, op("sink", "null_sink"), {});
  const auto out = run(b.build());
  CHECK(out.stats.status == xf::run_status::failed);
  REQUIRE(out.failure);
  CHECK(out.failure->site().operator_name == "boom");
  CHECK(out.failure->site().topic == "t0");
  CHECK(out.failure->site().offset == 40);
  CHECK(out.stats.error.find("deliberate failure at offset 40") != std::string::npos);
}

TEST_CASE("host_executor.kernel_operator_corruption_is_caught") {
  topology_builder b("corrupt");
  b.topic("t0").frame_bytes(4 * KiB).capacity(4);
  b.topic("t1").frame_bytes(4 * KiB).capacity(4);
  b.link({}, op("source", "sequence_source").param("total_bytes", "256KiB"), {"t0"});
  b.link({"t0"}, op("flip", "corrupt_at").on(placement::gpu).param("at", 5), {"t1"});
  b.link({"t1"}, op("verify", "verify_sink"), {});
  const auto out = run(b.build());
  CHECK(out.stats.status == xf::run_status::failed);
  CHECK(stats_of(out.stats, "verify").counters.at("corrupt") == 1);
  REQUIRE(out.failure);
  CHECK(out.failure->site().offset == 5);
}

TEST_CASE("host_executor.drain_stops_sources_and_delivers_everything_published") {
  topology_builder b("drain");
  b.topic("t0").frame_bytes(4 * KiB).capacity(8);
  b.topic("t1").frame_bytes(4 * KiB).capacity(8);
  b.link({}, op("source", "sequence_source").threads(2).param("total_bytes", "1TiB"), {"t0"});
  b.link({"t0"}, op("scale", "scale").on(placement::gpu), {"t1"});
  b.link({"t1"}, op("verify", "verify_sink").threads(2), {});
  run_control control;
  std::thread interrupter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    control.request_drain();
  });
  const auto out = run(b.build(), &control);
  interrupter.join();
  CHECK(out.stats.status == xf::run_status::interrupted);
  const auto& verify = stats_of(out.stats, "verify");
  CHECK(verify.counters.at("frames") > 0);
  check_clean(verify, out.stats.topics[1].frames);
}

TEST_CASE("host_executor.an_unfinished_run_keeps_its_partial_output_and_a_trial_run_removes_it") {
  // A run that fails leaves what its file sink wrote under `<path>.partial` (the user may want it, and
  // a resume continues it); a trial run (run_options::discard_outputs, xeflow-tune's) leaves nothing.
  for (const bool trial : {false, true}) {
    CAPTURE(trial);
    test::scratch_dir dir;
    const std::string path = dir.file("out.bin");
    topology_builder b("unfinished");
    b.topic("t0").frame_bytes(4 * KiB).capacity(2);
    b.topic("t1").frame_bytes(4 * KiB).capacity(2);
    b.link({}, op("source", "sequence_source").param("total_bytes", "1MiB"), {"t0"});
    b.link({"t0"}, op("boom", "throw_at").param("at", 40), {"t1"});
    b.link({"t1"}, op("sink", "file_sink").param("path", path), {});
    topology_spec spec = b.build();
    validate_topology(spec, executor_registry());
    const plan p = make_plan(spec, executor_registry(), plan_options{});
    run_options options;
    options.discard_outputs = trial;
    run_control control;
    const run_stats stats = run_topology(p, spec, control, options);
    CHECK(stats.status == xf::run_status::failed);
    CHECK_FALSE(std::filesystem::exists(path));
    CHECK(std::filesystem::exists(path + ".partial") == !trial);
  }
}

TEST_CASE("host_executor.stats_json_is_valid") {
  topology_builder b("json");
  b.topic("t").frame_bytes(4 * KiB).capacity(2);
  b.link({}, op("source", "sequence_source").param("total_bytes", "64KiB"), {"t"});
  b.link({"t"}, op("sink", "null_sink"), {});
  const auto out = run(b.build());
  const auto doc = nlohmann::json::parse(format_stats_json(out.stats));
  CHECK(doc["status"] == "completed");
  CHECK(doc["operators"].size() == 2);
  CHECK(doc["topics"][0]["frames"] == 16);
  // Where the wall clock went: every step of the run in order, none longer than the run.
  std::vector<std::string> phases;
  double phase_seconds = 0;
  for (const auto& ph : doc["phases"]) {
    phases.push_back(ph["name"].get<std::string>());
    CHECK(ph["seconds"].get<double>() >= 0);
    phase_seconds += ph["seconds"].get<double>();
  }
  CHECK(phases ==
        std::vector<std::string>{"executor", "topics", "operators", "kernel start", "run", "finish"});
  CHECK(phase_seconds <= doc["wall_seconds"].get<double>() + 1e-6);
  const std::string table = format_stats_table(out.stats);
  CHECK(table.find("source") != std::string::npos);
  CHECK(table.find("blocked s") != std::string::npos);
  CHECK(table.find("phases: executor") != std::string::npos);
}

TEST_CASE("executor.stats_json_replaces_bytes_that_are_not_utf8") {
  // Names reach the stats from the topology (UTF-8 by the loader) and from errors the system words; a byte
  // that is not UTF-8 becomes U+FFFD instead of ending the process in the JSON library.
  run_stats s;
  s.topology = "caf\xe9";
  s.error = "file '/tmp/\xff': cannot open";
  const auto doc = nlohmann::json::parse(format_stats_json(s));
  CHECK(doc["topology"] == "caf\xef\xbf\xbd");
  CHECK(doc["error"].get<std::string>().find("/tmp/\xef\xbf\xbd") != std::string::npos);
}

TEST_CASE("executor.stats_show_the_partition_and_its_tunings") {
  run_stats s;
  s.topology = "t";
  s.executor = "device (test)";
  s.status = xf::run_status::completed;
  partition_stats p;
  p.policy = "auto";
  p.operators = {"light", "heavy"};
  p.warps = {10, 22};
  p.items_per_round = {1, 1};
  p.items_per_frame = {1, 4};
  p.items = {1000, 1000};
  p.item_us = {2.0, 4.0};
  p.busy_round_us = 5.0;
  p.switches = 18;
  p.sm_clock_mhz = 1000;
  tuning_record t;
  t.reason = "start";
  t.start_ms = 1;
  t.end_ms = 41;
  t.samples.push_back({{16, 16}, {2000, 6000}, {50, 50}, 2, 1});
  t.coarse_windows = 1;
  t.coarse_fits.resize(2);
  t.fits.resize(2);
  t.fits[1].model = {NAN, NAN, NAN};
  t.choice.warps = {10, 22};
  t.chosen = partition_window{{10, 22}, {2000, 4000}, {60, 60}, 30, 5};
  p.tunings.push_back(t);
  s.partition = p;
  const auto doc = nlohmann::json::parse(format_stats_json(s));
  REQUIRE(doc.contains("partition"));
  CHECK(doc["partition"]["policy"] == "auto");
  CHECK(doc["partition"]["operators"][1]["warps"] == 22);
  CHECK(doc["partition"]["operators"][1]["items_per_frame"] == 4);
  CHECK(doc["partition"]["operators"][1]["busy_round_share"].get<double>() == doctest::Approx(0.8));
  const auto& tuning = doc["partition"]["tunings"][0];
  CHECK(tuning["result"] == nlohmann::json({10, 22}));
  CHECK(tuning["windows"][0]["round_us"].get<double>() == doctest::Approx(6.0));  // 6000 cycles at 1 GHz
  CHECK(tuning["fits"][1]["theta"].is_null());  // nothing known of it: null, not NaN in the JSON
  const std::string table = format_stats_table(s);
  CHECK(table.find("partition: auto") != std::string::npos);
  CHECK(table.find("chose 10 22") != std::string::npos);
}

TEST_CASE("executor.stats_show_the_kernels_fences_and_how_busy_a_round_keeps_a_block") {
  run_stats s;
  s.topology = "t";
  s.executor = "device (test)";
  s.status = xf::run_status::completed;
  kernel_breakdown k;
  k.subscribe = 100'000;
  k.schedule = 10'000;
  k.compute = 700'000;
  k.publish = 90'000;
  k.idle = 100'000;
  k.fence = 30'000;
  k.fences = 10;
  k.sm_clock_mhz = 1000;  // a cycle a ns: 3 000 cycles a fence are 3 µs
  k.rounds = 5;
  k.busy_rounds = 4;
  k.placed_warps = 50;  // 12.5 of 32 a busy round
  k.computed_items = 10;
  k.blocks = 2;
  k.warps_per_block = 32;
  s.kernel = k;
  const auto doc = nlohmann::json::parse(format_stats_json(s));
  CHECK(doc["kernel"]["fence_cycles"] == 30'000);
  CHECK(doc["kernel"]["fences"] == 10);
  CHECK(doc["kernel"]["placed_warps"] == 50);
  CHECK(doc["kernel"]["computed_items"] == 10);
  CHECK(doc["kernel"]["sm_clock_mhz"].get<double>() == doctest::Approx(1000));
  const std::string table = format_stats_table(s);
  INFO(table);
  CHECK(table.find("of which fences") != std::string::npos);
  CHECK(table.find("a busy round: 12.5 of 32 warps ran 2.5 items") != std::string::npos);
  CHECK(table.find("release fence: 3.00 us on average over 10 fences") != std::string::npos);
}

TEST_CASE("host_executor.gpu_sinks_fold_memory_handed_over_by_the_program") {
  // A text in the program's own memory (no file), counted by word_count on host kernel blocks and placed on
  // CPU threads: the same counters; finish runs once the stream has ended.
  std::string text;
  for (int i = 0; i < 30'000; ++i) text += (i % 3 == 0 ? "alpha " : i % 3 == 1 ? "beta\n" : "gamma ");
  register_memory_dataset("words", std::as_bytes(std::span(text)));
  for (const placement where : {placement::gpu, placement::cpu}) {
    CAPTURE(static_cast<int>(where));
    topology_builder b("wordcount");
    b.topic("text").frame_bytes(4 * KiB).capacity(8).element(element_type::u8);
    b.link({}, op("source", "text_source").threads(2).param("path", "memory:words"), {"text"});
    b.link({"text"}, op("count", "word_count").on(where).param("table_slots", std::int64_t{64}), {});
    const auto out = run(b.build());
    REQUIRE(out.stats.status == xf::run_status::completed);
    const operator_stats& count = stats_of(out.stats, "count");
    CHECK(count.counters.at("words") == 30'000);
    CHECK(count.counters.at("distinct_words") == 3);
    CHECK(count.frames_in == stats_of(out.stats, "source").counters.at("frames"));
    CHECK(count.frames_out == 0);
  }
  unregister_memory_dataset("words");

  // Memory handed over read-only cannot be written back, and an unknown name is named.
  std::vector<std::byte> records(64 * 100);
  register_memory_dataset("particles", std::span<const std::byte>(records));
  topology_builder b("writeback");
  b.topic("xyz").frame_bytes(4 * KiB).capacity(4).element(element_type::f32);
  b.topic("ids").frame_bytes(4 * KiB).capacity(4).element(element_type::f32);
  b.link({},
         op("particles", "prefetch_source")
             .param("path", "memory:particles")
             .param("record_bytes", std::int64_t{64})
             .param("fields", "0:12"),
         {"xyz"});
  b.link({"xyz"}, op("assign", "kmeans_assign").on(placement::gpu).param("centres", "0 0 0"), {"ids"});
  b.link({"ids"},
         op("store", "prefetch_writeback")
             .param("path", "memory:particles")
             .param("record_bytes", std::int64_t{64})
             .param("fields", "12:4")
             .param("records_per_frame", std::int64_t{341}),
         {});
  const auto read_only = run(b.build());
  REQUIRE(read_only.failure);
  CHECK(std::string(read_only.failure->what()).find("handed over read-only") != std::string::npos);
  unregister_memory_dataset("particles");
  const auto missing = run(b.build());
  REQUIRE(missing.failure);
  CHECK(std::string(missing.failure->what()).find("no memory dataset is registered under 'particles'") !=
        std::string::npos);

  // Writable memory: the K-means ids land in the program's records.
  for (std::size_t r = 0; r < 100; ++r) {
    const float x = static_cast<float>(r);
    std::memcpy(records.data() + r * 64, &x, 4);
    std::memset(records.data() + r * 64 + 12, 0xff, 4);
  }
  register_memory_dataset("particles", std::span<std::byte>(records));
  topology_builder w("writeback");
  w.topic("xyz").frame_bytes(4 * KiB).capacity(4).element(element_type::f32);
  w.topic("ids").frame_bytes(4 * KiB).capacity(4).element(element_type::f32);
  w.link({},
         op("particles", "prefetch_source")
             .param("path", "memory:particles")
             .param("record_bytes", std::int64_t{64})
             .param("fields", "0:12"),
         {"xyz"});
  w.link({"xyz"}, op("assign", "kmeans_assign").on(placement::gpu).param("centres", "0 0 0; 99 0 0"),
         {"ids"});
  w.link({"ids"},
         op("store", "prefetch_writeback")
             .param("path", "memory:particles")
             .param("record_bytes", std::int64_t{64})
             .param("fields", "12:4")
             .param("records_per_frame", std::int64_t{341}),
         {});
  const auto written = run(w.build());
  REQUIRE(written.stats.status == xf::run_status::completed);
  for (std::size_t r = 0; r < 100; ++r) {
    std::uint32_t id = 0;
    std::memcpy(&id, records.data() + r * 64 + 12, 4);
    CHECK(id == (r < 50 ? 0u : 1u));
  }
  unregister_memory_dataset("particles");
}

TEST_CASE("executor.a_run_sets_its_threads_timer_slack_and_gives_the_callers_back") {
  const std::uint64_t before = scoped_timer_slack::current_ns();
  {
    const scoped_timer_slack slack(2000);
#if defined(__linux__)
    CHECK(scoped_timer_slack::current_ns() == 2000);
    // Threads started now inherit it: those of a run start inside run_topology's.
    std::uint64_t in_thread = 0;
    std::thread([&] { in_thread = scoped_timer_slack::current_ns(); }).join();
    CHECK(in_thread == 2000);
#endif
  }
  CHECK(scoped_timer_slack::current_ns() == before);
  topology_builder b = scale_chain("slack", 4, "64KiB");
  b.runtime().timer_slack_us(5);
  const auto out = run(b.build());
  CHECK(out.stats.status == xf::run_status::completed);
  CHECK(scoped_timer_slack::current_ns() == before);
}

TEST_CASE("executor.a_wait_sleeps_at_most_the_process_cap_and_never_at_0") {
  REQUIRE(backoff_sleep_cap_us().load() == no_sleep_cap);
  const backoff_policy policy{.spins = 2, .yields = 2, .first_sleep_us = 8, .max_sleep_us = 32};
  const auto sleeps = [&](std::uint32_t cap, int pauses) {
    const scoped_backoff_sleep_cap scoped(cap);
    backoff b(policy);
    std::vector<std::uint32_t> seen;
    for (int i = 0; i < pauses; ++i) {
      seen.push_back(b.next_sleep_us());
      b.pause();
    }
    return seen;
  };
  // Two spins, two yields, then sleeps doubling to the policy's longest.
  CHECK(sleeps(no_sleep_cap, 8) == std::vector<std::uint32_t>{0, 0, 0, 0, 8, 16, 32, 32});
  CHECK(sleeps(10, 7) == std::vector<std::uint32_t>{0, 0, 0, 0, 8, 10, 10});
  CHECK(sleeps(0, 7) == std::vector<std::uint32_t>{0, 0, 0, 0, 0, 0, 0});
  CHECK(backoff_sleep_cap_us().load() == no_sleep_cap);
}

TEST_CASE("executor.a_run_caps_its_waits_sleeps_and_gives_the_callers_cap_back") {
  topology_builder b = scale_chain("no_sleep", 2, "256KiB");
  b.runtime().max_sleep_us(0);
  const auto out = run(b.build());
  CHECK(out.stats.status == xf::run_status::completed);
  check_clean(stats_of(out.stats, "verify"), 64);
  CHECK(backoff_sleep_cap_us().load() == no_sleep_cap);
}

TEST_CASE("host_executor.a_resumed_run_starts_each_stream_at_its_sinks_smallest_commit") {
  // Two independent streams: a C(G)C chain fanned out to two verify sinks, and a source straight into a
  // third. Each restarts at the smallest commit of its own sinks, offsets absolute; the verify sinks check
  // the offsets from there on and count nothing below it as lost; the checkpoint ends complete.
  topology_builder b("two_streams");
  for (const char* t : {"a0", "a1", "b0"}) b.topic(t).frame_bytes(4 * KiB).capacity(3);
  b.link({},
         op("source_a", "sequence_source").threads(2).param("total_bytes", std::int64_t{400 * 4 * KiB + 8}),
         {"a0"});
  b.link({"a0"}, op("scale", "scale").on(placement::gpu).param("factor", 3.0), {"a1"});
  b.link({"a1"}, op("verify_a", "verify_sink").threads(2), {});
  b.link({"a1"}, op("verify_a2", "verify_sink"), {});
  b.link({}, op("source_b", "random_source").param("total_bytes", "1MiB"), {"b0"});
  b.link({"b0"}, op("verify_b", "verify_sink").threads(2), {});
  topology_spec spec = b.build();
  validate_topology(spec, executor_registry());
  const plan p = make_plan(spec, executor_registry(), plan_options{});
  REQUIRE_FALSE(checkpoint_refusal(p).has_value());
  checkpoint_state state;
  state.sinks = {{"verify_a", "a1", 250}, {"verify_a2", "a1", 123}, {"verify_b", "b0", 77}};
  const std::vector<std::uint64_t> first = resume_offsets(p, state);
  for (std::size_t t = 0; t < p.topics.size(); ++t)
    CHECK(first[t] == (p.topics[t].spec->name == "b0" ? 77u : 123u));
  state.sinks.pop_back();
  CHECK_THROWS_WITH_AS(resume_offsets(p, state), "the checkpoint has no entry for sink 'verify_b'",
                       std::runtime_error);

  test::scratch_dir dir;
  checkpoint_options checkpointing;
  checkpointing.path = dir.file("run.ckpt");
  checkpointing.interval = std::chrono::milliseconds(1);
  checkpointing.topology_hash = "0123456789abcdef";
  run_options options;
  options.checkpoint = &checkpointing;
  options.first_offsets = first;
  options.resumed = true;
  run_control control;
  const run_stats stats = run_topology(p, spec, control, options);
  REQUIRE_MESSAGE(stats.status == xf::run_status::completed, stats.error);
  check_clean(stats_of(stats, "verify_a"), 401 - 123);
  check_clean(stats_of(stats, "verify_a2"), 401 - 123);
  check_clean(stats_of(stats, "verify_b"), 256 - 77);
  for (const auto& t : stats.topics) CHECK(t.end_offset == (t.name == "b0" ? 256u + 1 : 401u + 2));
  const checkpoint_state after = read_checkpoint(checkpointing.path);
  CHECK(after.complete);
  CHECK(after.topology_hash == "0123456789abcdef");
  REQUIRE(after.sinks.size() == 3);
  CHECK(after.sinks[0].committed == 403);
  CHECK(after.sinks[2].committed == 257);
  REQUIRE(after.sources.size() == 2);
  CHECK(after.sources[1].name == "source_b");
  CHECK(after.sources[1].restart_offset == 257);
  CHECK_FALSE(std::filesystem::exists(checkpointing.path + ".tmp"));
  CHECK_THROWS_WITH_AS(parse_checkpoint("{]"), "not a checkpoint: not JSON", std::runtime_error);
}
