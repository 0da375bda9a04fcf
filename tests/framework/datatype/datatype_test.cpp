// The datatype engine against MPI-3.1 and against the reference walk (reference_packer.hpp): bounds from
// the standard's examples, every constructor, the serialized form's round trip and its checks, the
// point-based traversal and its runs, host pack and unpack, and many random nested types.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "framework/datatype/committed_type.hpp"
#include "framework/datatype/datatype.hpp"
#include "framework/datatype/pack.hpp"
#include "framework/datatype/pack_costs.hpp"
#include "framework/datatype/traversal.hpp"
#include "tests/framework/datatype/reference_packer.hpp"
#include "tests/support/random_datatypes.hpp"

namespace xf::dt {
namespace {

using i64 = std::int64_t;
using bytes_t = std::vector<std::byte>;

const datatype f64 = primitive::f64;
const datatype f32 = primitive::f32;
const datatype i32 = primitive::i32;
const datatype i8 = primitive::i8;
const datatype chr = primitive::character;

/// MPI-3.1's running example: {(double, 0), (char, 8)}, extent 16.
datatype double_char() {
  return struct_type({1, 1}, {0, 8}, {f64, chr});
}

struct expected_bounds {
  i64 size, lb, extent, true_lb, true_extent;
};

void check_bounds(const datatype& t, expected_bounds e) {
  CAPTURE(describe(t));
  CHECK(t.size() == e.size);
  CHECK(t.lb() == e.lb);
  CHECK(t.extent() == e.extent);
  CHECK(t.true_lb() == e.true_lb);
  CHECK(t.true_extent() == e.true_extent);
}

/// A user buffer holding every byte `count` instances touch (and displacement 0), filled with a pattern;
/// `base()` is MPI's buf.
class user_buffer {
 public:
  user_buffer(const reference::type_map& m, i64 extent, i64 count, std::uint64_t seed) {
    i64 low = 0, high = 0;
    for (i64 k = 0; k < count; ++k)
      for (const reference::entry& e : m.data) {
        low = std::min(low, k * extent + e.displacement);
        high = std::max(high, k * extent + e.displacement + size_of(e.element));
      }
    origin_ = -low;
    bytes_.resize(static_cast<std::size_t>(high - low));
    std::mt19937_64 rng(seed);
    for (std::byte& b : bytes_) b = static_cast<std::byte>(rng());
  }
  std::byte* base() { return bytes_.data() + origin_; }
  const bytes_t& bytes() const { return bytes_; }
  void fill(std::byte value) { std::fill(bytes_.begin(), bytes_.end(), value); }
  i64 origin() const { return origin_; }

