// Tests of the address stage's GPU operators run on the host: the frame format (header, used words, every
// other word zero), each built-in generator's addresses against its closed form with patterns on and off,
// the same frame for any thread count, the failure codes, the parameters checked at load, and a user's
// own generator.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"
#include "operators/builtin.hpp"
#include "operators/transforms/prefetch_addresses.hpp"
#include "tests/operators/transforms/address_stage_fixtures.hpp"

using namespace xf;
using namespace xf::testing;

TEST_CASE("prefetch.address_frame_format") {
  const address_run run =
      run_address_stage("prefetch_addresses_records", kmeans_fields(8, true), range_frame(100, 100, 4096), 1);
  REQUIRE(run.failure == 0);
  const auto& w = run.words;
  CHECK(w[0] == prefetch::address_frame_magic);
  CHECK(w[1] == 8);
  CHECK(w[2] == (4096 - 3 - 8) / 8);
  const prefetch::address_frame_shape shape{w[1], w[2]};
  // Every word past each lane's used words is zero, up to the frame's end: no stale word survives.
  for (std::uint64_t l = 0; l < 8; ++l)
    for (std::uint64_t k = w[shape.used_index(l)]; k < shape.words_per_lane; ++k)
      REQUIRE(w[shape.region_index(l) + k] == 0);
  for (std::uint64_t i = shape.words(); i < w.size(); ++i) REQUIRE(w[i] == 0);
}

TEST_CASE("prefetch.record_addresses_follow_the_closed_form_with_patterns_on_and_off") {
  // Frames of 200 records and a short one of 70, 4 lanes. In the short frame an item's records start on
  // another lane (70 is not a multiple of 4) and lanes have 53 or 52 items.
  for (const auto& frame : {std::pair<std::uint64_t, std::uint64_t>{0, 200}, {600, 200}, {1000, 70}}) {
    // Named copies, not structured bindings: clang before 16 cannot capture those in a lambda.
    const std::uint64_t first = frame.first, n = frame.second;
    CAPTURE(first);
    const auto expected =
        expected_record_lanes(4, n, 64, {0, 4, 8}, [&](std::uint64_t j) { return first + j; });
    const address_run on = run_address_stage("prefetch_addresses_records", kmeans_fields(4, true),
                                             range_frame(first, n, 4096), 0);
    const address_run off = run_address_stage("prefetch_addresses_records", kmeans_fields(4, false),
                                              range_frame(first, n, 4096), 0);
    REQUIRE(on.failure == 0);
    REQUIRE(off.failure == 0);
    CHECK(lane_addresses(on.words) == expected);
    CHECK(lane_addresses(off.words) == expected);
    // Off: every address and one run header per lane. On: a lane reads each item of every 4th record (a
    // stride of 256 bytes), so each of the three items is one pattern of 4 words.
    CHECK(used_words(off.words) == 3 * n + 4);
    CHECK(used_words(on.words) == 4 * 3 * 4);
  }
}

TEST_CASE("prefetch.record_addresses_with_one_record_per_lane") {
  // R = L: lane l of frame o reads record o·L + l; an empty range makes an empty frame.
  const address_run run =
      run_address_stage("prefetch_addresses_records", kmeans_fields(16, true), range_frame(32, 16, 1024), 2);
  REQUIRE(run.failure == 0);
  const auto lanes = lane_addresses(run.words);
  for (std::uint64_t l = 0; l < 16; ++l)
    CHECK(lanes[l] == std::vector<std::uint64_t>{(32 + l) * 64, (32 + l) * 64 + 4, (32 + l) * 64 + 8});
  const address_run empty =
      run_address_stage("prefetch_addresses_records", kmeans_fields(16, true), range_frame(32, 0, 1024), 2);
  REQUIRE(empty.failure == 0);
  CHECK(used_words(empty.words) == 0);
}

TEST_CASE("prefetch.address_frames_do_not_depend_on_the_thread_count") {
  const address_run one = run_address_stage("prefetch_addresses_records", kmeans_fields(24, true),
                                            range_frame(1500, 300, 8192), 5, 1);
  for (std::uint32_t threads : {7u, 32u, 256u}) {
    CAPTURE(threads);
    const address_run many = run_address_stage("prefetch_addresses_records", kmeans_fields(24, true),
                                               range_frame(1500, 300, 8192), 5, threads);
    CHECK(many.failure == 0);
    CHECK(many.words == one.words);
  }
}

