// The GPU datatype engine: the packing plan (checked on the host against the traversal, with or without a
// GPU), then, on a GPU, gpu_pack and gpu_unpack by every path against host pack and unpack — every
// constructor, random nested types, zero copy into pinned host memory, the chunked pipeline, the copy
// engine's 1D/2D/3D calls and the rule that picks them. GPU cases are skipped visibly without a device.
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "framework/core/cuda_buffer.hpp"
#include "framework/core/cuda_check.hpp"
#include "framework/datatype/chunked_packer.hpp"
#include "framework/datatype/committed_type.hpp"
#include "framework/datatype/datatype.hpp"
#include "framework/datatype/device_type.hpp"
#include "framework/datatype/fast_divmod.hpp"
#include "framework/datatype/gpu_pack.hpp"
#include "framework/datatype/pack.hpp"
#include "framework/datatype/pack_plan.hpp"
#include "framework/datatype/traversal.hpp"
#include "tests/support/random_datatypes.hpp"

namespace xf::dt {
namespace {

using i64 = std::int64_t;
using bytes_t = std::vector<std::byte>;

const datatype f64 = primitive::f64;
const datatype f32 = primitive::f32;
const datatype i32 = primitive::i32;
const datatype u16 = primitive::u16;
const datatype u8 = primitive::u8;
const datatype chr = primitive::character;

std::string gpu_problem() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    (void)cudaGetLastError();
    return "no CUDA device";
  }
  return "";
}

bool no_gpu() {
  return !gpu_problem().empty();
}

/// The bytes `count` instances of `t` cover, relative to MPI's buf: [lowest, highest).
struct data_span {
  i64 lowest = 0, highest = 0;
};
data_span span_of(const datatype& t, i64 count) {
  if (count == 0 || t.size() == 0) return {};
  const i64 shift = (count - 1) * t.extent();
  return {t.true_lb() + std::min<i64>(0, shift), t.true_ub() + std::max<i64>(0, shift)};
}

/// The C struct {double d; int a, b; char c;} of the paper's struct test: its data follows on (17 bytes of a
/// 24-byte extent), so it is one dense segment.
datatype paper_struct() {
  return struct_type({1, 1, 1, 1}, {0, 8, 12, 16}, {f64, i32, i32, chr});
}

/// A struct whose members leave gaps: every element is found by the traversal.
datatype gapped_struct() {
  return struct_type({1, 2, 3}, {0, 16, 40}, {f64, i32, chr});
}

// ---- the plan, on the host ----------------------------------------------------------------------------

/// Every segment of the plan lies where the traversal puts its elements: the same distance between the
/// user's and the packed buffer for each of its elements, segment s at packed offset s × segment bytes.
void check_plan_against_traversal(const datatype& t, i64 count, const plan_options& options = {}) {
  CAPTURE(describe(t));
  CAPTURE(count);
  const committed_type c = commit(t);
  const pack_plan p = plan_packing(c, options);
  CAPTURE(describe(p));
  const serialized_view v = c.view();
  const i64 total = count * t.elements(), bytes = count * t.size();
  if (total == 0) return;
  if (p.method == pack_method::elements) {
    CHECK(!p.not_strided_because.empty());
    return;
  }
  if (p.method == pack_method::run_list) {
    // Every element of an instance lies in the run whose packed range holds it, as far into it in both
    // buffers; runs start where the last one ended in the packed bytes, and the divisor divides them.
    // Each bucket names the run holding its first byte; the kernel's search between a bucket's run and
    // the next one's finds every element's run.
    REQUIRE(p.run_count >= 1);
    REQUIRE(p.bucket_count >= 1);
    REQUIRE(p.bucket_count <= p.run_count);
    REQUIRE(p.tables.size() == static_cast<std::size_t>(2 * p.run_count + p.bucket_count + 1));
    const i64 *run_in = p.tables.data(), *run_out = run_in + p.run_count, *bucket = run_out + p.run_count;
    REQUIRE(run_out[0] == 0);
    for (i64 j = 0; j < p.run_count; ++j) {
      if (j > 0) REQUIRE(run_out[j] > run_out[j - 1]);
      REQUIRE(run_in[j] % p.offset_divisor == 0);
      REQUIRE(run_out[j] % p.offset_divisor == 0);
    }
    REQUIRE(t.size() % p.offset_divisor == 0);
    REQUIRE(bucket[p.bucket_count] == p.run_count - 1);
    for (i64 b = 0; b < p.bucket_count; ++b)
      REQUIRE(bucket[b] == detail::block_of(run_out, p.run_count, b << p.bucket_shift));
    for (i64 i = 0; i < t.elements(); ++i) {
      const element_place e = locate(v, 1, i);
      const i64 b = e.out >> p.bucket_shift;
      const i64 j = bucket[b] + detail::block_of(run_out + bucket[b], bucket[b + 1] - bucket[b] + 1, e.out);
      REQUIRE(j == detail::block_of(run_out, p.run_count, e.out));
      REQUIRE(e.in == run_in[j] + (e.out - run_out[j]));
    }
    return;
  }
  i64 segments = 0, segment_bytes = 0, divisor = 0;
  std::optional<strided_shape> shape;
  if (p.method == pack_method::strided) {
    shape = shape_for(p, c.root(), count);
    segments = shape->segments;
    segment_bytes = shape->segment_bytes;
    divisor = shape->offset_divisor;
    REQUIRE(shape->dims.size() <= static_cast<std::size_t>(max_strided_dims));
  } else {
    REQUIRE(p.segment_elements >= 1);
    segments = total / p.segment_elements;
    segment_bytes = p.segment_bytes;
    divisor = count > 1 ? std::gcd(p.offset_divisor, t.extent()) : p.offset_divisor;
  }
  REQUIRE(segments * segment_bytes == bytes);
  REQUIRE(total % segments == 0);
  const i64 per_segment = total / segments;
  std::optional<copy_engine_shape> copy;
  if (shape) copy = copy_engine_shape_of(*shape, std::numeric_limits<i64>::max()).shape;
  for (i64 s = 0; s < segments; ++s) {
    CAPTURE(s);
    const element_place first = locate(v, count, s * per_segment);
    REQUIRE(first.out == s * segment_bytes);
    if (shape) REQUIRE(segment_offset(*shape, p.tables, s) == first.in);
    if (divisor != 0) REQUIRE(first.in % divisor == 0);
    for (i64 j = 1; j < per_segment; ++j) {
      const element_place e = locate(v, count, s * per_segment + j);
      REQUIRE(e.in - first.in == e.out - first.out);
    }
    if (copy) {  // the copy engine's rows and planes name the same bytes
      const i64 row = s % copy->rows, plane = s / copy->rows;
      REQUIRE(copy->base + plane * copy->rows_per_plane * copy->pitch + row * copy->pitch == first.in);
    }
  }
}

