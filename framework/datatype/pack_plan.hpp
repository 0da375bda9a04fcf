// How a committed type packs on the GPU, worked out once on the host from its records: as a strided shape
// (segments of one length at offsets that nested counts and strides, or offset tables, give: no traversal
// in the kernel), as a list of one instance's runs, as runs of a fixed number of elements that the
// traversal finds, or element by element.
// For a strided shape and a count of instances, also the cudaMemcpy/2D/3D that copies it, when there is one.
// Plain C++, so that the analysis is tested where there is no GPU.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/datatype/committed_type.hpp"

namespace xf::dt {

/// How the kernel finds what to copy.
enum class pack_method : std::uint8_t {
  strided,  ///< segments at offsets computed from counts and strides (or tables): the type-specific fast path
  run_list,  ///< one instance's runs listed at commit (user offset, packed offset): a binary search per unit
  runs,      ///< segments of a fixed number of elements, each found by locate(): one traversal per segment
  elements,  ///< each element found by locate(): the paper's point-based kernel, for any type
};
std::string_view name_of(pack_method m);

/// The most dimensions a strided shape has, the instances' own included: the kernels' parameter arrays.
inline constexpr int max_strided_dims = 8;

/// One dimension of a strided shape: `count` copies of what the inner dimensions describe, copy i at
/// i × stride bytes, or at tables[table + i] bytes when the dimension has a table (an indexed type's
/// blocks).
struct strided_dim {
  std::int64_t count = 1;
  std::int64_t stride = 0;  ///< bytes; unused with a table
  std::int64_t table = -1;  ///< the first of its `count` byte offsets in pack_plan::tables, or -1

  bool has_table() const { return table >= 0; }
  friend bool operator==(const strided_dim&, const strided_dim&) = default;
};

/// A type's packing, without the count of instances (which a call adds). Built by plan_packing().
struct pack_plan {
  pack_method method = pack_method::elements;
  /// strided, runs: what every segment is, contiguous in the user's buffer and in the packed one.
  std::int64_t segment_bytes = 0;
  std::int64_t segment_elements = 0;
  /// strided: bytes from MPI's buf to instance 0's first segment, and the dimensions outermost first (the
  /// instances' dimension not included; at most max_strided_dims - 1).
  std::int64_t base = 0;
  std::vector<strided_dim> dims;
  /// strided: the table dimensions' byte offsets, concatenated. run_list: the runs' byte offsets from buf,
  /// then their packed byte offsets (ascending), run_count of each; then for each bucket of
  /// 2^bucket_shift packed bytes the run holding its first byte, and run_count - 1 (bucket_count + 1).
  std::vector<std::int64_t> tables;
  std::int64_t run_count = 0;     ///< run_list: runs in one instance
  std::int64_t bucket_shift = 0;  ///< run_list: a bucket's packed bytes, log 2 (about a run's average)
  std::int64_t bucket_count = 0;  ///< run_list: buckets in one instance (at most run_count)
  /// strided, runs: a divisor of every segment's byte offset from buf within instance 0 (0 when all are 0).
  /// The kernels copy in units of the largest power of two dividing it, the segment and both pointers.
  /// run_list: a divisor of every run's offsets (user and packed) and length.
  std::int64_t offset_divisor = 0;
  /// Why the type is not strided (runs, elements): for describe() and the benchmark's rows.
  std::string not_strided_because;
};

/// What plan_packing may use.
struct plan_options {
  /// Most runs a run_list plan lists (16 bytes of device memory each); a type with more is `runs`. Tests
  /// set 0 to run the runs kernel on types that would be listed.
  std::int64_t max_listed_runs = std::int64_t{1} << 20;
};

/// Reads the records once: a dense record (or a primitive) ends the walk as one segment; the constructors
/// above it become dimensions. A struct above the first dense record makes the type `elements`; an indexed
/// type with blocks of different lengths, or more dimensions than max_strided_dims allows, makes it
/// `run_list` where one instance has at most o.max_listed_runs runs (runs next to each other in the user's
/// buffer join), else `runs`. O(records + the lookaside of the walked records), and for run_list
/// O(runs × the traversal's depth).
pack_plan plan_packing(const committed_type& t, const plan_options& o = {});

/// "strided: 4096 segments of 8 B, dims [512 × 4096 B, 8 × table]" — for tests' and benchmarks' output.
std::string describe(const pack_plan& p);

/// A strided plan applied to `count` instances: the instances' dimension added outermost, dimensions of
/// one copy dropped (a table's single offset joins the base), and neighbours merged where the outer one's
/// stride is the inner one's whole span, the innermost into the segment where its stride is the segment.
struct strided_shape {
  std::int64_t segment_bytes = 0;
  std::int64_t base = 0;
  std::vector<strided_dim> dims;  ///< outermost first; none: one segment
  std::int64_t segments = 0;      ///< product of the counts
  std::int64_t offset_divisor = 0;
};

/// Requires p.method == strided and count × the type's bytes, elements and extent within 64 bits
/// (packed_bytes checks them).
strided_shape shape_for(const pack_plan& p, const type_record& root, std::int64_t count);

/// Byte offset from buf of segment `s` of the shape (host code: tests and the chunked path's checks).
std::int64_t segment_offset(const strided_shape& shape, const std::vector<std::int64_t>& tables,
                            std::int64_t s);

/// One copy-engine call that moves a strided shape: cudaMemcpy (dims 0: `row_bytes` bytes), cudaMemcpy2D
/// (dims 1: `rows` rows `pitch` apart) or cudaMemcpy3D (dims 2: `planes` of `rows` rows, planes
/// `rows_per_plane` × pitch apart).
struct copy_engine_shape {
  int dims = 0;
  std::int64_t base = 0;  ///< bytes from buf to the first row
  std::int64_t row_bytes = 0;
  std::int64_t rows = 1;
  std::int64_t pitch = 0;
  std::int64_t planes = 1;
  std::int64_t rows_per_plane = 0;
};

/// The copy-engine call for the shape, if one call does it: no table dimensions, at most two dimensions,
/// positive pitches of at least a row and at most `max_pitch` (the device's cudaDevAttrMaxPitch), and for
/// three dimensions a plane stride that is a whole number of pitches, at least `rows` of them. Otherwise
/// the reason, for the error of a call that forces the copy engine.
struct copy_engine_fit {
  std::optional<copy_engine_shape> shape;
  std::string reason;
};
copy_engine_fit copy_engine_shape_of(const strided_shape& s, std::int64_t max_pitch);

/// The largest power of two of at most 16 bytes that divides every value (0 is divided by all).
std::int64_t unit_bytes_dividing(std::initializer_list<std::int64_t> values);

}  // namespace xf::dt