TEST_CASE("prefetch.byte_addresses_follow_the_closed_form") {
  // 4 lanes of 300 bytes: a frame of 1200 bytes from 9600, and the text's last one of 400 from 9600
  // (lane 0 300 bytes, lane 1 100, lanes 2 and 3 none).
  for (bool patterns : {true, false}) {
    CAPTURE(patterns);
    const param_map values{
        {"bytes_per_lane", std::int64_t{300}}, {"lanes", std::int64_t{4}}, {"patterns", patterns}};
    for (std::uint64_t count : {1200, 400}) {
      CAPTURE(count);
      const address_run run =
          run_address_stage("prefetch_addresses_bytes", values, range_frame(9600, count, 2048), 8);
      REQUIRE(run.failure == 0);
      const auto lanes = lane_addresses(run.words);
      for (std::uint64_t l = 0; l < 4; ++l) {
        std::vector<std::uint64_t> expected;
        for (std::uint64_t a = 9600 + l * 300; a < std::min(9600 + (l + 1) * 300, 9600 + count); ++a)
          expected.push_back(a);
        CHECK(lanes[l] == expected);
      }
      // Word count's case: one pattern (4 words) per lane with patterns on, a word per byte without.
      if (count == 1200) CHECK(used_words(run.words) == (patterns ? 4 * 4 : 4 * 301));
    }
    CHECK(run_address_stage("prefetch_addresses_bytes", values, range_frame(0, 1201, 2048), 0).failure ==
          address_fault::range_too_long);
  }
}

TEST_CASE("prefetch.indexed_addresses_read_the_records_the_input_names") {
  // 50 indices of 5000 records, shuffled, at the start of the input frame; two fields of 32-byte records
  // (an 8-byte one of two items at 8, a 4-byte one at 20): three items per record.
  std::vector<std::uint64_t> in(2048, 0);
  std::vector<std::uint64_t> indices(5000);
  std::iota(indices.begin(), indices.end(), 0);
  std::shuffle(indices.begin(), indices.end(), std::mt19937_64(11));
  std::copy_n(indices.begin(), 50, in.begin());
  const param_map values{{"record_bytes", std::int64_t{32}},
                         {"fields", std::string("8:8, 20:4")},
                         {"indices_per_frame", std::int64_t{50}},
                         {"lanes", std::int64_t{16}},
                         {"patterns", true}};
  const address_run run = run_address_stage("prefetch_addresses_indexed", values, in, 4);
  REQUIRE(run.failure == 0);
  CHECK(lane_addresses(run.words) ==
        expected_record_lanes(16, 50, 32, {8, 12, 20}, [&](std::uint64_t j) { return in[j]; }));

  // A short list: 2^64 − 1 from element 37 on ends it.
  std::fill(in.begin() + 37, in.begin() + 50, ~std::uint64_t{0});
  const address_run short_list = run_address_stage("prefetch_addresses_indexed", values, in, 5);
  REQUIRE(short_list.failure == 0);
  CHECK(lane_addresses(short_list.words) ==
        expected_record_lanes(16, 37, 32, {8, 12, 20}, [&](std::uint64_t j) { return in[j]; }));
}

TEST_CASE("prefetch.address_stage_failure_codes") {
  SUBCASE("a lane overflowing its region fails the frame, nothing is dropped silently") {
    // 64 lanes in 512 words: 6 words per lane; a lane's 9 addresses (192 records · 3 items / 64) need 10.
    CHECK(
        run_address_stage("prefetch_addresses_records", kmeans_fields(64, false), range_frame(0, 192, 512), 0)
            .failure == address_fault::lane_overflow);
    // 9 addresses are too few for a pattern (a window of 16): patterns do not save it.
    CHECK(
        run_address_stage("prefetch_addresses_records", kmeans_fields(64, true), range_frame(0, 192, 512), 0)
            .failure == address_fault::lane_overflow);
  }
  SUBCASE("a frame too small for its lanes") {
    CHECK(
        run_address_stage("prefetch_addresses_records", kmeans_fields(600, true), range_frame(0, 10, 512), 0)
            .failure == address_fault::frame_too_small);
  }
  SUBCASE("an input frame that carries no range") {
    // Paced by a sequence_source instead of a prefetch_ranges: its elements are not read as a range.
    std::vector<std::uint64_t> sequence(1024);
    std::iota(sequence.begin(), sequence.end(), 0);
    CHECK(run_address_stage("prefetch_addresses_records", kmeans_fields(8, true), sequence, 0).failure ==
          address_fault::no_range);
    CHECK(run_address_stage("prefetch_addresses_bytes", {{"lanes", std::int64_t{8}}}, sequence, 0).failure ==
          address_fault::no_range);
  }
  SUBCASE("topics that are not u64: the operator accepts u64 only, and a frame of another type is refused") {
    operator_registry registry;
    register_builtin_operators(registry);
    const operator_entry* entry = registry.find("prefetch_addresses_records");
    CHECK(entry->info.elements == element_set{element_type::u64});  // validation refuses other topics
    param_map values = kmeans_fields(8, true);
    REQUIRE(normalize_params(entry->info, values).empty());
    const auto kernel = entry->make_host_kernel(values, {});
    std::vector<std::uint32_t> in(1024), out(1024);
    const frame_in fi{reinterpret_cast<const std::byte*>(in.data()), 4096, element_type::u32};
    frame_out fo{reinterpret_cast<std::byte*>(out.data()), 4096, 4096, element_type::u32};
    CHECK_THROWS_WITH_AS(kernel->run_frame(fi, &fo, 0, nullptr, 32),
                         doctest::Contains("element type u32, which it does not accept"), std::logic_error);
  }
}