TEST_CASE("datatype_gpu.fast_divmod_divides_like_the_hardware") {
  std::mt19937_64 rng(7);
  const std::uint32_t edges[] = {
      1, 2, 3, 5, 7, 16, 17, 255, 256, 1000, 65535, 65536, 65537, (1u << 30) - 1, 1u << 30, (1u << 31) - 1};
  for (std::uint32_t d : edges) {
    const fast_divmod_u32 f(d);
    for (std::uint32_t n : {0u, 1u, d - 1, d, d + 1, 2 * d - 1, (1u << 31) - 1, (1u << 31) - d})
      if (n < (1u << 31)) REQUIRE(f.div(n) == n / d);
  }
  for (int trial = 0; trial < 200000; ++trial) {
    const auto d = static_cast<std::uint32_t>(1 + rng() % ((trial % 2) ? 1000 : (1u << 31) - 1));
    const auto n = static_cast<std::uint32_t>(rng() % (1u << 31));
    REQUIRE(fast_divmod_u32(d).div(n) == n / d);
  }
}

TEST_CASE("datatype_gpu.plan_of_each_constructor") {
  SUBCASE("a vector of doubles: rows of a block at the stride") {
    const pack_plan p = plan_packing(commit(vector(4, 2, 5, f64)));
    CHECK(p.method == pack_method::strided);
    CHECK(p.segment_bytes == 16);
    REQUIRE(p.dims.size() == 1);
    CHECK(p.dims[0] == strided_dim{4, 40, -1});
    const strided_shape s = shape_for(p, commit(vector(4, 2, 5, f64)).root(), 3);
    // Instances 17 × 8 = 136 bytes apart (extent: 3 strides and a block): not a whole number of the row
    // pitch (40), so no single copy-engine call moves them.
    REQUIRE(s.dims.size() == 2);
    CHECK(s.dims[0] == strided_dim{3, 136, -1});
    CHECK_FALSE(copy_engine_shape_of(s, 1 << 30).shape.has_value());
  }
  SUBCASE("a dense vector is one segment, and instances of a tight type merge into it") {
    const committed_type c = commit(vector(4, 2, 2, f32));
    const pack_plan p = plan_packing(c);
    CHECK(p.method == pack_method::strided);
    CHECK(p.segment_bytes == 32);
    CHECK(p.dims.empty());
    const strided_shape s = shape_for(p, c.root(), 10);
    CHECK(s.segment_bytes == 320);
    CHECK(s.segments == 1);
    CHECK(copy_engine_shape_of(s, 1 << 30).shape->dims == 0);
  }
  SUBCASE("the paper's struct follows on: one 17-byte segment a struct, a 2D copy of rows 24 bytes apart") {
    const committed_type c = commit(paper_struct());
    const pack_plan p = plan_packing(c);
    CHECK(p.method == pack_method::strided);
    CHECK(p.segment_bytes == 17);
    const strided_shape s = shape_for(p, c.root(), 100);
    CHECK(s.dims == std::vector<strided_dim>{{100, 24, -1}});
    const copy_engine_shape e = *copy_engine_shape_of(s, 1 << 30).shape;
    CHECK(e.dims == 1);
    CHECK(e.pitch == 24);
    CHECK(e.rows == 100);
  }
  SUBCASE("a struct with gaps goes element by element") {
    const pack_plan p = plan_packing(commit(gapped_struct()));
    CHECK(p.method == pack_method::elements);
  }
  SUBCASE("indexed blocks of one length are a table; of several lengths, a run list (or runs of their gcd)") {
    const pack_plan uniform = plan_packing(commit(indexed({3, 0, 3, 3}, {0, 5, 10, 20}, f32)));
    CHECK(uniform.method == pack_method::strided);
    REQUIRE(uniform.dims.size() == 1);
    CHECK(uniform.dims[0].has_table());
    CHECK(uniform.dims[0].count == 3);  // the empty block is left out
    CHECK(std::vector<i64>(uniform.tables.begin(), uniform.tables.end()) == std::vector<i64>{0, 40, 80});
    const committed_type c = commit(hindexed({4, 6, 2, 1}, {0, 64, 200, 216}, f64));
    const pack_plan varied = plan_packing(c);
    CHECK(varied.method == pack_method::run_list);
    CHECK(varied.run_count == 3);  // the last block follows on from the third: one run
    // 104 packed bytes in 3 runs: buckets of 64 bytes (at least the average run), the runs of bytes 0 and
    // 64, then the last run.
    CHECK(varied.bucket_shift == 6);
    CHECK(varied.tables == std::vector<i64>{0, 64, 200, 0, 32, 80, 0, 1, 2});
    CHECK(varied.offset_divisor == 8);
    const pack_plan runs = plan_packing(c, plan_options{2});
    CHECK(runs.method == pack_method::runs);
    CHECK(runs.segment_elements == 1);
    CHECK(runs.segment_bytes == 8);
    CHECK(runs.offset_divisor == 8);
  }
  SUBCASE(
      "the faces of a 3-D array: one block, rows at a pitch, single doubles at a pitch; a patch: planes") {
    const auto face = [](std::vector<i64> subsizes, std::vector<i64> starts) {
      const committed_type c = commit(subarray({64, 64, 64}, subsizes, starts, array_order::c, f64));
      return shape_for(plan_packing(c), c.root(), 1);
    };
    const strided_shape xy = face({1, 64, 64}, {5, 0, 0});
    CHECK(xy.dims.empty());
    CHECK(xy.segment_bytes == 64 * 64 * 8);
    CHECK(xy.base == 5 * 64 * 64 * 8);
    const strided_shape xz = face({64, 1, 64}, {0, 7, 0});
    CHECK(copy_engine_shape_of(xz, 1 << 30).shape->dims == 1);
    CHECK(xz.segment_bytes == 64 * 8);
    // The Y-Z face's planes follow on (64 rows of 64 × 8 bytes): one 2D copy of 4096 single doubles.
    const copy_engine_shape yz = *copy_engine_shape_of(face({64, 64, 1}, {0, 0, 3}), 1 << 30).shape;
    CHECK(yz.dims == 1);
    CHECK(yz.row_bytes == 8);
    CHECK(yz.rows == 64 * 64);
    CHECK(yz.pitch == 64 * 8);
    CHECK(yz.base == 3 * 8);
    const copy_engine_shape patch = *copy_engine_shape_of(face({64, 10, 1}, {0, 5, 3}), 1 << 30).shape;
    CHECK(patch.dims == 2);
    CHECK(patch.rows == 10);
    CHECK(patch.planes == 64);
    CHECK(patch.rows_per_plane == 64);
    CHECK(patch.base == 5 * 64 * 8 + 3 * 8);
  }
  SUBCASE("more dimensions than the kernels take become a run list, or runs") {
    datatype t = f64;
    for (int level = 0; level < 8; ++level) t = vector(2, 1, 3, t);
    const committed_type c = commit(t);
    const pack_plan p = plan_packing(c);
    CHECK(p.method == pack_method::run_list);
    CHECK(p.run_count == 256);
    const pack_plan runs = plan_packing(c, plan_options{255});
    CHECK(runs.method == pack_method::runs);
    CHECK(runs.segment_elements == 1);
  }
  SUBCASE("a copy-engine call needs a pitch within the device's limit") {
    const committed_type c = commit(vector(8, 1, 1 << 20, f64));
    const strided_shape s = shape_for(plan_packing(c), c.root(), 1);
    CHECK(copy_engine_shape_of(s, std::int64_t{8} << 20).shape.has_value());
    CHECK_FALSE(copy_engine_shape_of(s, (std::int64_t{8} << 20) - 1).shape.has_value());
  }
}

