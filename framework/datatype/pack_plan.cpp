// The GPU packing plan of a committed type: the walk from the root to the first dense record, the strided
// shape it gives, its normal form, and the copy-engine call that moves a shape.
#include "framework/datatype/pack_plan.hpp"

#include <numeric>
#include <sstream>

#include "framework/core/errors.hpp"
#include "framework/datatype/traversal.hpp"

namespace xf::dt {

namespace {

std::int64_t gcd_with(std::int64_t divisor, std::int64_t value) {
  return std::gcd(divisor, value);  // std::gcd takes absolute values; gcd(0, v) = |v|
}

/// Drops dimensions of one copy and merges what follows on (pack_plan.hpp, strided_shape), in place.
void normalize(std::int64_t& segment_bytes, std::int64_t& segment_elements, std::int64_t& base,
               std::vector<strided_dim>& dims, const std::vector<std::int64_t>& tables) {
  std::erase_if(dims, [&](const strided_dim& d) {
    if (d.count != 1) return false;
    if (d.has_table()) base += tables[static_cast<std::size_t>(d.table)];
    return true;
  });
  for (bool merged = true; merged;) {
    merged = false;
    while (!dims.empty() && !dims.back().has_table() && dims.back().stride == segment_bytes) {
      segment_bytes *= dims.back().count;  // bounded by the type's bytes, which fit
      segment_elements *= dims.back().count;
      dims.pop_back();
      merged = true;
    }
    for (std::size_t k = 0; k + 1 < dims.size(); ++k) {
      const strided_dim outer = dims[k], inner = dims[k + 1];
      if (outer.has_table() || inner.has_table() || outer.stride != inner.count * inner.stride) continue;
      dims[k] = strided_dim{outer.count * inner.count, inner.stride, -1};
      dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(k) + 1);
      merged = true;
      break;
    }
  }
}

/// What the walk from the root collects.
class plan_walk {
 public:
  void affine(std::int64_t count, std::int64_t stride_bytes) {
    dims_.push_back(strided_dim{count, stride_bytes, -1});
    if (count > 1) divisor_ = gcd_with(divisor_, stride_bytes);
  }
  void table(std::int64_t count, const std::int64_t* displacements, std::int64_t unit_bytes) {
    dims_.push_back(strided_dim{count, 0, static_cast<std::int64_t>(tables_.size())});
    for (std::int64_t j = 0; j < count; ++j) {
      tables_.push_back(displacements[j] * unit_bytes);  // checked by the constructor: fits
      divisor_ = gcd_with(divisor_, tables_.back());
    }
  }
  void offset(std::int64_t bytes) {
    base_ += bytes;
    divisor_ = gcd_with(divisor_, bytes);
  }
  /// Every offset a level adds is a multiple of `bytes` (the runs method's divisor: no dimensions).
  void divides(std::int64_t bytes) { divisor_ = gcd_with(divisor_, bytes); }

