// The datatype constructors: arguments checked as MPI requires, then size, bounds, element count and
// density derived from the children's, without walking the type map (a vector of a billion blocks costs
// what one of two costs).
#include "framework/datatype/datatype.hpp"

#include <algorithm>
#include <array>
#include <limits>

namespace xf::dt {

invalid_datatype::invalid_datatype(std::string constructor, std::string argument, const std::string& problem)
    : precondition_error(constructor + ": " + argument + " " + problem),
      constructor_(std::move(constructor)),
      argument_(std::move(argument)) {}

datatype make_datatype(detail::type_node node) {
  return datatype(std::make_shared<const detail::type_node>(std::move(node)));
}

datatype::datatype(primitive p) {
  // One node per primitive for the whole process: the primitives are the leaves of every tree.
  static const std::array<std::shared_ptr<const detail::type_node>, primitive_count> nodes = [] {
    std::array<std::shared_ptr<const detail::type_node>, primitive_count> all;
    for (int i = 0; i < primitive_count; ++i) {
      detail::type_node n;
      n.element = static_cast<primitive>(i);
      n.elements = 1;
      n.size = size_of(n.element);
      n.ub = n.true_ub = n.size;
      n.alignment = alignment_of(n.element);
      all[i] = std::make_shared<const detail::type_node>(std::move(n));
    }
    return all;
  }();
  const auto i = static_cast<std::size_t>(p);
  if (i >= nodes.size()) throw invalid_datatype("primitive", "element", "is not a primitive type");
  node_ = nodes[i];
}

bool operator==(const datatype& a, const datatype& b) {
  if (a.node_ == b.node_) return true;
  const detail::type_node& x = *a.node_;
  const detail::type_node& y = *b.node_;
  if (x.kind != y.kind || x.element != y.element || x.order != y.order || x.count != y.count ||
      x.blocklength != y.blocklength || x.stride != y.stride || x.blocklengths != y.blocklengths ||
      x.displacements != y.displacements || x.sizes != y.sizes || x.subsizes != y.subsizes ||
      x.starts != y.starts || x.children.size() != y.children.size())
    return false;
  // resized's arguments are its bounds; for the other kinds equal arguments give equal bounds.
  if (x.kind == type_kind::resized && (x.lb != y.lb || x.ub != y.ub)) return false;
  return std::equal(x.children.begin(), x.children.end(), y.children.begin());
}

namespace {

using i64 = std::int64_t;

/// An argument's name, spelled out only when an error names it ("count", "displacements[3]"): a type of a
/// million blocks checks each without building a million strings.
class argument_name {
 public:
  argument_name(const char* name) : name_(name) {}  // NOLINT(google-explicit-constructor)
  argument_name(const char* array, std::size_t index) : name_(array), index_(index), indexed_(true) {}
  std::string str() const {
    return indexed_ ? std::string(name_) + "[" + std::to_string(index_) + "]" : name_;
  }

 private:
  const char* name_;
  std::size_t index_ = 0;
  bool indexed_ = false;
};

/// Checked arithmetic for one constructor: the sizes, bounds and displacements the traversal computes
/// later are bounded by values checked here, so a type that builds does not overflow there.
class arithmetic {
 public:
  explicit arithmetic(const char* constructor) : constructor_(constructor) {}
  i64 mul(i64 a, i64 b, const argument_name& argument) const {
    i64 r;
    if (__builtin_mul_overflow(a, b, &r)) overflow(argument);
    return r;
  }
  i64 add(i64 a, i64 b, const argument_name& argument) const {
    i64 r;
    if (__builtin_add_overflow(a, b, &r)) overflow(argument);
    return r;
  }
  i64 sub(i64 a, i64 b, const argument_name& argument) const {
    i64 r;
    if (__builtin_sub_overflow(a, b, &r)) overflow(argument);
    return r;
  }
  [[noreturn]] void fail(const argument_name& argument, const std::string& problem) const {
    throw invalid_datatype(constructor_, argument.str(), problem);
  }
  void not_negative(i64 v, const argument_name& argument) const {
    if (v < 0) fail(argument, std::to_string(v) + " is negative");
  }