// ---- random nested types (tests/support/random_datatypes.hpp: the large ones, so that the kernels run
// several blocks and tiles) ----

std::uint64_t first_seed() {
  const char* from_env = std::getenv("XF_DATATYPE_SEED");
  return from_env != nullptr ? std::strtoull(from_env, nullptr, 10) : 20261128;
}
int random_type_count(int normally) {
  return std::getenv("XF_DATATYPE_SEED") != nullptr ? 1 : normally;
}

TEST_CASE("datatype_gpu.plans_place_every_segment_where_the_traversal_does") {
  // XF_DATATYPE_SEED=n replays one type; each type's seed is printed with a failure.
  // A type listed as runs is checked also as the runs method (its plan when the list is not allowed).
  int methods[4] = {};
  for (int n = 0; n < random_type_count(400); ++n) {
    const std::uint64_t seed = first_seed() + static_cast<std::uint64_t>(n);
    CAPTURE(seed);
    testing::random_types random(seed, testing::large_random_types);
    const datatype t = random.make(4);
    const pack_method method = plan_packing(commit(t)).method;
    ++methods[static_cast<int>(method)];
    for (i64 count : {i64{1}, i64{2}, i64{5}}) {
      check_plan_against_traversal(t, count);
      if (method == pack_method::run_list) check_plan_against_traversal(t, count, plan_options{0});
    }
  }
  // The random trees reach every method, or this test would not check them all.
  if (std::getenv("XF_DATATYPE_SEED") == nullptr) {
    CHECK(methods[static_cast<int>(pack_method::strided)] > 20);
    CHECK(methods[static_cast<int>(pack_method::run_list)] > 20);
    CHECK(methods[static_cast<int>(pack_method::elements)] > 20);
  }
}