  std::vector<strided_dim> dims_;
  std::vector<std::int64_t> tables_;
  std::int64_t base_ = 0;
  std::int64_t divisor_ = 0;
};

/// The gcd of a leaf record's block lengths (in elements: the child is a primitive). The traversal's run
/// never ends inside a block, so every group of that many elements starting at a multiple of it is
/// contiguous in both buffers.
std::int64_t leaf_block_elements(const serialized_view& v, const type_record& rec) {
  const std::int64_t* words = v.lookaside_of(rec);
  switch (static_cast<type_kind>(rec.kind)) {
    case type_kind::contiguous:
      return rec.count;
    case type_kind::vector:
    case type_kind::hvector:
    case type_kind::indexed_block:
    case type_kind::hindexed_block:
      return rec.blocklength;
    case type_kind::indexed:
    case type_kind::hindexed: {
      std::int64_t g = 0;
      const std::int64_t* prefix = words + rec.count;
      for (std::int64_t j = 0; j < rec.count; ++j) g = std::gcd(g, prefix[j + 1] - prefix[j]);
      return g;
    }
    case type_kind::subarray: {
      const std::int64_t dims = rec.count, fastest = (rec.flags & record_fortran) != 0 ? 0 : dims - 1;
      return words[dims + fastest];  // subsizes[fastest]
    }
    default:
      return 1;
  }
}

/// Lists the runs of one instance into p (run_list) when there are at most `most` of them, runs that
/// follow on in the user's buffer joined. False, p untouched, when there are more.
bool list_runs(const serialized_view& v, const type_record& root, std::int64_t most, pack_plan& p) {
  std::vector<std::int64_t> in, out;
  std::int64_t divisor = 0, end_in = 0;
  for (std::int64_t i = 0; i < root.elements;) {
    const element_place e = locate(v, 1, i);
    XF_EXPECTS(e.run_elements > 0, "the committed type's records do not locate element " + std::to_string(i));
    if (!in.empty() && e.in == end_in) {
      end_in += e.run_bytes;  // follows on: the same run
    } else {
      if (static_cast<std::int64_t>(in.size()) >= most) return false;
      in.push_back(e.in);
      out.push_back(e.out);
      divisor = gcd_with(gcd_with(divisor, e.in), e.out);
      end_in = e.in + e.run_bytes;
    }
    divisor = gcd_with(divisor, e.run_bytes);
    i += e.run_elements;
  }
  // Buckets of a power of two of packed bytes, at least the runs' average: a unit's run lies between the
  // runs of its bucket's first byte and of the next bucket's, a few runs to search rather than all.
  const auto runs = static_cast<std::int64_t>(in.size());
  std::int64_t shift = 0;
  while ((std::int64_t{1} << shift) * runs < root.size) ++shift;
  const std::int64_t buckets = (root.size + (std::int64_t{1} << shift) - 1) >> shift;
  p.method = pack_method::run_list;
  p.run_count = runs;
  p.bucket_shift = shift;
  p.bucket_count = buckets;
  p.tables = std::move(in);
  p.tables.insert(p.tables.end(), out.begin(), out.end());
  for (std::int64_t b = 0, run = 0; b < buckets; ++b) {
    while (run + 1 < runs && out[static_cast<std::size_t>(run + 1)] <= (b << shift)) ++run;
    p.tables.push_back(run);
  }
  p.tables.push_back(runs - 1);
  p.offset_divisor = divisor;
  return true;
}

}  // namespace

std::string_view name_of(pack_method m) {
  switch (m) {
    case pack_method::strided:
      return "strided";
    case pack_method::run_list:
      return "run_list";
    case pack_method::runs:
      return "runs";
    case pack_method::elements:
      return "elements";
  }
  return "?";
}

