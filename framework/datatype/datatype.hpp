// MPI derived datatypes as an immutable tree: the constructors of MPI-3.1 §4.1 over primitive elements,
// each node carrying its size, extent, bounds and element count as the standard defines them. Commit
// (committed_type.hpp) turns a tree into the flat form that the traversal and the packers read.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "framework/core/errors.hpp"
#include "framework/datatype/primitive.hpp"
#include "framework/datatype/type_kind.hpp"

namespace xf::dt {

/// The deepest tree accepted: a derived type over a primitive has depth 1. The host walks trees recursively
/// (commit, describe, equality), so the bound keeps their stacks small; the paper notes MPICH stops at 16.
inline constexpr int max_type_depth = 64;

/// A datatype that cannot be built as asked: which constructor, which argument, and why. A precondition
/// error (the caller's arguments are wrong); a configuration reader catches it to point at the line.
class invalid_datatype : public precondition_error {
 public:
  /// what(): "<constructor>: <argument> <problem>", e.g. "vector: blocklength -1 is negative".
  invalid_datatype(std::string constructor, std::string argument, const std::string& problem);
  const std::string& constructor() const noexcept { return constructor_; }
  const std::string& argument() const noexcept { return argument_; }

 private:
  std::string constructor_;
  std::string argument_;
};

class datatype;

namespace detail {
/// One node of a type tree: the constructor's arguments as given and what MPI derives from them.
struct type_node {
  type_kind kind = type_kind::primitive;
  primitive element = primitive::byte;                ///< kind primitive only
  array_order order = array_order::c;                 ///< subarray only
  std::int64_t count = 0;                             ///< copies, blocks, members or dimensions
  std::int64_t blocklength = 0;                       ///< vector, hvector, indexed_block, hindexed_block
  std::int64_t stride = 0;                            ///< vector: in child extents; hvector: in bytes
  std::vector<std::int64_t> blocklengths;             ///< indexed, hindexed, struct
  std::vector<std::int64_t> displacements;            ///< indexed*: child extents; hindexed*, struct: bytes
  std::vector<std::int64_t> sizes, subsizes, starts;  ///< subarray
  std::vector<datatype> children;                     ///< one; a struct's members

  // What MPI derives (MPI-3.1 §4.1); DESIGN.md says how.
  std::int64_t elements = 0;  ///< primitives in one instance
  std::int64_t size = 0;      ///< bytes of data in one instance
  std::int64_t lb = 0, ub = 0;
  std::int64_t true_lb = 0, true_ub = 0;  ///< of the data alone; 0, 0 without data
  std::int64_t alignment = 1;             ///< the largest of its primitives'
  bool markers = false;  ///< lb and ub come from markers (resized, subarray) and stick in enclosing types
  bool dense = true;     ///< its data, in type-map order, fills [true_lb, true_lb + size) without a gap
  int depth = 0;
};
}  // namespace detail

/// A datatype: a shared, immutable node. Copies are cheap and share the node; a tree may share subtrees.
/// Thread-safe to read from any number of threads.
class datatype {
 public:
  datatype(primitive p);  // NOLINT(google-explicit-constructor): f64 reads as the datatype of doubles
  datatype(element_type t) : datatype(primitive_of(t)) {}  // NOLINT(google-explicit-constructor)

  type_kind kind() const { return node_->kind; }
  /// The element of a primitive type.
  primitive element() const { return node_->element; }

  /// Primitive elements in one instance (the paper's "elements", propagated up the tree).
  std::int64_t elements() const { return node_->elements; }
  /// MPI_Type_size: bytes of data in one instance.
  std::int64_t size() const { return node_->size; }
  /// MPI_Type_get_extent: lower bound and extent (ub - lb); for resized, the arguments.
  std::int64_t lb() const { return node_->lb; }
  std::int64_t ub() const { return node_->ub; }
  std::int64_t extent() const { return node_->ub - node_->lb; }
  /// MPI_Type_get_true_extent: the bounds of the data alone, markers and alignment ignored.
  std::int64_t true_lb() const { return node_->true_lb; }
  std::int64_t true_ub() const { return node_->true_ub; }
  std::int64_t true_extent() const { return node_->true_ub - node_->true_lb; }
  std::int64_t alignment() const { return node_->alignment; }
  /// Whether lb and ub are set by markers (resized, subarray), which enclosing types keep.
  bool has_markers() const { return node_->markers; }
  /// Whether the data, in type-map order, is one gapless run from true_lb: one copy is one memcpy.
  bool is_dense() const { return node_->dense; }
  /// Dense, with copies that follow each other without a gap (extent == size): n copies are one memcpy.
  bool is_tight() const { return node_->dense && node_->ub - node_->lb == node_->size; }
  int depth() const { return node_->depth; }