// ---- on the GPU ----

/// Waits for the legacy default stream, where device_buffer zeroes new memory and cudaMemcpy copies:
/// device memsets and copies from pageable memory may still run when those calls return, and the packing
/// work on the tests' non-blocking streams does not wait for them.
void settle_legacy_stream() {
  XF_CUDA_TRY(cudaStreamSynchronize(cudaStreamLegacy));
}

/// A user buffer in device memory holding every byte `count` instances touch, with random contents and a
/// host mirror; `device_base()` is MPI's buf, `misalign` bytes past a 256-byte boundary plus the span.
class device_user_buffer {
 public:
  device_user_buffer(const datatype& t, i64 count, std::uint64_t seed, int misalign = 0) {
    const data_span s = span_of(t, count);
    origin_ = -s.lowest + misalign;
    host_.resize(static_cast<std::size_t>(s.highest - s.lowest + misalign + 1));
    std::mt19937_64 rng(seed);
    for (std::byte& b : host_) b = static_cast<std::byte>(rng());
    device_ = device_buffer<std::byte>(host_.size());
    upload();
  }
  std::byte* device_base() { return device_.get() + origin_; }
  std::byte* host_base() { return host_.data() + origin_; }
  const bytes_t& host() const { return host_; }
  i64 origin() const { return origin_; }
  void fill(std::byte value) {
    std::fill(host_.begin(), host_.end(), value);
    upload();
  }
  void restore(const bytes_t& contents) {
    host_ = contents;
    upload();
  }
  bytes_t download() const {
    bytes_t out(host_.size());
    XF_CUDA_TRY(cudaMemcpy(out.data(), device_.get(), out.size(), cudaMemcpyDeviceToHost));
    return out;
  }

 private:
  void upload() {
    XF_CUDA_TRY(cudaMemcpy(device_.get(), host_.data(), host_.size(), cudaMemcpyHostToDevice));
    settle_legacy_stream();
  }
  bytes_t host_;
  device_buffer<std::byte> device_;
  i64 origin_ = 0;
};

/// The paths a type can take: every kernel, and the copy engine where one call fits.
std::vector<pack_path> paths_for(const device_type& d, i64 count) {
  std::vector<pack_path> paths{pack_path::automatic, pack_path::kernel, pack_path::point_kernel};
  if (d.plan().method == pack_method::strided &&
      copy_engine_shape_of(shape_for(d.plan(), d.host().root(), count), d.limits().max_pitch).shape)
    paths.push_back(pack_path::copy_engine);
  return paths;
}