TEST_CASE("prefetch.address_stage_parameters_are_checked_at_load") {
  operator_registry registry;
  register_builtin_operators(registry);
  const operator_info& info = registry.find("prefetch_addresses_records")->info;
  CHECK(info.gpu);
  CHECK(info.whole_frames);
  CHECK(info.replayable);
  const auto problems = [&](param_map values) {
    std::string text;
    for (const auto& p : normalize_params(info, values)) text += p.message + "\n";
    return text;
  };
  CHECK(problems(kmeans_fields(8, true)).empty());
  param_map odd = kmeans_fields(8, true);
  odd["fields"] = std::string("0:10");  // not whole 4-byte items: needs item_bytes, a check of the whole
  CHECK(problems(odd).find("whole items") != std::string::npos);
  param_map past = kmeans_fields(8, true);
  past["fields"] = std::string("60:8");
  CHECK(problems(past).find("past the record") != std::string::npos);
  param_map malformed = kmeans_fields(8, true);
  malformed["fields"] = std::string("0;12");
  CHECK(problems(malformed).find("OFFSET:BYTES") != std::string::npos);
  param_map missing = kmeans_fields(8, true);
  missing.erase("record_bytes");
  CHECK(problems(missing).find("needs parameter 'record_bytes'") != std::string::npos);
  param_map whole = kmeans_fields(8, true);
  whole["fields"] = std::string("");  // the whole record: 16 items of 4 bytes
  CHECK(problems(whole).empty());
}

namespace {

/// A user's generator: lane l of frame o reads the 8-byte words at (o·L + l) + k·stride for k < count,
/// failing frames past `end` with its own code.
struct strided_words {
  struct params {
    std::int64_t count = 4;
    std::int64_t stride = 4096;
    std::int64_t end = 1 << 30;
  };
  static constexpr std::uint32_t past_end = address_fault::first_generator_code + 7;
  static constexpr const char* class_name = "strided_words";
  static constexpr const char* summary = "strided words";

  template <class Schema>
  static void describe(Schema& s) {
    s.param(&params::count, "count", "words per lane", params{}.count, 1);
    s.param(&params::stride, "stride", "bytes between a lane's words", params{}.stride, 8);
  }

  template <class Push>
  XF_HOST_DEVICE static std::uint32_t generate(const params& p, const address_lane& lane, Push& push) {
    const std::uint64_t first = (lane.offset * lane.lanes + lane.lane) * 8;
    if (first >= static_cast<std::uint64_t>(p.end)) return past_end;
    for (std::int64_t k = 0; k < p.count; ++k)
      if (!push(first + static_cast<std::uint64_t>(k * p.stride))) return 0;
    return 0;
  }
};

using strided_words_op = prefetch_addresses_op<strided_words>;
static_assert(std::is_trivially_copyable_v<strided_words_op::params>);

}  // namespace

TEST_CASE("prefetch.a_users_generator_runs_through_the_template") {
  operator_registry registry;
  registry.add_gpu_operators<gpu_operator_list<strided_words_op>>();
  const operator_entry* entry = registry.find("strided_words");
  REQUIRE(entry);
  CHECK(entry->info.gpu);
  CHECK(entry->info.description.find("strided words") == 0);
  CHECK(entry->info.find_param("lanes"));
  CHECK(entry->info.find_param("patterns"));
  CHECK(entry->info.find_param("stride"));

  strided_words_op::params p;
  p.count = 40;
  p.stride = 800;
  p.lanes = 3;
  std::vector<std::uint64_t> in(512), out(512);
  std::uint64_t failure = 0;
  frame_task<std::uint64_t> task;
  task.in = in.data();
  task.out = out.data();
  task.count = in.size();
  task.offset = 2;
  task.failure = &failure;
  task.thread_count = 2;
  for (task.thread_id = 0; task.thread_id < 2; ++task.thread_id) strided_words_op::compute(p, task);
  REQUIRE(failure == 0);
  const auto lanes = lane_addresses(out);
  for (std::uint64_t l = 0; l < 3; ++l) {
    CHECK(lanes[l].size() == 40);
    CHECK(lanes[l][39] == (6 + l) * 8 + 39 * 800);
    CHECK(out[3 + l] == 4);  // one pattern each: header, base, period, stride
  }
  p.end = 8;
  failure = 0;
  task.thread_id = 0;
  task.thread_count = 1;
  strided_words_op::compute(p, task);
  CHECK(failure == ((std::uint64_t{1} << 32) | strided_words::past_end));
}
