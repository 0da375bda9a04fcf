// Tests of the address stage's CPU half: address frames from the GPU operators (run on the host) assembled
// into the frames prefetch_source makes, texts in lane order, the counters and their replay, and every bad
// frame or configuration named with operator, topic and offset.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "framework/core/errors.hpp"
#include "operators/builtin.hpp"
#include "operators/sources/prefetch/gather.hpp"
#include "operators/sources/prefetch/record_layout.hpp"
#include "tests/operators/operator_fixtures.hpp"
#include "tests/operators/transforms/address_stage_fixtures.hpp"

using namespace xf;
using namespace xf::testing;

namespace {

/// A started assembler over `path` (address topic `addresses` of `frame_words` u64, data topic of
/// `data_bytes` bytes of `element`).
struct assembler_under_test {
  operator_registry registry;
  std::unique_ptr<cpu_operator> op;

  assembler_under_test(const std::string& path, std::int64_t item_bytes, std::uint64_t frame_words,
                       std::uint64_t data_bytes, element_type element) {
    register_builtin_operators(registry);
    op = registry.find("prefetch_assembler")->make_cpu({{"path", path}, {"item_bytes", item_bytes}}, {});
    operator_setup setup;
    setup.name = "assemble";
    setup.inputs.push_back(topic("addresses", frame_words * 8, element_type::u64));
    setup.outputs.push_back(topic("data", data_bytes, element));
    op->on_start(setup);
  }
  cpu_map& map() { return dynamic_cast<cpu_map&>(*op); }