/// gpu_pack by every path into `packed` (device or pinned host memory, at least packed_bytes + 16 bytes)
/// equals host pack; gpu_unpack of the result onto a blank buffer equals host unpack (unless the type
/// names a byte twice). A type the plan lists as runs is checked again with the runs kernel.
void check_on_gpu(const datatype& t, i64 count, std::uint64_t seed, std::byte* packed, cudaStream_t stream,
                  int misalign = 0, const plan_options& options = {}) {
  cudaPointerAttributes where{};
  XF_CUDA_TRY(cudaPointerGetAttributes(&where, packed));
  const bool packed_on_host = where.type == cudaMemoryTypeHost;
  CAPTURE(describe(t));
  CAPTURE(count);
  CAPTURE(misalign);
  const committed_type c = commit(t);
  const device_type d(c, options);
  CAPTURE(describe(d.plan()));
  if (d.plan().method == pack_method::run_list)
    check_on_gpu(t, count, seed, packed, stream, misalign, plan_options{0});
  device_user_buffer user(t, count, seed, misalign);
  const auto bytes = static_cast<std::size_t>(packed_bytes(c, count));
  bytes_t expected(bytes);
  pack(c, count, user.host_base(), expected.data());
  const bool overlaps = first_overlap(c, count).has_value();
  bytes_t expected_user(user.host().size(), std::byte{0x5a});
  unpack(c, count, expected.data(), expected_user.data() + user.origin());
  std::byte* const at = packed + misalign;  // the packed side misaligned as much as the user's
  for (pack_path path : paths_for(d, count)) {
    CAPTURE(name_of(path));
    // Bytes a path leaves unwritten keep 0xa5, where host pack's (of random data) mostly differ.
    if (packed_on_host)
      std::memset(packed, 0xa5, bytes + 16);
    else
      XF_CUDA_TRY(cudaMemsetAsync(packed, 0xa5, bytes + 16, stream));
    const pack_choice done = gpu_pack(d, count, user.device_base(), at, stream, {path});
    CAPTURE(done.describe());
    XF_CUDA_TRY(cudaStreamSynchronize(stream));
    bytes_t got(bytes);
    XF_CUDA_TRY(cudaMemcpy(got.data(), at, bytes, cudaMemcpyDefault));
    REQUIRE(got == expected);
    if (overlaps) continue;
    const bytes_t original = user.host();
    user.fill(std::byte{0x5a});
    gpu_unpack(d, count, at, user.device_base(), stream, {path});
    XF_CUDA_TRY(cudaStreamSynchronize(stream));
    REQUIRE(user.download() == expected_user);
    user.restore(original);
  }
}

/// One type of each constructor, large enough for several blocks and tiles, and a few nestings.
std::vector<datatype> every_constructor() {
  std::vector<i64> varied_lengths, varied_displacements, uniform_lengths, block_displacements;
  for (i64 j = 0, at = 0; j < 500; ++j) {
    varied_lengths.push_back(1 + (j * 7) % 13);
    varied_displacements.push_back(at);
    at += varied_lengths.back() + j % 5;
    uniform_lengths.push_back(j % 9 == 4 ? 0 : 6);
    block_displacements.push_back((j * 37) % 1000 - 300);  // out of order and negative
  }
  std::vector<i64> byte_displacements;
  for (i64 d : block_displacements) byte_displacements.push_back(d * 12 + 3);
  datatype deep = f64;
  for (int level = 0; level < 8; ++level) deep = vector(2 + level % 2, 1, 3 + level, deep);
  // A struct of 300 distinct member types: more records than a block's shared memory takes.
  std::vector<i64> member_lengths, member_displacements;
  std::vector<datatype> members;
  for (i64 j = 0; j < 300; ++j) {
    members.push_back(vector(2, 1, 2 + j % 7, j % 2 ? f32 : i32));
    member_lengths.push_back(1);
    member_displacements.push_back(j * 64);
  }
  return {
      contiguous(100000, f32),
      vector(5000, 3, 7, f64),
      vector(1000, 2, -5, i32),
      hvector(3000, 5, 61, u16),
      hvector(700, 64, 4096, f64),
      indexed(varied_lengths, varied_displacements, f64),
      indexed(uniform_lengths, block_displacements, f32),
      hindexed(varied_lengths, byte_displacements, i32),
      indexed_block(4, block_displacements, f32),
      hindexed_block(3, byte_displacements, f64),
      contiguous(1000, paper_struct()),
      contiguous(777, gapped_struct()),
      subarray({64, 48, 40}, {10, 20, 30}, {5, 7, 9}, array_order::c, f64),
      subarray({9, 10, 11, 12}, {3, 10, 5, 7}, {2, 0, 6, 5}, array_order::fortran, i32),
      resized(vector(300, 2, 5, f32), -8, 4096),
      vector(200, 1, 3, gapped_struct()),
      subarray({30, 40}, {10, 35}, {20, 3}, array_order::c, vector(3, 2, 4, u8)),
      contiguous(40, indexed({1, 3, 2}, {0, 4, 9}, f64)),
      hvector(50, 3, 1000, hvector(20, 1, 24, f64)),
      deep,
      struct_type(member_lengths, member_displacements, members),
  };
}