pack_plan plan_packing(const committed_type& t, const plan_options& o) {
  const serialized_view v = t.view();
  pack_plan p;
  plan_walk walk;
  std::int64_t run_elements = 0, run_bytes = 0;  // the runs method's segment
  std::int64_t strided_elements = 0, strided_bytes = 0;
  bool strided = true;
  type_record rec = t.root();
  // One pass per record on the path: a committed buffer reaches a dense record or a leaf within `depth`.
  for (std::uint32_t pass = 0;; ++pass) {
    XF_EXPECTS(pass < v.record_count, "the committed type's records do not end in a leaf");
    if ((rec.flags & record_dense) != 0) {
      // One instance of a dense record is one run from its true lower bound: the walk ends in a segment of
      // its bytes, whatever it is made of (a struct whose members follow on moves as bytes).
      walk.offset(rec.true_lb);
      run_elements = strided_elements = rec.elements;
      run_bytes = strided_bytes = rec.size;
      break;
    }
    const std::int64_t* words = v.lookaside_of(rec);
    walk.divides(rec.child_extent);
    switch (static_cast<type_kind>(rec.kind)) {
      case type_kind::contiguous:
        walk.affine(rec.count, rec.child_extent);
        break;
      case type_kind::vector:
      case type_kind::hvector:
        walk.affine(rec.count, rec.stride * rec.unit_bytes);
        walk.affine(rec.blocklength, rec.child_extent);
        break;
      case type_kind::indexed_block:
      case type_kind::hindexed_block:
        walk.table(rec.count, words, rec.unit_bytes);
        walk.affine(rec.blocklength, rec.child_extent);
        break;
      case type_kind::indexed:
      case type_kind::hindexed: {
        // Blocks of one length are a table of their offsets and a dimension of that length; empty blocks
        // hold nothing and are left out.
        const std::int64_t* prefix = words + rec.count;
        std::vector<std::int64_t> offsets;
        std::int64_t length = 0;
        for (std::int64_t j = 0; j < rec.count; ++j) {
          const std::int64_t n = prefix[j + 1] - prefix[j];
          if (n == 0) continue;
          if (length != 0 && n != length) strided = false;
          length = n;
          offsets.push_back(words[j]);
        }
        if (!strided) {
          p.not_strided_because =
              std::string(name_of(static_cast<type_kind>(rec.kind))) + " with blocks of different lengths";
          for (std::int64_t j = 0; j < rec.count; ++j) walk.divides(words[j] * rec.unit_bytes);
        } else {
          walk.table(static_cast<std::int64_t>(offsets.size()), offsets.data(), rec.unit_bytes);
          walk.affine(length, rec.child_extent);
        }
        break;
      }
      case type_kind::subarray: {
        const std::int64_t dims = rec.count;
        const std::int64_t *sizes = words, *subsizes = words + dims, *starts = words + 2 * dims;
        const bool fortran = (rec.flags & record_fortran) != 0;
        std::vector<std::int64_t> strides(static_cast<std::size_t>(dims));
        std::int64_t stride = rec.child_extent;
        for (std::int64_t i = 0; i < dims; ++i) {  // fastest first
          const std::int64_t d = fortran ? i : dims - 1 - i;
          strides[static_cast<std::size_t>(d)] = stride;
          stride *= sizes[d];  // at most the array's bytes, which the constructor checked
        }
        for (std::int64_t i = 0; i < dims; ++i) {  // slowest first: the order of the type map
          const std::int64_t d = fortran ? dims - 1 - i : i;
          walk.offset(starts[d] * strides[static_cast<std::size_t>(d)]);
          walk.affine(subsizes[d], strides[static_cast<std::size_t>(d)]);
        }
        break;
      }
      case type_kind::resized:
        break;  // its child's copy stays where it is
      case type_kind::struct_type:
        p.method = pack_method::elements;
        p.not_strided_because = "a struct whose data has gaps, so each element is found by the traversal";
        return p;
      case type_kind::primitive:
        break;  // dense: handled above
    }
    if ((rec.flags & record_leaf) != 0) {
      const std::int64_t element_bytes = size_of(static_cast<primitive>(rec.element));
      strided_elements = 1;
      strided_bytes = element_bytes;
      run_elements = leaf_block_elements(v, rec);
      run_bytes = run_elements * element_bytes;
      break;
    }
    rec = v.record(rec.child);
  }
  p.offset_divisor = walk.divisor_;
  if (strided) {
    std::int64_t base = walk.base_;
    normalize(strided_bytes, strided_elements, base, walk.dims_, walk.tables_);
    if (walk.dims_.size() + 1 > static_cast<std::size_t>(max_strided_dims)) {
      strided = false;
      p.not_strided_because = std::to_string(walk.dims_.size()) + " dimensions, more than the kernels take";
    } else {
      p.method = pack_method::strided;
      p.segment_bytes = strided_bytes;
      p.segment_elements = strided_elements;
      p.base = base;
      p.dims = std::move(walk.dims_);
      p.tables = std::move(walk.tables_);
      // The shape's own divisor: what normalizing dropped no longer counts.
      std::int64_t divisor = gcd_with(0, base);
      for (const strided_dim& d : p.dims) {
        if (!d.has_table()) {
          divisor = gcd_with(divisor, d.stride);
          continue;
        }
        for (std::int64_t j = 0; j < d.count; ++j)
          divisor = gcd_with(divisor, p.tables[static_cast<std::size_t>(d.table + j)]);
      }
      p.offset_divisor = divisor;
      return p;
    }
  }
  p.method = pack_method::runs;
  p.segment_elements = run_elements;
  p.segment_bytes = run_bytes;
  p.offset_divisor = gcd_with(p.offset_divisor, walk.base_);
  list_runs(v, t.root(), o.max_listed_runs, p);  // a run_list where it can
  return p;
}