 private:
  [[noreturn]] void overflow(const argument_name& argument) const {
    fail(argument, "makes a size or byte offset overflow 64 bits");
  }
  const char* constructor_;
};

/// Accumulates the bounds of blocks of copies of children (MPI-3.1 §4.1, the lb and ub markers): markers
/// wherever a child has them, data wherever it has elements; finish() applies the standard's rule — the
/// markers' extremes if any marker is in the type map, else the data's with ub rounded up by epsilon to the
/// alignment.
class bounds_builder {
 public:
  explicit bounds_builder(const arithmetic& a) : a_(a) {}

  /// `copies` copies of `child`, the first at byte displacement `d`, each `child.extent()` after the last.
  /// `keep_markers` false: the child's markers are erased (a subarray's own replace them).
  void add(const datatype& child, i64 d, i64 copies, const argument_name& argument,
           bool keep_markers = true) {
    if (copies <= 0) return;
    const i64 span = a_.mul(copies - 1, child.extent(), argument);
    const i64 low = std::min<i64>(0, span), high = std::max<i64>(0, span);
    if (keep_markers && child.has_markers()) {
      markers_ = true;
      lb_ = std::min(lb_, a_.add(a_.add(d, child.lb(), argument), low, argument));
      ub_ = std::max(ub_, a_.add(a_.add(d, child.ub(), argument), high, argument));
    }
    if (child.elements() > 0) {
      data_ = true;
      true_lb_ = std::min(true_lb_, a_.add(a_.add(d, child.true_lb(), argument), low, argument));
      true_ub_ = std::max(true_ub_, a_.add(a_.add(d, child.true_ub(), argument), high, argument));
      alignment_ = std::max(alignment_, child.alignment());
    }
  }

  /// `blame`: the argument named when an extent does not fit in 64 bits.
  void finish(detail::type_node& n, const argument_name& blame) const {
    n.alignment = alignment_;
    n.true_lb = data_ ? true_lb_ : 0;
    n.true_ub = data_ ? true_ub_ : 0;
    n.markers = markers_;
    if (markers_) {
      n.lb = lb_;
      n.ub = ub_;
    } else {
      n.lb = n.true_lb;
      const i64 rest = a_.sub(n.true_ub, n.true_lb, blame) % alignment_;  // never negative
      n.ub = a_.add(n.true_ub, rest == 0 ? 0 : alignment_ - rest, blame);
    }
    // Both extents must be offsets too.
    a_.sub(n.ub, n.lb, blame);
    a_.sub(n.true_ub, n.true_lb, blame);
  }

 private:
  const arithmetic& a_;
  bool markers_ = false, data_ = false;
  i64 lb_ = std::numeric_limits<i64>::max(), ub_ = std::numeric_limits<i64>::min();
  i64 true_lb_ = std::numeric_limits<i64>::max(), true_ub_ = std::numeric_limits<i64>::min();
  i64 alignment_ = 1;
};

/// Whether the data of blocks, visited in type-map order, follows on without gaps: each block of copies
/// is dense and starts where the one before ended.
class density_builder {
 public:
  void add(const datatype& child, i64 d, i64 copies) {
    if (copies <= 0 || child.elements() == 0) return;
    const bool block_dense = child.is_dense() && (copies == 1 || child.extent() == child.size());
    const i64 start = d + child.true_lb();  // between bounds the bounds builder checked
    if (!block_dense || (started_ && start != end_)) dense_ = false;
    started_ = true;
    if (dense_) end_ = start + copies * child.size();  // the block's true_ub: in range too
  }
  bool dense() const { return dense_; }