  // The constructor's arguments as given.
  std::int64_t count() const { return node_->count; }
  std::int64_t blocklength() const { return node_->blocklength; }
  std::int64_t stride() const { return node_->stride; }
  std::span<const std::int64_t> blocklengths() const { return node_->blocklengths; }
  std::span<const std::int64_t> displacements() const { return node_->displacements; }
  std::span<const std::int64_t> sizes() const { return node_->sizes; }
  std::span<const std::int64_t> subsizes() const { return node_->subsizes; }
  std::span<const std::int64_t> starts() const { return node_->starts; }
  array_order order() const { return node_->order; }
  /// The child type (one), or a struct's member types; empty for a primitive.
  std::span<const datatype> children() const { return node_->children; }
  const datatype& child() const { return node_->children.front(); }

  /// The same tree: kinds, arguments and primitives equal at every node (so the same type map).
  friend bool operator==(const datatype& a, const datatype& b);

  /// Whether the two share one node (a copy of the same datatype).
  bool same_node(const datatype& other) const { return node_ == other.node_; }

 private:
  explicit datatype(std::shared_ptr<const detail::type_node> node) : node_(std::move(node)) {}
  friend datatype make_datatype(detail::type_node node);
  std::shared_ptr<const detail::type_node> node_;
};

// The constructors, after MPI_Type_contiguous, MPI_Type_vector, MPI_Type_create_hvector,
// MPI_Type_indexed, MPI_Type_create_hindexed, MPI_Type_create_indexed_block,
// MPI_Type_create_hindexed_block, MPI_Type_create_struct, MPI_Type_create_subarray and
// MPI_Type_create_resized. Counts are the lengths of the arrays. Displacements and strides of the plain
// forms count extents of the child, those of the h-forms and struct count bytes. Each throws
// invalid_datatype for arguments MPI calls erroneous (negative counts and block lengths, arrays of unequal
// length, a subarray outside its array), for a tree deeper than max_type_depth, and for sizes or bounds
// beyond 64-bit byte offsets.

datatype contiguous(std::int64_t count, const datatype& child);
datatype vector(std::int64_t count, std::int64_t blocklength, std::int64_t stride, const datatype& child);
datatype hvector(std::int64_t count, std::int64_t blocklength, std::int64_t stride_bytes,
                 const datatype& child);
datatype indexed(const std::vector<std::int64_t>& blocklengths,
                 const std::vector<std::int64_t>& displacements, const datatype& child);
datatype hindexed(const std::vector<std::int64_t>& blocklengths,
                  const std::vector<std::int64_t>& displacements_bytes, const datatype& child);
datatype indexed_block(std::int64_t blocklength, const std::vector<std::int64_t>& displacements,
                       const datatype& child);
datatype hindexed_block(std::int64_t blocklength, const std::vector<std::int64_t>& displacements_bytes,
                        const datatype& child);
datatype struct_type(const std::vector<std::int64_t>& blocklengths,
                     const std::vector<std::int64_t>& displacements_bytes,
                     const std::vector<datatype>& types);
/// sizes, subsizes and starts per dimension, in the order of the array's declaration (C or Fortran).
datatype subarray(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& subsizes,
                  const std::vector<std::int64_t>& starts, array_order order, const datatype& child);
datatype resized(const datatype& child, std::int64_t lb, std::int64_t extent);

/// The tree as the constructor calls that build it: "vector(2, 3, 4, struct([1, 1], [0, 8], [f64, char]))".
std::string describe(const datatype& t);

}  // namespace xf::dt