TEST_CASE("datatype_gpu.device_status") {
  // Always runs: says in the log which GPU the cases below ran on, or why they were skipped.
  const std::string problem = gpu_problem();
  if (problem.empty()) {
    cudaDeviceProp prop{};
    CHECK(cudaGetDeviceProperties(&prop, 0) == cudaSuccess);
    MESSAGE("GPU: " << prop.name);
  } else {
    MESSAGE("GPU tests skipped: " << problem);
  }
}

TEST_CASE("datatype_gpu.every_constructor_packs_like_the_host" * doctest::skip(no_gpu())) {
  cuda_stream stream;
  std::uint64_t seed = 1;
  for (const datatype& t : every_constructor()) {
    for (i64 count : {i64{1}, i64{3}}) {
      device_buffer<std::byte> packed(static_cast<std::size_t>(t.size() * count + 32));
      check_on_gpu(t, count, ++seed, packed.get(), stream.get());
    }
  }
}

TEST_CASE("datatype_gpu.random_nested_types_pack_like_the_host" * doctest::skip(no_gpu())) {
  // XF_DATATYPE_SEED=n replays one type; each type's seed is printed with a failure.
  cuda_stream stream;
  for (int n = 0; n < random_type_count(300); ++n) {
    const std::uint64_t seed = first_seed() + static_cast<std::uint64_t>(n);
    CAPTURE(seed);
    testing::random_types random(seed, testing::large_random_types);
    const datatype t = random.make(4);
    const i64 count = n % 5 == 0 ? random.pick(20, 200) : random.pick(1, 4);
    const int misalign = n % 4 == 3 ? static_cast<int>(random.pick(1, 15)) : 0;
    device_buffer<std::byte> packed(static_cast<std::size_t>(t.size() * count + 32));
    check_on_gpu(t, count, seed, packed.get(), stream.get(), misalign);
  }
}

TEST_CASE("datatype_gpu.zero_copy_packs_into_pinned_host_memory" * doctest::skip(no_gpu())) {
  cuda_stream stream;
  std::uint64_t seed = 100;
  for (const datatype& t : every_constructor()) {
    pinned_buffer<std::byte> packed(static_cast<std::size_t>(t.size() * 2 + 32));
    check_on_gpu(t, 2, ++seed, packed.get(), stream.get());
    const committed_type c = commit(t);
    const device_type d(c);
    // Into pinned memory the kernel writes across PCIe itself, unless the rule gives wide rows to the copy
    // engine.
    device_user_buffer user(t, 2, seed);
    const pack_choice kernel =
        gpu_pack(d, 2, user.device_base(), packed.get(), stream.get(), {pack_path::kernel});
    CHECK(kernel.packed == memory_kind::pinned_host);
    CHECK(kernel.user == memory_kind::device);
    XF_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  }
}

TEST_CASE("datatype_gpu.chunked_pipeline_packs_and_unpacks" * doctest::skip(no_gpu())) {
  cuda_stream stream, other;
  // Small chunks, so that every type takes several; 48 bytes: smaller than some instances, which then go
  // in pieces of elements.
  for (std::int64_t chunk : {std::int64_t{48}, std::int64_t{4096}, std::int64_t{64} << 10}) {
    CAPTURE(chunk);
    chunked_packer packer(chunk);
    std::uint64_t seed = 200;
    for (const datatype& t : every_constructor()) {
      const i64 count = 2;
      // Chunks smaller than an instance only on the smaller types: thousands of chunks say no more.
      if (chunk < 4096 && t.size() * count > (64 << 10)) continue;
      CAPTURE(describe(t));
      const committed_type c = commit(t);
      const device_type d(c);
      device_user_buffer user(t, count, ++seed);
      const auto bytes = static_cast<std::size_t>(packed_bytes(c, count));
      bytes_t expected(bytes);
      pack(c, count, user.host_base(), expected.data());
      pinned_buffer<std::byte> host(bytes + 16);
      for (pack_path path : {pack_path::kernel, pack_path::point_kernel}) {
        CAPTURE(name_of(path));
        std::memset(host.get(), 0xa5, bytes + 16);
        // Back to back on two streams: the second call reuses the staging buffers the first is still using.
        packer.pack(d, count, user.device_base(), host.get(), stream.get(), {path});
        CHECK(packer.last_chunks() >= static_cast<i64>(bytes) / chunk);
        pinned_buffer<std::byte> again(bytes + 16);
        packer.pack(d, count, user.device_base(), again.get(), other.get(), {path});
        XF_CUDA_TRY(cudaStreamSynchronize(stream.get()));
        XF_CUDA_TRY(cudaStreamSynchronize(other.get()));
        REQUIRE(std::memcmp(host.get(), expected.data(), bytes) == 0);
        REQUIRE(std::memcmp(again.get(), expected.data(), bytes) == 0);
        if (first_overlap(c, count)) continue;
        const bytes_t original = user.host();
        user.fill(std::byte{0x5a});
        packer.unpack(d, count, host.get(), user.device_base(), stream.get(), {path});
        XF_CUDA_TRY(cudaStreamSynchronize(stream.get()));
        bytes_t expected_user(original.size(), std::byte{0x5a});
        unpack(c, count, expected.data(), expected_user.data() + user.origin());
        REQUIRE(user.download() == expected_user);
        user.restore(original);
      }
    }
  }
}

