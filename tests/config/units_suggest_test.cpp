// The helpers config messages are made of: byte counts with units and "did you mean" suggestions.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "framework/core/units.hpp"
#include "framework/model/suggest.hpp"

using namespace xf;

TEST_CASE("config.units_parse_binary_and_decimal") {
  CHECK(parse_bytes("4096") == 4096u);
  CHECK(parse_bytes("0") == 0u);
  CHECK(parse_bytes("64KiB") == 64 * KiB);
  CHECK(parse_bytes("64 KiB") == 64 * KiB);
  CHECK(parse_bytes("1GiB") == GiB);
  CHECK(parse_bytes("2TiB") == 2 * TiB);
  CHECK(parse_bytes("512B") == 512u);
  CHECK(parse_bytes("64kB") == 64000u);
  CHECK(parse_bytes("64KB") == 64000u);  // decimal kilo: accepted, and then not a multiple of 4 KiB
  CHECK(parse_bytes("3MB") == 3000000u);
  CHECK(parse_bytes("16777215TiB") == 16777215 * TiB);
}

TEST_CASE("config.units_refuse_what_is_not_a_byte_count") {
  for (const char* text : {"", "KiB", "-1", "1.5GiB", "64kib", "64 KiBs", "0x1000", "18446744073709551616",
                           "16777216TiB", " 64KiB"}) {
    INFO(text);
    CHECK_FALSE(parse_bytes(text).has_value());
  }
  CHECK(bytes_syntax_problem("64kib") ==
        "unknown unit 'kib' in '64kib' (use B, KiB, MiB, GiB, TiB, or kB, MB, GB, TB)");
  CHECK(bytes_syntax_problem("lots") == "'lots' is not a byte count (write e.g. 4096, 64KiB, 1GiB)");
  CHECK(bytes_syntax_problem("-4096") == "'-4096' is not a byte count (write e.g. 4096, 64KiB, 1GiB)");
  CHECK(bytes_syntax_problem("16777216TiB") == "'16777216TiB' does not fit in 64 bits");
}

TEST_CASE("config.units_format") {
  CHECK(format_bytes(64 * KiB) == "64 KiB");
  CHECK(format_bytes(4097) == "4.00 KiB");
  CHECK(format_bytes(100) == "100 B");
  CHECK(format_bytes(3 * GiB / 2) == "1.50 GiB");
}

TEST_CASE("config.did_you_mean_typos") {
  const std::vector<std::string> keys{"frame_size", "capacity", "element", "layout"};
  CHECK(did_you_mean("capacty", keys) == " (did you mean 'capacity'?)");       // deletion
  CHECK(did_you_mean("frame_szie", keys) == " (did you mean 'frame_size'?)");  // transposition
  CHECK(did_you_mean("elemnet", keys) == " (did you mean 'element'?)");
  CHECK(did_you_mean("Layout", keys) == " (did you mean 'layout'?)");  // case counts as one edit
  CHECK(did_you_mean("colour", keys).empty());                         // nothing close
  CHECK(did_you_mean("capacity", {}).empty());
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("ab", "ba") == 1);
  CHECK(edit_distance("gpu", "cpu") == 1);
}

TEST_CASE("config.did_you_mean_thresholds") {
  // A suggestion is at most max(1, length / 3) edits away: one for short words like enum values.
  const std::vector<std::string> elements{"u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64"};
  CHECK(did_you_mean("u33", elements) == " (did you mean 'u32'?)");
  CHECK(did_you_mean("f16", elements) == " (did you mean 'u16'?)");  // ties go to the first candidate
  CHECK(did_you_mean("float", elements).empty());
  const std::vector<std::string> sides{"cpu", "gpu"};
  CHECK(did_you_mean("gpus", sides) == " (did you mean 'gpu'?)");
  CHECK(did_you_mean("tpu", sides) == " (did you mean 'cpu'?)");
  CHECK(did_you_mean("fpga", sides).empty());
  // Nine letters allow three edits; "warpsxxxx" is four away from "warps".
  CHECK(closest_match("warpsxxxx", {"warps"}).empty());
  CHECK(closest_match("warps_per_blk", {"warps_per_block"}) == "warps_per_block");
  CHECK(closest_match("sequence_src", {"sequence_source", "random_source"}) == "sequence_source");
}