  /// The data frame assembled from `words` at `offset` (capacity `capacity` bytes).
  std::vector<std::byte> assemble(const std::vector<std::uint64_t>& words, std::uint64_t offset,
                                  std::uint64_t capacity, bool replay = false) {
    std::vector<std::byte> out(capacity, std::byte{0x5a});
    const frame_in in{reinterpret_cast<const std::byte*>(words.data()), words.size() * 8, element_type::u64};
    frame_out fo{out.data(), capacity, in.bytes, element_type::f32};
    if (replay)
      map().replay(offset, in, fo);
    else
      map().on_frame(offset, in, fo);
    out.resize(fo.bytes);
    return out;
  }
};

/// The run_error message of assembling `words` at `offset`, or "".
std::string assemble_error(assembler_under_test& a, const std::vector<std::uint64_t>& words,
                           std::uint64_t offset, std::uint64_t capacity) {
  try {
    a.assemble(words, offset, capacity);
  } catch (const run_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("prefetch.assembled_records_are_prefetch_source_frames") {
  // 1070 particles of 64 bytes, 200 per frame (the last 70), 12 lanes: frame o assembled from the GPU's
  // addresses equals gather_records' frame o (prefetch_source's), patterns on or off.
  constexpr std::uint64_t records = 1070, per_frame = 200, frame_words = 2048;
  const std::vector<std::byte> dataset = pattern_bytes(records * 64);
  temp_path file;
  write_file(file.str(), dataset);
  const prefetch::record_layout layout{64, 4, 1, {{0, 12}}};
  std::uint64_t address_words_on = 0;
  for (bool patterns : {true, false}) {
    CAPTURE(patterns);
    assembler_under_test a(file.str(), 4, frame_words, 16384, element_type::f32);
    std::uint64_t words = 0;
    for (std::uint64_t o = 0; o < 6; ++o) {
      CAPTURE(o);
      const std::uint64_t n = std::min(per_frame, records - o * per_frame);
      const address_run run = run_address_stage("prefetch_addresses_records", kmeans_fields(12, patterns),
                                                range_frame(o * per_frame, n, frame_words), o);
      REQUIRE(run.failure == 0);
      words += 3 + 12 + used_words(run.words);
      std::vector<std::byte> expected(n * 12);
      prefetch::gather_records(dataset, layout, o * per_frame, n, expected);
      CHECK(a.assemble(run.words, o, 16384) == expected);
      // A replay gives the same frame and is not counted.
      CHECK(a.assemble(run.words, o, 16384, true) == expected);
    }
    const operator_counters c = a.op->counters();
    CHECK(c.at("addresses") == records * 3);
    CHECK(c.at("items") == records * 3);
    CHECK(c.at("bytes_gathered") == records * 12);
    CHECK(c.at("address_bytes") == words * 8);
    CHECK(c.at("compression_percent") == records * 3 * 800 / (words * 8));
    if (patterns)
      address_words_on = words;
    else
      CHECK(address_words_on * 3 < words);  // 16 or 17 addresses per lane and item in full frames: a
                                            // pattern of 4 words each (the short frame stays explicit)
  }
}

TEST_CASE("prefetch.assembled_text_is_in_lane_order") {
  // 10 000 bytes, 300 per lane. With 1 lane a frame is the text's next 300 bytes as they are; with 4, byte
  // k of lane l sits at 4k + l, and the last frame (lanes of 300, 100, 0, 0 bytes) ends after the last
  // byte any lane has, zeros where a lane has none.
  const std::vector<std::byte> text = pattern_bytes(10000, 3);
  temp_path file;
  write_file(file.str(), text);
  for (std::int64_t lanes : {1, 4}) {
    CAPTURE(lanes);
    assembler_under_test a(file.str(), 1, 2048, 16384, element_type::u8);
    const param_map values{{"bytes_per_lane", std::int64_t{300}}, {"lanes", lanes}, {"patterns", true}};
    const std::uint64_t per_frame = 300 * static_cast<std::uint64_t>(lanes);
    const std::uint64_t frames = (10000 + per_frame - 1) / per_frame;
    std::vector<std::byte> all;
    for (std::uint64_t o = 0; o < frames; ++o) {
      const std::uint64_t first = o * per_frame;
      const address_run run =
          run_address_stage("prefetch_addresses_bytes", values,
                            range_frame(first, std::min<std::uint64_t>(per_frame, 10000 - first), 2048), o);
      REQUIRE(run.failure == 0);
      const std::vector<std::byte> frame = a.assemble(run.words, o, 16384);
      for (std::uint64_t p = 0; p < frame.size(); ++p) {
        const std::uint64_t l = p % lanes, k = p / lanes;
        const std::uint64_t at = (o * lanes + l) * 300 + k;
        const std::byte expected =
            at < std::min<std::uint64_t>((o * lanes + l + 1) * 300, 10000) ? text[at] : std::byte{0};
        REQUIRE(frame[p] == expected);
      }
      all.insert(all.end(), frame.begin(), frame.end());
    }
    if (lanes == 1)
      CHECK(all == text);
    else
      CHECK(all.size() == 8 * 1200 + (299 * 4 + 1));
  }
}

TEST_CASE("prefetch.assembler_names_bad_frames") {
  const std::vector<std::byte> dataset = pattern_bytes(100 * 64);
  temp_path file;
  write_file(file.str(), dataset);
  assembler_under_test a(file.str(), 4, 1024, 16384, element_type::f32);
  const address_run good =
      run_address_stage("prefetch_addresses_records", kmeans_fields(8, true), range_frame(50, 50, 1024), 1);
  REQUIRE(good.failure == 0);
  const std::string site = "operator 'assemble', topic 'addresses', offset 1";

  std::vector<std::uint64_t> words = good.words;
  words[0] = 42;
  std::string e = assemble_error(a, words, 1, 16384);
  CHECK(e.find(site) != std::string::npos);
  CHECK(e.find("not an address frame") != std::string::npos);

  words = good.words;
  words[2] = 1000;  // regions past the frame's end
  CHECK(assemble_error(a, words, 1, 16384).find("do not fit a frame of 1024 words") != std::string::npos);

  words = good.words;
  words[3 + 5] = words[2] + 1;  // lane 5 claims more words than its region
  CHECK(assemble_error(a, words, 1, 16384).find("lane 5 used") != std::string::npos);

  words = good.words;
  const prefetch::address_frame_shape shape{words[1], words[2]};
  words[shape.region_index(2)] = std::uint64_t{3} << 62;  // lane 2: a word of no known kind
  CHECK(assemble_error(a, words, 1, 16384).find("lane 2, item 0: malformed address words") !=
        std::string::npos);

  // The data frame holds 50 records' 12 bytes only when it has 600 bytes: 64 is 2 items per lane of 8.
  e = assemble_error(a, good.words, 1, 64);
  CHECK(e.find(site) != std::string::npos);
  CHECK(e.find("holds 2 items per lane of 8") != std::string::npos);

  // Records the file does not have (a range for another dataset): addresses past the dataset's end.
  const address_run past =
      run_address_stage("prefetch_addresses_records", kmeans_fields(8, true), range_frame(350, 50, 1024), 7);
  REQUIRE(past.failure == 0);
  e = assemble_error(a, past.words, 7, 16384);
  CHECK(e.find("offset 7") != std::string::npos);
  CHECK(e.find("an address past the dataset's end (address 22400, dataset 6400 bytes)") != std::string::npos);
}

TEST_CASE("prefetch.assembler_names_bad_configurations") {
  temp_path file;
  write_file(file.str(), pattern_bytes(4096));
  operator_registry registry;
  register_builtin_operators(registry);
  const auto start_error = [&](const std::string& path, std::int64_t item, element_type in,
                               element_type out) {
    auto op = registry.find("prefetch_assembler")->make_cpu({{"path", path}, {"item_bytes", item}}, {});
    operator_setup setup;
    setup.name = "assemble";
    setup.inputs.push_back(topic("addresses", 4096, in));
    setup.outputs.push_back(topic("data", 4096, out));
    try {
      op->on_start(setup);
    } catch (const run_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(start_error(file.str(), 4, element_type::u64, element_type::f32).empty());
  CHECK(start_error(file.str(), 4, element_type::u32, element_type::f32).find("u64 words, not u32") !=
        std::string::npos);
  CHECK(start_error(file.str(), 3, element_type::u64, element_type::u8).find("1, 2, 4, 8 or 16") !=
        std::string::npos);
  CHECK(start_error(file.str(), 4, element_type::u64, element_type::f64).find("not whole elements") !=
        std::string::npos);
  const std::string missing = start_error(file.str() + ".missing", 4, element_type::u64, element_type::f32);
  CHECK(missing.find("operator 'assemble', topic 'addresses'") != std::string::npos);
  CHECK(missing.find(".missing") != std::string::npos);
}