TEST_CASE("datatype_gpu.copy_engine_moves_the_faces_of_a_3d_array" * doctest::skip(no_gpu())) {
  // Parts of a 64 × 48 × 40 array of doubles: the X-Y face is one block (cudaMemcpy), the X-Z face rows at
  // a pitch (2D), a Y-Z patch single doubles in planes (3D); device to device and to pinned host memory,
  // both ways.
  cuda_stream stream;
  const datatype faces[] = {subarray({64, 48, 40}, {1, 48, 40}, {9, 0, 0}, array_order::c, f64),
                            subarray({64, 48, 40}, {64, 1, 40}, {0, 17, 0}, array_order::c, f64),
                            subarray({64, 48, 40}, {64, 20, 1}, {0, 5, 39}, array_order::c, f64)};
  int dims = 0;
  for (const datatype& face : faces) {
    CAPTURE(describe(face));
    const device_type d(commit(face));
    device_user_buffer user(face, 1, 7);
    const pack_choice c =
        choose_pack_path(d, 1, user.device_base(), user.device_base(), {pack_path::copy_engine});
    CHECK(c.copy_dims == dims++);
    device_buffer<std::byte> on_device(static_cast<std::size_t>(face.size() + 32));
    pinned_buffer<std::byte> on_host(static_cast<std::size_t>(face.size() + 32));
    check_on_gpu(face, 1, 11, on_device.get(), stream.get());
    check_on_gpu(face, 1, 12, on_host.get(), stream.get());
  }
}