std::string describe(const pack_plan& p) {
  std::ostringstream s;
  s << name_of(p.method);
  if (p.method == pack_method::elements) {
    s << " (" << p.not_strided_because << ")";
    return s.str();
  }
  if (p.method == pack_method::run_list) {
    s << ": " << p.run_count << " runs an instance, in buckets of " << (std::int64_t{1} << p.bucket_shift)
      << " B (" << p.not_strided_because << ")";
    return s.str();
  }
  s << ": segments of " << p.segment_elements << " elements, " << p.segment_bytes << " B";
  if (p.method == pack_method::strided) {
    s << ", base " << p.base << ", dims [";
    for (std::size_t k = 0; k < p.dims.size(); ++k) {
      s << (k ? ", " : "") << p.dims[k].count << " x ";
      if (p.dims[k].has_table())
        s << "table";
      else
        s << p.dims[k].stride << " B";
    }
    s << "]";
  } else {
    s << " (" << p.not_strided_because << ")";
  }
  return s.str();
}

strided_shape shape_for(const pack_plan& p, const type_record& root, std::int64_t count) {
  XF_EXPECTS(p.method == pack_method::strided, "the plan is " + std::string(name_of(p.method)));
  strided_shape s;
  s.segment_bytes = p.segment_bytes;
  s.base = p.base;
  s.dims = p.dims;
  s.offset_divisor = p.offset_divisor;
  if (count != 1) {
    s.dims.insert(s.dims.begin(), strided_dim{count, root.extent, -1});
    if (count > 1) s.offset_divisor = gcd_with(s.offset_divisor, root.extent);
  }
  std::int64_t elements = p.segment_elements;
  normalize(s.segment_bytes, elements, s.base, s.dims, p.tables);
  s.segments = 1;
  for (const strided_dim& d : s.dims) s.segments *= d.count;  // at most the elements, which fit
  return s;
}

std::int64_t segment_offset(const strided_shape& shape, const std::vector<std::int64_t>& tables,
                            std::int64_t s) {
  std::int64_t offset = shape.base;
  for (std::size_t k = shape.dims.size(); k-- > 0;) {
    const strided_dim& d = shape.dims[k];
    const std::int64_t digit = k == 0 ? s : s % d.count;
    s = k == 0 ? 0 : s / d.count;
    offset += d.has_table() ? tables[static_cast<std::size_t>(d.table + digit)] : digit * d.stride;
  }
  return offset;
}

copy_engine_fit copy_engine_shape_of(const strided_shape& s, std::int64_t max_pitch) {
  copy_engine_fit fit;
  for (const strided_dim& d : s.dims)
    if (d.has_table()) {
      fit.reason = "its blocks are at the offsets of a table (an indexed type), not at a pitch";
      return fit;
    }
  copy_engine_shape c;
  c.base = s.base;
  c.row_bytes = s.segment_bytes;
  c.dims = static_cast<int>(s.dims.size());
  const auto pitch_fits = [&](std::int64_t pitch) { return pitch >= s.segment_bytes && pitch <= max_pitch; };
  if (s.dims.size() == 1) {
    c.rows = s.dims[0].count;
    c.pitch = s.dims[0].stride;
    if (!pitch_fits(c.pitch)) {
      fit.reason = "its row pitch " + std::to_string(c.pitch) + " B is not in [row " +
                   std::to_string(s.segment_bytes) + " B, the device's maximum pitch " +
                   std::to_string(max_pitch) + " B]";
      return fit;
    }
  } else if (s.dims.size() == 2) {
    const strided_dim &outer = s.dims[0], &inner = s.dims[1];
    c.rows = inner.count;
    c.pitch = inner.stride;
    c.planes = outer.count;
    if (!pitch_fits(c.pitch) || outer.stride <= 0 || outer.stride % inner.stride != 0 ||
        outer.stride / inner.stride < inner.count) {
      fit.reason = "its planes (" + std::to_string(outer.count) + " x " + std::to_string(outer.stride) +
                   " B) are not a whole number of its row pitch (" + std::to_string(inner.stride) +
                   " B) of at least its rows, or the pitch is not in [row, the device's maximum]";
      return fit;
    }
    c.rows_per_plane = outer.stride / inner.stride;
  } else if (s.dims.size() > 2) {
    fit.reason =
        std::to_string(s.dims.size()) + " strided dimensions: one call copies at most planes of rows";
    return fit;
  }
  fit.shape = c;
  return fit;
}

std::int64_t unit_bytes_dividing(std::initializer_list<std::int64_t> values) {
  std::int64_t unit = 16;
  for (std::int64_t v : values)
    while (v % unit != 0) unit /= 2;
  return unit;
}

}  // namespace xf::dt