 private:
  bytes_t bytes_;
  i64 origin_ = 0;
};

/// Everything the engine says about `t` against the reference: bounds, element count, each element's place
/// and run, pack, unpack, runs over sub-ranges, and the serialized form's round trip.
void check_against_reference(const datatype& t, i64 count, std::uint64_t seed) {
  CAPTURE(describe(t));
  CAPTURE(count);
  const reference::type_map m = reference::flatten(t);
  const reference::bounds b = reference::bounds_of(m);
  REQUIRE(t.elements() == static_cast<i64>(m.data.size()));
  CHECK(t.lb() == b.lb);
  CHECK(t.ub() == b.ub);
  CHECK(t.true_lb() == b.true_lb);
  CHECK(t.true_ub() == b.true_ub);
  i64 size = 0;
  for (const reference::entry& e : m.data) size += size_of(e.element);
  CHECK(t.size() == size);
  // A dense claim must be true: the data in order, each element where the one before ended.
  if (t.is_dense())
    for (std::size_t i = 1; i < m.data.size(); ++i)
      REQUIRE(m.data[i].displacement == m.data[i - 1].displacement + size_of(m.data[i - 1].element));

  const committed_type c = commit(t);
  INFO(dump(c));
  REQUIRE(deserialize(c) == t);
  const serialized_view v = c.view();
  const i64 extent = b.ub - b.lb, total = count * t.elements();
  std::vector<i64> in(static_cast<std::size_t>(total)), out(static_cast<std::size_t>(total));
  for (i64 i = 0, packed = 0; i < total; ++i) {
    const reference::entry& e = m.data[static_cast<std::size_t>(i % t.elements())];
    in[static_cast<std::size_t>(i)] = (i / t.elements()) * extent + e.displacement;
    out[static_cast<std::size_t>(i)] = packed;
    packed += size_of(e.element);
  }
  for (i64 i = 0; i < total; ++i) {
    CAPTURE(i);
    const element_place p = locate(v, count, i);
    REQUIRE(p.in == in[static_cast<std::size_t>(i)]);
    REQUIRE(p.out == out[static_cast<std::size_t>(i)]);
    REQUIRE(p.element == m.data[static_cast<std::size_t>(i % t.elements())].element);
    REQUIRE(p.run_elements >= 1);
    REQUIRE(p.run_elements <= total - i);
    // Every element of the run lies where the run's bytes put it, in both buffers.
    i64 off_run = 0;
    for (i64 j = 1; j < p.run_elements; ++j)
      if (in[static_cast<std::size_t>(i + j)] - p.in != out[static_cast<std::size_t>(i + j)] - p.out)
        off_run = j;
    REQUIRE(off_run == 0);
    const i64 end_out =
        i + p.run_elements < total ? out[static_cast<std::size_t>(i + p.run_elements)] : count * t.size();
    REQUIRE(p.run_bytes == end_out - p.out);
  }
  CHECK(locate(v, count, total).run_elements == 0);
  CHECK(locate(v, count, -1).run_elements == 0);

  // Pack against the reference; unpack into a blank buffer gives back exactly the bytes the type covers.
  user_buffer source(m, extent, count, seed);
  const bytes_t expected = reference::pack(m, extent, count, source.base());
  bytes_t packed(static_cast<std::size_t>(packed_bytes(c, count)));
  REQUIRE(packed.size() == expected.size());
  pack(c, count, source.base(), packed.data());
  REQUIRE(packed == expected);
  user_buffer target(m, extent, count, seed);
  target.fill(std::byte{0x5a});
  unpack(c, count, packed.data(), target.base());
  bytes_t expected_user(source.bytes().size(), std::byte{0x5a});
  for (i64 i = 0; i < total; ++i) {
    const auto at = static_cast<std::size_t>(source.origin() + in[static_cast<std::size_t>(i)]);
    const auto n =
        static_cast<std::size_t>(size_of(m.data[static_cast<std::size_t>(i % t.elements())].element));
    std::copy_n(source.bytes().begin() + static_cast<std::ptrdiff_t>(at), n,
                expected_user.begin() + static_cast<std::ptrdiff_t>(at));
  }
  REQUIRE(target.bytes() == expected_user);

  // With the type's plan (a strided plan walks its shape instead of the runs): the same bytes both ways.
  const pack_plan plan = plan_packing(c);
  CAPTURE(describe(plan));
  bytes_t planned(packed.size(), std::byte{0});
  pack(c, plan, count, source.base(), planned.data());
  REQUIRE(planned == expected);
  target.fill(std::byte{0x5a});
  unpack(c, plan, count, packed.data(), target.base());
  REQUIRE(target.bytes() == expected_user);

  // Runs over a sub-range cover exactly its packed bytes.
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 3 && total > 0; ++trial) {
    i64 first = static_cast<i64>(rng() % static_cast<std::uint64_t>(total + 1));
    i64 last = static_cast<i64>(rng() % static_cast<std::uint64_t>(total + 1));
    if (first > last) std::swap(first, last);
    CAPTURE(first);
    CAPTURE(last);
    bytes_t part(packed.size(), std::byte{0});
    const bool whole = for_each_run(v, count, first, last, [&](i64 from, i64 to, i64 n) {
      std::memcpy(part.data() + to, source.base() + from, static_cast<std::size_t>(n));
    });
    REQUIRE(whole);
    const i64 begin = first < total ? out[static_cast<std::size_t>(first)] : count * t.size();
    const i64 end = last < total ? out[static_cast<std::size_t>(last)] : count * t.size();
    bytes_t expected_part(packed.size(), std::byte{0});
    std::copy(packed.begin() + begin, packed.begin() + end, expected_part.begin() + begin);
    REQUIRE(part == expected_part);
  }
}

void check_against_reference(const datatype& t) {
  for (i64 count : {1, 3}) check_against_reference(t, count, 7);
}

// ---- MPI-3.1's examples, computed by hand ----

TEST_CASE("datatype.struct_extent_rounds_up_to_the_largest_alignment") {
  // §4.1: "Type = {(double, 0), (char, 8)} ... the extent of this datatype is 16 (9 rounded to the next
  // multiple of 8)".
  check_bounds(double_char(), {.size = 9, .lb = 0, .extent = 16, .true_lb = 0, .true_extent = 9});
  check_bounds(f64, {.size = 8, .lb = 0, .extent = 8, .true_lb = 0, .true_extent = 8});
}

TEST_CASE("datatype.vector_hvector_and_indexed_of_the_standards_examples") {
  // The standard's examples under MPI_TYPE_VECTOR: (2, 3, 4, oldtype), twelve entries, the last (char, 104).
  check_bounds(vector(2, 3, 4, double_char()),
               {.size = 54, .lb = 0, .extent = 112, .true_lb = 0, .true_extent = 105});
  // MPI_TYPE_VECTOR(3, 1, -2, oldtype): {(double, 0), (char, 8), (double, -32), (char, -24), (double, -64),
  // (char, -56)}.
  check_bounds(vector(3, 1, -2, double_char()),
               {.size = 27, .lb = -64, .extent = 80, .true_lb = -64, .true_extent = 73});
  // Under MPI_TYPE_CREATE_HVECTOR: (2, 3, 4, oldtype), the last entry (char, 44); 45 rounds to 48.
  check_bounds(hvector(2, 3, 4, double_char()),
               {.size = 54, .lb = 0, .extent = 48, .true_lb = 0, .true_extent = 45});
  // Under MPI_TYPE_INDEXED: (2, B = (3, 1), D = (4, 0), oldtype), blocks at 64 and 0.
  check_bounds(indexed({3, 1}, {4, 0}, double_char()),
               {.size = 36, .lb = 0, .extent = 112, .true_lb = 0, .true_extent = 105});
  check_against_reference(vector(2, 3, 4, double_char()));
  check_against_reference(vector(3, 1, -2, double_char()));
  check_against_reference(indexed({3, 1}, {4, 0}, double_char()));
}

TEST_CASE("datatype.struct_of_the_standards_example") {
  // Under MPI_TYPE_CREATE_STRUCT: B = (2, 1, 3), D = (0, 16, 26), T = (MPI_FLOAT, Type1, MPI_CHAR):
  // {(float, 0), (float, 4), (double, 16), (char, 24), (char, 26), (char, 27), (char, 28)}.
  const datatype t = struct_type({2, 1, 3}, {0, 16, 26}, {f32, double_char(), chr});
  check_bounds(t, {.size = 20, .lb = 0, .extent = 32, .true_lb = 0, .true_extent = 29});
  CHECK(t.elements() == 7);
  check_against_reference(t);
}

TEST_CASE("datatype.resized_markers_stick_in_enclosing_types") {
  // The standard's markers example: type1 = {(lb, -3), (int, 0), (ub, 6)}, and
  // MPI_TYPE_CONTIGUOUS(2, type1) = {(lb, -3), (int, 0), (int, 9), (ub, 15)}.
  const datatype type1 = resized(i32, -3, 9);
  check_bounds(type1, {.size = 4, .lb = -3, .extent = 9, .true_lb = 0, .true_extent = 4});
  CHECK(type1.has_markers());
  const datatype type2 = contiguous(2, type1);
  check_bounds(type2, {.size = 8, .lb = -3, .extent = 18, .true_lb = 0, .true_extent = 13});
  // Markers anywhere in a type map decide lb and ub: the char at 100 moves neither (and no alignment
  // rounding applies).
  const datatype sticky = struct_type({1, 1}, {0, 100}, {resized(i32, 0, 8), i8});
  check_bounds(sticky, {.size = 5, .lb = 0, .extent = 8, .true_lb = 0, .true_extent = 101});
  // A resized type's own markers erase those below it.
  check_bounds(resized(type2, 4, 2), {.size = 8, .lb = 4, .extent = 2, .true_lb = 0, .true_extent = 13});
  check_against_reference(type2);
  check_against_reference(sticky);
  check_against_reference(resized(type2, 4, 2));
}

TEST_CASE("datatype.subarray_spans_the_whole_array_in_c_and_fortran_order") {
  // A 4 × 5 array of doubles, the 2 × 3 block at (1, 1). C: element (i, j) at i * 5 + j, first (1, 1) = 6,
  // last (2, 3) = 13. Fortran: (i, j) at i + 4 * j, first 5, last 14.
  const datatype in_c = subarray({4, 5}, {2, 3}, {1, 1}, array_order::c, f64);
  check_bounds(in_c, {.size = 48, .lb = 0, .extent = 160, .true_lb = 48, .true_extent = 64});
  const datatype in_fortran = subarray({4, 5}, {2, 3}, {1, 1}, array_order::fortran, f64);
  check_bounds(in_fortran, {.size = 48, .lb = 0, .extent = 160, .true_lb = 40, .true_extent = 80});
  check_against_reference(in_c);
  check_against_reference(in_fortran);
  check_against_reference(subarray({3, 4, 5}, {2, 2, 3}, {1, 0, 2}, array_order::c, double_char()));
  check_against_reference(subarray({3, 4, 5}, {1, 4, 2}, {2, 0, 1}, array_order::fortran, i32));
}

TEST_CASE("datatype.alignment_rounds_every_type_map_without_markers") {
  // The standard rounds any type map's extent, not only a struct's: doubles 3 bytes apart end at 11,
  // rounded to 16. (Some implementations round only structs; DESIGN.md.)
  check_bounds(hvector(2, 1, 3, f64), {.size = 16, .lb = 0, .extent = 16, .true_lb = 0, .true_extent = 11});
  // The rounding sees the whole map, not each child's rounded extent: a char before the struct gives
  // [-1, 9), extent 10, rounded to 16 — not [-1, 16) rounded to 24.
  check_bounds(struct_type({1, 1}, {0, -1}, {double_char(), chr}),
               {.size = 10, .lb = -1, .extent = 16, .true_lb = -1, .true_extent = 10});
  // Negative displacements set lb below 0.
  check_bounds(hindexed({1, 1}, {-8, 8}, f64),
               {.size = 16, .lb = -8, .extent = 24, .true_lb = -8, .true_extent = 24});
}

TEST_CASE("datatype.empty_types_have_no_extent") {
  for (const datatype& t :
       {contiguous(0, f64), vector(3, 0, 2, f64), vector(0, 2, 2, f64), indexed({0, 0}, {4, 9}, f64),
        struct_type({}, {}, {}), hindexed_block(2, {}, i32)}) {
    check_bounds(t, {.size = 0, .lb = 0, .extent = 0, .true_lb = 0, .true_extent = 0});
    CHECK(t.elements() == 0);
  }
  // Markers of empty copies still count: two resized empties, 8 bytes apart by their extent.
  check_bounds(contiguous(2, resized(contiguous(0, f64), 0, 8)),
               {.size = 0, .lb = 0, .extent = 16, .true_lb = 0, .true_extent = 0});
  const committed_type c = commit(contiguous(0, f64));
  CHECK(packed_bytes(c, 5) == 0);
  pack(c, 5, nullptr, nullptr);  // nothing to copy: no pointer is touched
}

TEST_CASE("datatype.the_papers_vector_of_vectors") {
  // Fig. 2: MPI_Type_vector(4, 1, 2, MPI_DOUBLE, &v1); MPI_Type_vector(6, 1, 4, v1, &v2).
  const datatype v1 = vector(4, 1, 2, f64);
  check_bounds(v1, {.size = 32, .lb = 0, .extent = 56, .true_lb = 0, .true_extent = 56});
  const datatype v2 = vector(6, 1, 4, v1);
  check_bounds(v2, {.size = 192, .lb = 0, .extent = 5 * 4 * 56 + 56, .true_lb = 0, .true_extent = 1176});
  CHECK(v2.elements() == 24);
  CHECK(v2.depth() == 2);
  check_against_reference(v2);
}

// ---- every constructor against the reference ----

TEST_CASE("datatype.contiguous_vector_and_hvector_against_the_reference") {
  check_against_reference(contiguous(5, f64));
  check_against_reference(contiguous(3, double_char()));
  check_against_reference(vector(4, 2, 3, i32));
  check_against_reference(vector(3, 2, -3, double_char()));
  check_against_reference(vector(3, 2, 2, f32));  // stride = blocklength: dense
  check_against_reference(vector(2, 3, 1, i8));   // blocks overlap
  check_against_reference(hvector(3, 2, 20, f64));
  check_against_reference(hvector(3, 1, -5, double_char()));
  check_against_reference(hvector(2, 2, 0, i32));  // the same block twice
}

TEST_CASE("datatype.indexed_kinds_against_the_reference") {
  check_against_reference(indexed({2, 0, 1, 3}, {5, 1, -2, 9}, f64));
  check_against_reference(indexed({1, 2}, {3, 0}, vector(2, 1, 3, i32)));
  check_against_reference(hindexed({3, 1, 2}, {-40, 8, 100}, i32));
  check_against_reference(hindexed({2, 2}, {0, 16}, f64));  // adjacent blocks: dense
  check_against_reference(indexed_block(2, {4, 0, 7}, double_char()));
  check_against_reference(hindexed_block(3, {12, -30, 0}, i8));
  check_against_reference(hindexed_block(1, {0, 8, 16}, f64));
}

TEST_CASE("datatype.struct_and_resized_against_the_reference") {
  check_against_reference(struct_type({1, 2, 1}, {0, 8, 24}, {i32, f64, chr}));
  check_against_reference(struct_type({2, 0, 1}, {40, 0, -16}, {double_char(), f64, vector(2, 1, 2, i32)}));
  check_against_reference(struct_type({1, 1}, {0, 4}, {i32, f64}));  // dense, not tight (extent 16)
  check_against_reference(struct_type({1, 1}, {0, 2}, {f64, f64}));  // overlapping members
  check_against_reference(resized(f64, -4, 16));
  check_against_reference(contiguous(3, resized(double_char(), 0, 9)));  // tight after resizing
  check_against_reference(vector(2, 2, 3, resized(i32, 2, 6)));
  check_against_reference(resized(contiguous(2, f64), 0, -16));  // negative extent
}

TEST_CASE("datatype.nested_to_the_depth_limit") {
  datatype t = f64;
  for (int level = 0; level < max_type_depth; ++level)
    t = level % 2 == 0 ? contiguous(1, t) : resized(t, 0, 8);
  CHECK(t.depth() == max_type_depth);
  check_against_reference(t);
  CHECK_THROWS_AS(contiguous(1, t), invalid_datatype);
}

// ---- the traversal's runs: the fast path ----

TEST_CASE("datatype.runs_are_as_long_as_the_layout_allows") {
  const auto run_at = [](const datatype& t, i64 count, i64 i) {
    const committed_type c = commit(t);
    return locate(c.view(), count, i).run_elements;
  };
  CHECK(run_at(f64, 100, 0) == 100);  // a tight root: every instance at once
  CHECK(run_at(contiguous(1000, f64), 3, 0) == 3000);
  CHECK(run_at(vector(4, 3, 5, f64), 1, 0) == 3);   // a block
  CHECK(run_at(vector(4, 3, 5, f64), 1, 4) == 2);   // the rest of the second block
  CHECK(run_at(vector(4, 3, 3, f64), 2, 0) == 24);  // stride = blocklength: dense and tight
  CHECK(run_at(subarray({4, 6}, {2, 6}, {1, 0}, array_order::c, f64), 1, 0) == 12);  // whole rows
  CHECK(run_at(subarray({4, 6}, {2, 3}, {1, 2}, array_order::c, f64), 1, 1) == 2);   // a row's rest
  CHECK(run_at(struct_type({1, 1}, {0, 4}, {i32, f64}), 2, 0) == 2);  // dense, but extent 16 > size 12
  CHECK(run_at(indexed({2, 3}, {0, 2}, f64), 1, 0) == 5);             // adjacent blocks
  CHECK(run_at(indexed({2, 3}, {0, 3}, f64), 1, 0) == 2);
  CHECK(run_at(vector(2, 2, 4, contiguous(3, i8)), 1, 1) == 5);  // a block of tight children, past its start
}

// ---- the serialized form ----

TEST_CASE("datatype.serialized_form_is_position_independent_and_round_trips") {
  const datatype t = struct_type({1, 2}, {-16, 8},
                                 {indexed({1, 2}, {3, 0}, vector(2, 1, 3, i32)),
                                  subarray({3, 4}, {2, 2}, {1, 1}, array_order::fortran, f64)});
  const committed_type c = commit(t);
  const serialized_header h = c.header();
  CHECK(h.magic == serialized_magic);
  CHECK(h.record_count == 4);  // struct, indexed, vector, subarray; the primitives are leaf flags
  CHECK(h.depth == 3);
  CHECK(h.total_bytes == c.bytes().size());
  const type_record root = c.root();
  CHECK(root.elements == t.elements());
  CHECK(root.extent == t.extent());
  // Copied to an odd place (as into device memory): the same answers from there.
  std::vector<std::int64_t> elsewhere(c.bytes().size() / 8 + 3);
  std::memcpy(elsewhere.data() + 3, c.bytes().data(), c.bytes().size());
  const serialized_view moved = view_of(reinterpret_cast<const std::byte*>(elsewhere.data() + 3));
  for (i64 i = 0; i < 2 * t.elements(); ++i) {
    const element_place a = locate(c.view(), 2, i), b = locate(moved, 2, i);
    CHECK(a.in == b.in);
    CHECK(a.out == b.out);
    CHECK(a.run_elements == b.run_elements);
  }
  const committed_type loaded = committed_type::load(
      std::span(reinterpret_cast<const std::byte*>(elsewhere.data() + 3), c.bytes().size()));
  CHECK(std::equal(loaded.bytes().begin(), loaded.bytes().end(), c.bytes().begin(), c.bytes().end()));
  CHECK(deserialize(loaded) == t);
  const std::string text = dump(c);
  CHECK(text.find("#0 struct count=2") != std::string::npos);
  CHECK(text.find("element_prefix=[0, 6, 14]") != std::string::npos);
  CHECK(text.find("#3 subarray count=2") != std::string::npos);
  CHECK(text.find("fortran") != std::string::npos);
}

TEST_CASE("datatype.load_refuses_buffers_commit_did_not_write") {
  const committed_type c = commit(vector(3, 2, 4, indexed({1, 2}, {0, 3}, f64)));
  const bytes_t good(c.bytes().begin(), c.bytes().end());
  const auto refused = [](bytes_t b, const std::string& expected) {
    CAPTURE(expected);
    try {
      committed_type::load(b);
      FAIL("loaded");
    } catch (const invalid_datatype& e) {
      CHECK(e.constructor() == "load");
      CHECK(std::string(e.what()).find(expected) != std::string::npos);
    }
  };
  const auto patched = [&](std::size_t offset, auto value) {
    bytes_t b = good;
    std::memcpy(b.data() + offset, &value, sizeof value);
    return b;
  };
  const std::size_t record0 = sizeof(serialized_header), record1 = record0 + sizeof(type_record);
  refused(bytes_t(good.begin(), good.begin() + 20), "fewer than a header");
  refused(bytes_t(good.begin(), good.end() - 8), "outside the buffer");
  refused(patched(0, std::uint32_t{7}), "magic");
  refused(patched(4, std::uint16_t{9}), "version 9");
  refused(patched(record0 + offsetof(type_record, child), std::uint32_t{0}), "not a record after it");
  refused(patched(record0 + offsetof(type_record, kind), std::uint8_t{40}), "no type kind");
  refused(patched(record1 + offsetof(type_record, lookaside), std::uint64_t{1 << 20}),
          "outside the lookaside");
  refused(patched(record1 + offsetof(type_record, element), std::uint8_t{200}), "no primitive");
  // A derived field the traversal trusts, wrong: the commit of the described type differs there.
  refused(patched(record0 + offsetof(type_record, elements), std::int64_t{5}), "differ from the commit");
  refused(patched(record1 + offsetof(type_record, child_extent), std::int64_t{4}), "differ from the commit");
  CHECK(committed_type::load(good).bytes().size() == good.size());
}

// ---- invalid types ----

TEST_CASE("datatype.invalid_arguments_name_the_constructor_and_the_argument") {
  const auto rejected = [](const std::function<void()>& build, const std::string& constructor,
                           const std::string& argument) {
    CAPTURE(constructor);
    CAPTURE(argument);
    try {
      build();
      FAIL("built");
    } catch (const invalid_datatype& e) {
      CHECK(e.constructor() == constructor);
      CHECK(e.argument() == argument);
      CHECK(std::string(e.what()).starts_with(constructor + ": " + argument + " "));
    }
  };
  rejected([] { contiguous(-1, f64); }, "contiguous", "count");
  rejected([] { vector(-2, 1, 1, f64); }, "vector", "count");
  rejected([] { vector(2, -1, 1, f64); }, "vector", "blocklength");
  rejected([] { hvector(2, -1, 8, f64); }, "hvector", "blocklength");
  rejected([] { indexed({1, -1}, {0, 4}, f64); }, "indexed", "blocklengths[1]");
  rejected([] { indexed({1, 1}, {0}, f64); }, "indexed", "displacements");
  rejected([] { hindexed({1}, {0, 8}, f64); }, "hindexed", "displacements");
  rejected([] { indexed_block(-3, {0}, f64); }, "indexed_block", "blocklength");
  rejected([] { hindexed_block(-1, {0}, f64); }, "hindexed_block", "blocklength");
  rejected([] { struct_type({1, 1}, {0, 8}, {f64}); }, "struct", "types");
  rejected([] { struct_type({1, -4}, {0, 8}, {f64, i8}); }, "struct", "blocklengths[1]");
  rejected([] { subarray({}, {}, {}, array_order::c, f64); }, "subarray", "sizes");
  rejected([] { subarray({4, 0}, {1, 0}, {0, 0}, array_order::c, f64); }, "subarray", "sizes[1]");
  rejected([] { subarray({4, 5}, {0, 1}, {0, 0}, array_order::c, f64); }, "subarray", "subsizes[0]");
  rejected([] { subarray({4, 5}, {5, 1}, {0, 0}, array_order::c, f64); }, "subarray", "subsizes[0]");
  rejected([] { subarray({4, 5}, {2, 3}, {3, 0}, array_order::c, f64); }, "subarray", "starts[0]");
  rejected([] { subarray({4, 5}, {2, 3}, {0, -1}, array_order::fortran, f64); }, "subarray", "starts[1]");
  rejected([] { subarray({4, 5}, {2, 3}, {0}, array_order::c, f64); }, "subarray", "starts");
  rejected([] { contiguous(std::int64_t{1} << 61, f64); }, "contiguous", "count");
  rejected([] { hvector(3, 1, std::int64_t{1} << 62, f64); }, "hvector", "stride");
  rejected([] { resized(f64, std::int64_t{1} << 62, std::int64_t{1} << 62); }, "resized", "extent");
  rejected(
      [] {
        hindexed({1, 1}, {-(std::int64_t{1} << 62), std::int64_t{1} << 62}, f64);
      },
      "hindexed",
      "displacements");  // each bound fits, the extent between them does not
  rejected([] { datatype(static_cast<primitive>(77)); }, "primitive", "element");
  const committed_type c = commit(f64);
  CHECK_THROWS_AS(packed_bytes(c, -1), precondition_error);
  CHECK_THROWS_AS(packed_bytes(c, std::int64_t{1} << 61), precondition_error);
}

TEST_CASE("datatype.first_overlap_finds_bytes_a_receive_would_write_twice") {
  CHECK_FALSE(first_overlap(commit(vector(3, 2, 4, i32)), 2).has_value());
  CHECK(first_overlap(commit(vector(2, 3, 2, i32)), 1) == 8);  // blocks [0, 12) and [8, 20)
  CHECK(first_overlap(commit(struct_type({1, 1}, {0, 6}, {f64, i32})), 1) == 6);
  CHECK_FALSE(first_overlap(commit(indexed({2, 1}, {3, 0}, f64)), 1).has_value());
  CHECK_FALSE(first_overlap(commit(resized(f64, 0, 8)), 4).has_value());
  CHECK(first_overlap(commit(resized(f64, 0, 4)), 2) == 4);  // instances 4 bytes apart
}

// ---- many random nested types (tests/support/random_datatypes.hpp) ----

TEST_CASE("datatype.random_nested_types_pack_like_the_reference") {
  // XF_DATATYPE_SEED=n replays a failure: each type's seed is printed with it.
  const char* from_env = std::getenv("XF_DATATYPE_SEED");
  const std::uint64_t first_seed = from_env != nullptr ? std::strtoull(from_env, nullptr, 10) : 20261127;
  const int types = from_env != nullptr ? 1 : 250;
  for (int n = 0; n < types; ++n) {
    const std::uint64_t seed = first_seed + static_cast<std::uint64_t>(n);
    CAPTURE(seed);
    testing::random_types random(seed, testing::small_random_types);
    const datatype t = random.make(4);
    check_against_reference(t, 1 + static_cast<i64>(seed % 3), seed);
    if (std::getenv("XF_STATS"))
      MESSAGE(t.depth() << " " << t.elements() << " " << t.is_dense() << " " << describe(t));
    // The committed bytes load back as they are.
    const committed_type c = commit(t);
    CHECK(committed_type::load(c.bytes()).bytes().size() == c.bytes().size());
  }
}

TEST_CASE("datatype.host_packing_with_a_strided_plan_walks_every_shape") {
  // Shapes of every width class (1, 8, 16 and 24-byte segments), tables, 0 to 3 dimensions and negative
  // strides, each checked against the reference by check_against_reference's planned pack and unpack.
  const datatype shapes[] = {
      contiguous(100, primitive::f64),
      vector(64, 1, 2, primitive::f64),
      vector(7, 2, 5, primitive::f64),
      hvector(9, 3, -40, primitive::u8),
      indexed({1, 1, 1}, {5, 0, 9}, primitive::f64),
      indexed_block(3, {4, 0, 12}, primitive::i32),
      hvector(5, 1, 256, vector(3, 2, 3, primitive::f64)),
      subarray({6, 5, 4}, {3, 2, 3}, {1, 2, 0}, array_order::c, primitive::f64),
      subarray({6, 5, 4}, {3, 2, 3}, {1, 2, 0}, array_order::fortran, primitive::u16),
  };
  int strided = 0;
  for (const datatype& t : shapes) {
    strided += plan_packing(commit(t)).method == pack_method::strided;
    for (const i64 count : {0, 1, 4}) check_against_reference(t, count, 11);
  }
  CHECK(strided == static_cast<int>(std::size(shapes)));
}

TEST_CASE("datatype.pcie_costs_choose_the_path_fig5_measured_faster") {
  // xeflow-datatype-bench fig5 on a Hopper GPU, a vector of doubles to pinned host memory: the copy engine
  // was faster (or within 5%) from 32-byte rows at 64 KiB packed, and from 128-byte rows at 4 MiB, where a
  // copy of 64-byte rows took 98.7 µs against the kernel's 90.1.
  const pack_costs costs = pcie_pack_costs;
  const auto copy_chosen = [&](std::int64_t packed, std::int64_t row) {
    return costs.copy_engine_faster(packed / row, packed);
  };
  for (const std::int64_t row : {8, 16}) CHECK_FALSE(copy_chosen(64 << 10, row));
  for (const std::int64_t row : {32, 64, 128, 512, 1024, 4096}) CHECK(copy_chosen(64 << 10, row));
  for (const std::int64_t row : {8, 16, 32, 64}) CHECK_FALSE(copy_chosen(4 << 20, row));
  for (const std::int64_t row : {128, 256, 1024, 4096}) CHECK(copy_chosen(4 << 20, row));
  // The model's terms: a copy bound by its rows, then by its bytes; a kernel by a launch and the link.
  CHECK(costs.copy_us(524'288, 4 << 20) == doctest::Approx(6.5 + 655.36));
  CHECK(costs.copy_us(1'024, 4 << 20) == doctest::Approx(6.5 + 4194304 / 55.3e3));
  CHECK(costs.kernel_us(4 << 20) == doctest::Approx(10.5 + 4194304 / 52.6e3));
  pack_costs no_margin = costs;
  no_margin.copy_margin = 0;
  CHECK(no_margin.copy_engine_faster(65'536, 4 << 20));  // 88.4 µs against 90.2: only the margin says no
}

TEST_CASE("datatype.device_costs_choose_the_path_fig5_measured_faster") {
  // fig5 to device memory on an H100 and an H200: a copy was 5% faster than the kernel only at 64 KiB
  // from 128-byte rows, and tied (within 5%) at 64 KiB from 64-byte rows and at 256 KiB from 256-byte
  // rows; the kernel was faster everywhere else, by up to 6x (4 MiB of 8-byte rows).
  const pack_costs costs = device_pack_costs;
  const auto copy_chosen = [&](std::int64_t packed, std::int64_t row) {
    return costs.copy_engine_faster(packed / row, packed);
  };
  for (const std::int64_t row : {8, 16, 32}) CHECK_FALSE(copy_chosen(64 << 10, row));
  for (const std::int64_t row : {128, 256, 512, 1024, 4096}) CHECK(copy_chosen(64 << 10, row));
  for (const std::int64_t row : {8, 16, 32, 64, 128}) CHECK_FALSE(copy_chosen(256 << 10, row));
  for (const std::int64_t total : {1 << 20, 4 << 20})
    for (const std::int64_t row : {8, 64, 512, 4096}) CHECK_FALSE(copy_chosen(total, row));
}

}  // namespace
}  // namespace xf::dt