 private:
  bool dense_ = true, started_ = false;
  i64 end_ = 0;
};

detail::type_node derived(const arithmetic& a, type_kind kind, std::vector<datatype> children) {
  detail::type_node n;
  n.kind = kind;
  int depth = 0;
  for (const datatype& c : children) depth = std::max(depth, c.depth());
  if (depth + 1 > max_type_depth)
    a.fail(children.size() == 1 ? "child" : "types",
           "nests " + std::to_string(depth) + " levels deep; at most " + std::to_string(max_type_depth - 1) +
               " are accepted");
  n.depth = depth + 1;
  n.children = std::move(children);
  return n;
}

/// Size, elements, bounds and density of `blocks` blocks of `blocklength` copies of the child, block j at
/// byte displacement j * stride_bytes (contiguous: one block; vector, hvector).
void derive_strided(const arithmetic& a, detail::type_node& n, i64 blocks, i64 blocklength, i64 stride_bytes,
                    const datatype& child, const char* count_argument, const char* stride_argument) {
  const i64 copies = a.mul(blocks, blocklength, count_argument);
  n.elements = a.mul(copies, child.elements(), count_argument);
  n.size = a.mul(copies, child.size(), count_argument);
  bounds_builder bounds(a);
  // The bounds are extremes of affine functions of the block number: the first and last blocks give them.
  if (blocks > 0) {
    bounds.add(child, 0, blocklength, count_argument);
    bounds.add(child, a.mul(blocks - 1, stride_bytes, stride_argument), blocklength, stride_argument);
  }
  bounds.finish(n, stride_argument);
  // Blocks follow on when each is dense and the stride is one block's data (a product bounded by size).
  n.dense = copies == 0 || child.elements() == 0 ||
            (child.is_dense() && (blocklength == 1 || child.extent() == child.size()) &&
             (blocks == 1 || stride_bytes == blocklength * child.size()));
}

/// One block of a listed type (indexed, struct): `copies` copies of `child` at byte displacement `d`.
struct listed_block {
  const datatype* child;
  i64 displacement;
  i64 copies;
};

/// Size, elements, bounds and density of `blocks` blocks, block j being `block(j)`, in type-map order.
template <class Block>
void derive_listed(const arithmetic& a, detail::type_node& n, std::size_t blocks, Block block) {
  bounds_builder bounds(a);
  density_builder density;
  for (std::size_t j = 0; j < blocks; ++j) {
    const listed_block b = block(j);
    const argument_name argument("blocklengths", j);
    n.elements = a.add(n.elements, a.mul(b.copies, b.child->elements(), argument), argument);
    n.size = a.add(n.size, a.mul(b.copies, b.child->size(), argument), argument);
    bounds.add(*b.child, b.displacement, b.copies, argument_name("displacements", j));
    density.add(*b.child, b.displacement, b.copies);
  }
  bounds.finish(n, "displacements");
  n.dense = density.dense();
}

void equal_lengths(const arithmetic& a, std::size_t expected, const char* expected_name, std::size_t got,
                   const char* got_name) {
  if (got != expected)
    a.fail(got_name,
           "has " + std::to_string(got) + " entries for " + std::to_string(expected) + " " + expected_name);
}

datatype vector_like(const char* name, type_kind kind, i64 count, i64 blocklength, i64 stride,
                     bool in_extents, const datatype& child) {
  const arithmetic a(name);
  a.not_negative(count, "count");
  a.not_negative(blocklength, "blocklength");
  detail::type_node n = derived(a, kind, {child});
  n.count = count;
  n.blocklength = blocklength;
  n.stride = stride;
  const i64 stride_bytes = in_extents ? a.mul(stride, child.extent(), "stride") : stride;
  derive_strided(a, n, count, blocklength, stride_bytes, child, "count", "stride");
  return make_datatype(std::move(n));
}

/// indexed and hindexed (`blocklengths` given), indexed_block and hindexed_block (null: `blocklength` for
/// every block).
datatype listed_like(const char* name, type_kind kind, const std::vector<i64>* blocklengths, i64 blocklength,
                     const std::vector<i64>& displacements, bool in_extents, const datatype& child) {
  const arithmetic a(name);
  if (blocklengths != nullptr) {
    equal_lengths(a, blocklengths->size(), "blocklengths", displacements.size(), "displacements");
    for (std::size_t j = 0; j < blocklengths->size(); ++j)
      a.not_negative((*blocklengths)[j], argument_name("blocklengths", j));
  } else {
    a.not_negative(blocklength, "blocklength");
  }
  detail::type_node n = derived(a, kind, {child});
  n.count = static_cast<i64>(displacements.size());
  if (blocklengths != nullptr)
    n.blocklengths = *blocklengths;
  else
    n.blocklength = blocklength;
  n.displacements = displacements;
  const i64 unit = in_extents ? child.extent() : 1;
  derive_listed(a, n, displacements.size(), [&](std::size_t j) {
    return listed_block{&child, a.mul(displacements[j], unit, argument_name("displacements", j)),
                        blocklengths != nullptr ? (*blocklengths)[j] : blocklength};
  });
  return make_datatype(std::move(n));
}

void append_list(std::string& out, std::span<const i64> values) {
  // Diagnostics stay readable for types with many blocks: the first entries and the count.
  constexpr std::size_t shown = 32;
  out += '[';
  for (std::size_t i = 0; i < values.size() && i < shown; ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(values[i]);
  }
  if (values.size() > shown) out += ", ... (" + std::to_string(values.size()) + " in all)";
  out += ']';
}

void describe_to(std::string& out, const datatype& t) {
  const auto number = [&](i64 v) { out += std::to_string(v) + ", "; };
  const auto list = [&](std::span<const i64> v) {
    append_list(out, v);
    out += ", ";
  };
  if (t.kind() == type_kind::primitive) {
    out += name_of(t.element());
    return;
  }
  out += name_of(t.kind());
  out += '(';
  switch (t.kind()) {
    case type_kind::contiguous:
      number(t.count());
      break;
    case type_kind::vector:
    case type_kind::hvector:
      number(t.count());
      number(t.blocklength());
      number(t.stride());
      break;
    case type_kind::indexed:
    case type_kind::hindexed:
      list(t.blocklengths());
      list(t.displacements());
      break;
    case type_kind::indexed_block:
    case type_kind::hindexed_block:
      number(t.blocklength());
      list(t.displacements());
      break;
    case type_kind::struct_type:
      list(t.blocklengths());
      list(t.displacements());
      out += '[';
      for (std::size_t i = 0; i < t.children().size(); ++i) {
        if (i > 0) out += ", ";
        describe_to(out, t.children()[i]);
      }
      out += "])";
      return;
    case type_kind::subarray:
      list(t.sizes());
      list(t.subsizes());
      list(t.starts());
      out += t.order() == array_order::c ? "c, " : "fortran, ";
      break;
    case type_kind::resized:
      describe_to(out, t.child());
      out += ", " + std::to_string(t.lb()) + ", " + std::to_string(t.extent()) + ")";
      return;
    case type_kind::primitive:
      break;
  }
  describe_to(out, t.child());
  out += ')';
}

}  // namespace

datatype contiguous(i64 count, const datatype& child) {
  const arithmetic a("contiguous");
  a.not_negative(count, "count");
  detail::type_node n = derived(a, type_kind::contiguous, {child});
  n.count = count;
  derive_strided(a, n, 1, count, 0, child, "count", "count");
  return make_datatype(std::move(n));
}

datatype vector(i64 count, i64 blocklength, i64 stride, const datatype& child) {
  return vector_like("vector", type_kind::vector, count, blocklength, stride, true, child);
}

datatype hvector(i64 count, i64 blocklength, i64 stride_bytes, const datatype& child) {
  return vector_like("hvector", type_kind::hvector, count, blocklength, stride_bytes, false, child);
}

datatype indexed(const std::vector<i64>& blocklengths, const std::vector<i64>& displacements,
                 const datatype& child) {
  return listed_like("indexed", type_kind::indexed, &blocklengths, 0, displacements, true, child);
}

datatype hindexed(const std::vector<i64>& blocklengths, const std::vector<i64>& displacements_bytes,
                  const datatype& child) {
  return listed_like("hindexed", type_kind::hindexed, &blocklengths, 0, displacements_bytes, false, child);
}

datatype indexed_block(i64 blocklength, const std::vector<i64>& displacements, const datatype& child) {
  return listed_like("indexed_block", type_kind::indexed_block, nullptr, blocklength, displacements, true,
                     child);
}

datatype hindexed_block(i64 blocklength, const std::vector<i64>& displacements_bytes, const datatype& child) {
  return listed_like("hindexed_block", type_kind::hindexed_block, nullptr, blocklength, displacements_bytes,
                     false, child);
}

datatype struct_type(const std::vector<i64>& blocklengths, const std::vector<i64>& displacements_bytes,
                     const std::vector<datatype>& types) {
  const arithmetic a("struct");
  equal_lengths(a, blocklengths.size(), "blocklengths", displacements_bytes.size(), "displacements");
  equal_lengths(a, blocklengths.size(), "blocklengths", types.size(), "types");
  for (std::size_t j = 0; j < blocklengths.size(); ++j)
    a.not_negative(blocklengths[j], argument_name("blocklengths", j));
  detail::type_node n = derived(a, type_kind::struct_type, types);
  n.count = static_cast<i64>(blocklengths.size());
  n.blocklengths = blocklengths;
  n.displacements = displacements_bytes;
  derive_listed(a, n, types.size(), [&](std::size_t j) {
    return listed_block{&types[j], displacements_bytes[j], blocklengths[j]};
  });
  return make_datatype(std::move(n));
}

datatype subarray(const std::vector<i64>& sizes, const std::vector<i64>& subsizes,
                  const std::vector<i64>& starts, array_order order, const datatype& child) {
  const arithmetic a("subarray");
  if (sizes.empty()) a.fail("sizes", "is empty: a subarray has at least one dimension");
  equal_lengths(a, sizes.size(), "sizes", subsizes.size(), "subsizes");
  equal_lengths(a, sizes.size(), "sizes", starts.size(), "starts");
  const std::size_t dims = sizes.size();
  for (std::size_t d = 0; d < dims; ++d) {
    const argument_name size("sizes", d), subsize("subsizes", d);
    const auto is = [](const argument_name& name, i64 value) {
      return name.str() + " = " + std::to_string(value);
    };
    if (sizes[d] < 1) a.fail(size, "is " + std::to_string(sizes[d]) + ": every dimension needs an element");
    if (subsizes[d] < 1 || subsizes[d] > sizes[d])
      a.fail(subsize, "is " + std::to_string(subsizes[d]) + ": must lie in [1, " + is(size, sizes[d]) + "]");
    if (starts[d] < 0 || starts[d] > sizes[d] - subsizes[d])
      a.fail(argument_name("starts", d), "is " + std::to_string(starts[d]) + ": with " +
                                             is(subsize, subsizes[d]) + " the subarray leaves [0, " +
                                             is(size, sizes[d]) + ")");
  }
  detail::type_node n = derived(a, type_kind::subarray, {child});
  n.count = static_cast<i64>(dims);
  n.sizes = sizes;
  n.subsizes = subsizes;
  n.starts = starts;
  n.order = order;
  // Linear offsets of the first and last selected elements, and whether the selection is one run: past
  // the fastest dimensions that are whole, one partial dimension, then only dimensions of one.
  i64 total = 1, selected = 1, first = 0, last = 0;
  bool partial_seen = false, one_run = true;
  for (std::size_t i = 0; i < dims; ++i) {
    const std::size_t d = order == array_order::c ? dims - 1 - i : i;  // fastest first
    first = a.add(first, a.mul(starts[d], total, "sizes"), "sizes");
    last = a.add(last, a.mul(starts[d] + subsizes[d] - 1, total, "sizes"), "sizes");
    total = a.mul(total, sizes[d], "sizes");
    selected = a.mul(selected, subsizes[d], "subsizes");
    if (partial_seen && subsizes[d] != 1) one_run = false;
    if (subsizes[d] != sizes[d]) partial_seen = true;
  }
  n.elements = a.mul(selected, child.elements(), "subsizes");
  n.size = a.mul(selected, child.size(), "subsizes");
  // MPI defines the subarray as resized to the whole array, [0, product of sizes × child extent): its own
  // markers replace the child's.
  bounds_builder bounds(a);
  bounds.add(child, a.mul(first, child.extent(), "sizes"), 1, "starts", false);
  bounds.add(child, a.mul(last, child.extent(), "sizes"), 1, "starts", false);
  bounds.finish(n, "sizes");
  n.markers = true;
  n.lb = 0;
  n.ub = a.mul(total, child.extent(), "sizes");
  n.dense = child.elements() == 0 || (one_run && (selected == 1 ? child.is_dense() : child.is_tight()));
  return make_datatype(std::move(n));
}

datatype resized(const datatype& child, i64 lb, i64 extent) {
  const arithmetic a("resized");
  detail::type_node n = derived(a, type_kind::resized, {child});
  n.elements = child.elements();
  n.size = child.size();
  n.true_lb = child.true_lb();
  n.true_ub = child.true_ub();
  n.alignment = child.alignment();
  n.dense = child.is_dense();
  // The new markers erase every marker below (MPI_Type_create_resized).
  n.markers = true;
  n.lb = lb;
  n.ub = a.add(lb, extent, "extent");
  return make_datatype(std::move(n));
}

std::string describe(const datatype& t) {
  std::string out;
  describe_to(out, t);
  return out;
}

}  // namespace xf::dt