TEST_CASE("datatype_gpu.the_rule_picks_the_copy_engine_for_one_block_and_where_its_costs_say_faster" *
          doctest::skip(no_gpu())) {
  const auto choice = [](const datatype& t, bool to_host) {
    const device_type d(commit(t));
    device_user_buffer user(t, 1, 3);
    device_buffer<std::byte> on_device(static_cast<std::size_t>(t.size()));
    pinned_buffer<std::byte> on_host(static_cast<std::size_t>(t.size()));
    return choose_pack_path(
        d, 1, user.device_base(),
        to_host ? static_cast<void*>(on_host.get()) : static_cast<void*>(on_device.get()));
  };
  CHECK(choice(contiguous(1000, f64), false).path == pack_path::copy_engine);
  CHECK(choice(contiguous(1000, f64), true).path == pack_path::copy_engine);
  // Across PCIe, pcie_pack_costs decides: 100 000 rows of 8 bytes cost the copy engine 125 µs.
  CHECK(choice(vector(100'000, 1, 4, f64), true).path == pack_path::kernel);
  CHECK(choice(vector(100, 128, 256, f64), true).path == pack_path::copy_engine);  // 1 KiB rows
  CHECK(choice(vector(65'536, 8, 16, f64), true).path == pack_path::kernel);       // 64-byte rows, 4 MiB
  CHECK(choice(vector(4'096, 4, 8, f64), true).path == pack_path::copy_engine);    // 32-byte rows, 128 KiB
  // Device to device, device_pack_costs: a copy for a small block of wide rows, a kernel for many rows or
  // many bytes.
  CHECK(choice(vector(100, 128, 256, f64), false).path == pack_path::copy_engine);  // 100 KiB of 1 KiB rows
  CHECK(choice(vector(8'192, 1, 4, f64), false).path == pack_path::kernel);         // 8-byte rows, 64 KiB
  CHECK(choice(vector(8'192, 64, 128, f64), false).path == pack_path::kernel);      // 512-byte rows, 4 MiB
  const pack_choice k = choice(vector(10'000, 2, 4, f64), false);
  CHECK(k.method == pack_method::strided);
  CHECK(k.unit_bytes == 16);
  CHECK(choice(gapped_struct(), false).method == pack_method::elements);
}

TEST_CASE("datatype_gpu.refusals_name_the_reason" * doctest::skip(no_gpu())) {
  cuda_stream stream;
  const datatype t = indexed({1, 2}, {0, 5}, f64);
  const device_type d(commit(t));
  device_user_buffer user(t, 1, 3);
  device_buffer<std::byte> packed(64);
  CHECK_THROWS_WITH_AS(
      gpu_pack(d, 1, user.device_base(), packed.get(), stream.get(), {pack_path::copy_engine}),
      doctest::Contains("the copy engine cannot move"), precondition_error);
  CHECK_THROWS_AS(gpu_pack(d, -1, user.device_base(), packed.get(), stream.get()), precondition_error);
  int pageable_access = 0;
  XF_CUDA_TRY(cudaDeviceGetAttribute(&pageable_access, cudaDevAttrPageableMemoryAccess, 0));
  if (pageable_access == 0) {
    std::vector<std::byte> pageable(64);
    CHECK_THROWS_WITH_AS(
        gpu_pack(d, 1, user.device_base(), pageable.data(), stream.get(), {pack_path::kernel}),
        doctest::Contains("pageable host memory"), precondition_error);
    chunked_packer packer(1024);
    CHECK_THROWS_WITH_AS(packer.pack(d, 1, user.device_base(), pageable.data(), stream.get()),
                         doctest::Contains("must be pinned"), precondition_error);
  }
  // Nothing to pack: no pointer is looked at.
  const pack_choice none = gpu_pack(d, 0, nullptr, nullptr, stream.get());
  CHECK(none.bytes == 0);
  XF_CUDA_TRY(cudaStreamSynchronize(stream.get()));
}

TEST_CASE("datatype_gpu.over_two_billion_units_take_the_64_bit_path" * doctest::skip(no_gpu())) {
  // Every other byte of 4 GiB: 2^31 + 5 one-byte units, past the 32-bit indices' range. The user bytes
  // are their offset's low byte shifted by a seed, so the packed bytes are checked by formula (a host pack
  // of 2^31 one-byte runs would take minutes).
  const i64 count = (i64{1} << 31) + 5;
  const datatype t = hvector(count, 1, 2, u8);
  const device_type d(commit(t));
  const auto span = static_cast<std::size_t>(t.true_extent());
  std::size_t free_bytes = 0, total_bytes = 0;
  XF_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (free_bytes < span + static_cast<std::size_t>(count) + (std::size_t{1} << 30)) {
    MESSAGE("skipped: needs " << (span + static_cast<std::size_t>(count)) / (1 << 20)
                              << " MiB of device memory");
    return;
  }
  // User byte i is (i / 2) × 7 + 3 (mod 256): a 512-byte period, uploaded once and doubled on the device.
  device_buffer<std::byte> user(span), packed(static_cast<std::size_t>(count));
  bytes_t period(512);
  for (std::size_t i = 0; i < period.size(); ++i) period[i] = static_cast<std::byte>((i >> 1) * 7 + 3);
  XF_CUDA_TRY(cudaMemcpy(user.get(), period.data(), std::min(span, period.size()), cudaMemcpyHostToDevice));
  for (std::size_t filled = period.size(); filled < span; filled *= 2)
    XF_CUDA_TRY(cudaMemcpy(user.get() + filled, user.get(), std::min(filled, span - filled),
                           cudaMemcpyDeviceToDevice));
  settle_legacy_stream();
  cuda_stream stream;
  const pack_choice c = gpu_pack(d, 1, user.get(), packed.get(), stream.get(), {pack_path::kernel});
  CHECK(c.method == pack_method::strided);
  CHECK(c.unit_bytes == 1);
  XF_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  // Packed byte j is j × 7 + 3 (mod 256): compared a MiB at a time against one MiB of it.
  bytes_t want(1 << 20), got(1 << 20);
  for (std::size_t j = 0; j < want.size(); ++j) want[j] = static_cast<std::byte>(j * 7 + 3);
  i64 wrong_mib = 0;
  for (std::size_t at = 0; at < static_cast<std::size_t>(count); at += got.size()) {
    const std::size_t n = std::min(got.size(), static_cast<std::size_t>(count) - at);
    XF_CUDA_TRY(cudaMemcpy(got.data(), packed.get() + at, n, cudaMemcpyDeviceToHost));
    wrong_mib += std::memcmp(got.data(), want.data(), n) != 0;
  }
  CHECK(wrong_mib == 0);
}

}  // namespace
}  // namespace xf::dt
