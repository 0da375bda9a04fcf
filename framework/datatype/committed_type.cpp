// Commit (tree to records and lookaside, in pre-order), load and deserialize (records back to a tree, every
// offset and index checked before it is followed), and dump.
#include "framework/datatype/committed_type.hpp"

#include <algorithm>
#include <cstring>

namespace xf::dt {

namespace {

using i64 = std::int64_t;

constexpr std::uint8_t flag_if(bool condition, std::uint8_t flag) {
  return condition ? flag : 0;
}

/// Appends a tree's records and lookaside, parents before children.
class writer {
 public:
  /// The record index of `t`, written with its subtree after the records already there.
  std::uint32_t add(const datatype& t, std::uint32_t level) {
    const auto index = static_cast<std::uint32_t>(records_.size());
    depth_ = std::max(depth_, level + 1);
    type_record r{};
    r.kind = static_cast<std::uint8_t>(t.kind());
    r.flags = flag_if(t.is_dense(), record_dense) | flag_if(t.is_tight(), record_tight) |
              flag_if(t.has_markers(), record_markers) |
              flag_if(t.kind() == type_kind::subarray && t.order() == array_order::fortran, record_fortran);
    r.count = t.count();
    r.blocklength = t.blocklength();
    r.stride = t.stride();
    r.elements = t.elements();
    r.size = t.size();
    r.lb = t.lb();
    r.extent = t.extent();
    r.true_lb = t.true_lb();
    r.true_extent = t.true_extent();
    records_.push_back(r);
    if (t.kind() == type_kind::primitive) {
      records_[index].element = static_cast<std::uint8_t>(t.element());
    } else if (t.kind() == type_kind::struct_type) {
      add_struct(t, index, level);
    } else {
      add_single_child(t, index, level);
    }
    return index;
  }

  std::vector<i64> finish() const {
    serialized_header h{};
    h.magic = serialized_magic;
    h.version = serialized_version;
    h.record_bytes = sizeof(type_record);
    h.record_count = static_cast<std::uint32_t>(records_.size());
    h.depth = depth_;
    h.records_offset = sizeof(serialized_header);
    h.lookaside_offset = h.records_offset + records_.size() * sizeof(type_record);
    h.lookaside_bytes = lookaside_.size() * sizeof(i64);
    h.total_bytes = h.lookaside_offset + h.lookaside_bytes;
    static_assert(sizeof(serialized_header) % 8 == 0 && sizeof(type_record) % 8 == 0);
    std::vector<i64> words(h.total_bytes / sizeof(i64));
    auto* bytes = reinterpret_cast<std::byte*>(words.data());
    std::memcpy(bytes, &h, sizeof h);
    std::memcpy(bytes + h.records_offset, records_.data(), records_.size() * sizeof(type_record));
    if (!lookaside_.empty()) std::memcpy(bytes + h.lookaside_offset, lookaside_.data(), h.lookaside_bytes);
    return words;
  }

 private:
  /// Starts a record's lookaside: its offset in bytes.
  std::uint64_t lookaside_here() const { return lookaside_.size() * sizeof(i64); }
  void append(std::span<const i64> values) {
    lookaside_.insert(lookaside_.end(), values.begin(), values.end());
  }

  void add_single_child(const datatype& t, std::uint32_t index, std::uint32_t level) {
    const datatype& c = t.child();
    type_record& r = records_[index];
    r.child_extent = c.extent();
    r.child_elements = c.elements();
    r.child_size = c.size();
    r.flags |= flag_if(c.is_tight(), record_child_tight);
    r.unit_bytes = counts_bytes(t.kind()) ? 1 : c.extent();
    r.lookaside = lookaside_here();
    switch (t.kind()) {
      case type_kind::indexed:
      case type_kind::hindexed: {
        append(t.displacements());
        i64 copies = 0;
        lookaside_.push_back(copies);
        for (i64 b : t.blocklengths()) lookaside_.push_back(copies += b);  // bounded: the type's copies fit
        break;
      }
      case type_kind::indexed_block:
      case type_kind::hindexed_block:
        append(t.displacements());
        break;
      case type_kind::subarray:
        append(t.sizes());
        append(t.subsizes());
        append(t.starts());
        break;
      default:
        r.lookaside = 0;
        break;
    }
    if (c.kind() == type_kind::primitive) {
      r.flags |= record_leaf;
      r.element = static_cast<std::uint8_t>(c.element());
    } else {
      r.child = index + 1;
      add(c, level + 1);  // pre-order: the child's record is the next one
    }
  }

  void add_struct(const datatype& t, std::uint32_t index, std::uint32_t level) {
    const auto n = static_cast<std::size_t>(t.count());
    const std::uint64_t offset = lookaside_here();
    const std::size_t first = lookaside_.size();
    records_[index].lookaside = offset;
    lookaside_.resize(first + static_cast<std::size_t>(lookaside_words(type_kind::struct_type, t.count())));
    i64 elements = 0, bytes = 0;
    bool every_member_primitive = true;
    for (std::size_t j = 0; j < n; ++j) {
      const datatype& m = t.children()[j];
      const i64 blocklength = t.blocklengths()[j];
      lookaside_[first + j] = elements;
      lookaside_[first + n + 1 + j] = bytes;
      elements += blocklength * m.elements();  // bounded: the struct's elements and size fit
      bytes += blocklength * m.size();
      struct_member entry{t.displacements()[j], blocklength, m.extent(), m.elements(), m.size(), 0,
                          m.is_tight() ? 1 : 0};
      if (m.kind() == type_kind::primitive) {
        entry.ref = -1 - static_cast<i64>(m.element());
      } else {
        every_member_primitive = false;
        entry.ref = add(m, level + 1);  // the lookaside grows meanwhile: write by position afterwards
      }
      std::memcpy(lookaside_.data() + first + 2 * (n + 1) + struct_member_words * j, &entry, sizeof entry);
    }
    lookaside_[first + n] = elements;
    lookaside_[first + 2 * n + 1] = bytes;
    if (every_member_primitive) records_[index].flags |= record_leaf;
  }

  std::vector<type_record> records_;
  std::vector<i64> lookaside_;
  std::uint32_t depth_ = 0;
};

/// Reads a serialized buffer back into a tree, checking each offset and index before following it; the
/// constructors check the parameters themselves.
class reader {
 public:
  explicit reader(std::span<const std::byte> bytes) : bytes_(bytes) {
    if (bytes.size() < sizeof(serialized_header))
      fail("bytes", "hold " + std::to_string(bytes.size()) + " bytes, fewer than a header");
    std::memcpy(&h_, bytes.data(), sizeof h_);
    if (h_.magic != serialized_magic) fail("header", "does not start a serialized datatype (magic)");
    if (h_.version != serialized_version || h_.record_bytes != sizeof(type_record))
      fail("header", "is of layout version " + std::to_string(h_.version) + " with " +
                         std::to_string(h_.record_bytes) + "-byte records; this reader knows version " +
                         std::to_string(serialized_version) + " with " + std::to_string(sizeof(type_record)));
    if (h_.total_bytes != bytes.size() || h_.record_count == 0 || h_.records_offset % 8 != 0 ||
        h_.lookaside_offset % 8 != 0 || h_.lookaside_bytes % 8 != 0 || h_.records_offset < sizeof h_ ||
        h_.records_offset > bytes.size() ||
        (bytes.size() - h_.records_offset) / sizeof(type_record) < h_.record_count ||
        h_.lookaside_offset < h_.records_offset + std::uint64_t{h_.record_count} * sizeof(type_record) ||
        h_.lookaside_offset > bytes.size() || bytes.size() - h_.lookaside_offset < h_.lookaside_bytes)
      fail("header",
           "has records or lookaside outside the buffer's " + std::to_string(bytes.size()) + " bytes");
  }

  datatype type(std::uint32_t index, int level) const {
    if (level >= max_type_depth) fail("records", "nest deeper than " + std::to_string(max_type_depth));
    const type_record r = record(index);
    if (r.kind >= type_kind_count) fail(at(index) + "kind", std::to_string(r.kind) + " is no type kind");
    const auto kind = static_cast<type_kind>(r.kind);
    if (kind == type_kind::primitive) return element(index, r.element);
    if (kind == type_kind::struct_type) return struct_of(index, r, level);
    const datatype child =
        (r.flags & record_leaf) != 0 ? element(index, r.element) : child_of(index, r, level);
    const std::vector<i64> words = lookaside(index, r);
    const auto n = static_cast<std::size_t>(r.count);
    const auto part = [&](std::size_t from, std::size_t length) {
      return std::vector<i64>(words.begin() + static_cast<std::ptrdiff_t>(from),
                              words.begin() + static_cast<std::ptrdiff_t>(from + length));
    };
    switch (kind) {
      case type_kind::contiguous:
        return contiguous(r.count, child);
      case type_kind::vector:
        return vector(r.count, r.blocklength, r.stride, child);
      case type_kind::hvector:
        return hvector(r.count, r.blocklength, r.stride, child);
      case type_kind::indexed:
      case type_kind::hindexed: {
        std::vector<i64> blocklengths(n);
        for (std::size_t j = 0; j < n; ++j)
          if (__builtin_sub_overflow(words[n + j + 1], words[n + j], &blocklengths[j]))
            fail(at(index) + "block_prefix", "is not a prefix sum");
        return kind == type_kind::indexed ? indexed(blocklengths, part(0, n), child)
                                          : hindexed(blocklengths, part(0, n), child);
      }
      case type_kind::indexed_block:
        return indexed_block(r.blocklength, part(0, n), child);
      case type_kind::hindexed_block:
        return hindexed_block(r.blocklength, part(0, n), child);
      case type_kind::subarray:
        return subarray(part(0, n), part(n, n), part(2 * n, n),
                        (r.flags & record_fortran) != 0 ? array_order::fortran : array_order::c, child);
      case type_kind::resized:
        return resized(child, r.lb, r.extent);
      default:
        break;
    }
    fail(at(index) + "kind", "is not read here");
  }

 private:
  [[noreturn]] static void fail(const std::string& argument, const std::string& problem) {
    throw invalid_datatype("load", argument, problem);
  }
  static std::string at(std::uint32_t index) { return "record #" + std::to_string(index) + " "; }

  type_record record(std::uint32_t index) const {
    if (index >= h_.record_count)
      fail("records", "refer to record #" + std::to_string(index) + " of " + std::to_string(h_.record_count));
    type_record r;
    std::memcpy(&r, bytes_.data() + h_.records_offset + std::uint64_t{index} * sizeof(type_record), sizeof r);
    return r;
  }

  datatype element(std::uint32_t index, i64 code) const {
    if (code < 0 || code >= primitive_count)
      fail(at(index) + "element", std::to_string(code) + " is no primitive");
    return datatype(static_cast<primitive>(code));
  }

  /// A child record must come after its parent: following children always ends.
  datatype child_of(std::uint32_t index, const type_record& r, int level) const {
    return member_type(index, r.child, level);
  }
  datatype member_type(std::uint32_t index, i64 child, int level) const {
    if (child <= index || child >= h_.record_count)
      fail(at(index) + "child", "#" + std::to_string(child) + " is not a record after it");
    return type(static_cast<std::uint32_t>(child), level + 1);
  }

  std::vector<i64> lookaside(std::uint32_t index, const type_record& r) const {
    if (lookaside_words(static_cast<type_kind>(r.kind), 1) == 0) return {};
    const std::uint64_t available = h_.lookaside_bytes / sizeof(i64);
    // Counts beyond the area's words cannot be right, and keep the word count below from overflowing.
    if (r.count < 0 || static_cast<std::uint64_t>(r.count) > available)
      fail(at(index) + "count", std::to_string(r.count) + " does not fit the lookaside");
    const auto words = static_cast<std::uint64_t>(lookaside_words(static_cast<type_kind>(r.kind), r.count));
    if (r.lookaside % 8 != 0 || r.lookaside > h_.lookaside_bytes ||
        (h_.lookaside_bytes - r.lookaside) / 8 < words)
      fail(at(index) + "lookaside", "offset " + std::to_string(r.lookaside) + " is outside the lookaside");
    std::vector<i64> values(words);
    if (words > 0)
      std::memcpy(values.data(), bytes_.data() + h_.lookaside_offset + r.lookaside, words * sizeof(i64));
    return values;
  }

  datatype struct_of(std::uint32_t index, const type_record& r, int level) const {
    const std::vector<i64> words = lookaside(index, r);
    const auto n = static_cast<std::size_t>(r.count);
    std::vector<i64> blocklengths(n), displacements(n);
    std::vector<datatype> types;
    types.reserve(n);
    for (std::size_t j = 0; j < n; ++j) {
      struct_member m;
      std::memcpy(&m, words.data() + 2 * (n + 1) + struct_member_words * j, sizeof m);
      blocklengths[j] = m.blocklength;
      displacements[j] = m.displacement;
      types.push_back(m.ref >= 0 ? member_type(index, m.ref, level) : element(index, -1 - m.ref));
    }
    return struct_type(blocklengths, displacements, types);
  }

  std::span<const std::byte> bytes_;
  serialized_header h_{};
};

}  // namespace

serialized_header committed_type::header() const {
  serialized_header h;
  std::memcpy(&h, words_.data(), sizeof h);
  return h;
}

committed_type commit(const datatype& t) {
  writer w;
  w.add(t, 0);
  committed_type c;
  c.words_ = w.finish();
  return c;
}

committed_type committed_type::load(std::span<const std::byte> bytes) {
  committed_type again = commit(reader(bytes).type(0, 0));
  // Every derived field, prefix sum and flag must be what commit() writes: the traversal trusts them.
  const std::span<const std::byte> expected = again.bytes();
  const auto [differ, unused] = std::mismatch(bytes.begin(), bytes.end(), expected.begin(), expected.end());
  if (differ != bytes.end() || bytes.size() != expected.size())
    throw invalid_datatype("load", "bytes",
                           "differ from the commit of the type they describe, first at byte " +
                               std::to_string(differ - bytes.begin()));
  return again;
}

datatype deserialize(const committed_type& c) {
  return reader(c.bytes()).type(0, 0);
}

namespace {

void append_words(std::string& out, const char* name, const i64* words, i64 n) {
  out += ' ';
  out += name;
  out += "=[";
  constexpr i64 shown = 16;
  for (i64 i = 0; i < n && i < shown; ++i) out += (i > 0 ? ", " : "") + std::to_string(words[i]);
  if (n > shown) out += ", ... (" + std::to_string(n) + " in all)";
  out += ']';
}

}  // namespace

std::string dump(const committed_type& c) {
  const serialized_header h = c.header();
  const serialized_view v = c.view();
  std::string out = "committed datatype: " + std::to_string(h.record_count) + " records, depth " +
                    std::to_string(h.depth) + ", lookaside " + std::to_string(h.lookaside_bytes) + " B, " +
                    std::to_string(h.total_bytes) + " B in all\n";
  const auto field = [&](const char* name, i64 value) {
    out += std::string(" ") + name + "=" + std::to_string(value);
  };
  for (std::uint32_t i = 0; i < h.record_count; ++i) {
    const type_record r = v.record(i);
    const auto kind = static_cast<type_kind>(r.kind);
    out += "#" + std::to_string(i) + " " + std::string(name_of(kind));
    if (kind != type_kind::primitive && kind != type_kind::resized) field("count", r.count);
    if (r.blocklength != 0) field("blocklength", r.blocklength);
    if (kind == type_kind::vector || kind == type_kind::hvector) field("stride", r.stride);
    field("elements", r.elements);
    field("size", r.size);
    field("lb", r.lb);
    field("extent", r.extent);
    field("true_lb", r.true_lb);
    field("true_extent", r.true_extent);
    if (kind == type_kind::primitive || (r.flags & record_leaf) != 0)
      if (kind != type_kind::struct_type)
        out += " element=" + std::string(name_of(static_cast<primitive>(r.element)));
    if (r.child != 0) out += " child=#" + std::to_string(r.child);
    for (auto [flag, name] : {std::pair{record_leaf, "leaf"}, std::pair{record_dense, "dense"},
                              std::pair{record_tight, "tight"}, std::pair{record_child_tight, "child_tight"},
                              std::pair{record_markers, "markers"}, std::pair{record_fortran, "fortran"}})
      if ((r.flags & flag) != 0) out += std::string(" ") + name;
    const i64* words = v.lookaside_of(r);
    const i64 n = r.count;
    switch (kind) {
      case type_kind::indexed:
      case type_kind::hindexed:
        append_words(out, "displacements", words, n);
        append_words(out, "block_prefix", words + n, n + 1);
        break;
      case type_kind::indexed_block:
      case type_kind::hindexed_block:
        append_words(out, "displacements", words, n);
        break;
      case type_kind::subarray:
        append_words(out, "sizes", words, n);
        append_words(out, "subsizes", words + n, n);
        append_words(out, "starts", words + 2 * n, n);
        break;
      case type_kind::struct_type:
        append_words(out, "element_prefix", words, n + 1);
        append_words(out, "byte_prefix", words + n + 1, n + 1);
        for (i64 j = 0; j < n; ++j) {
          const struct_member m = serialized_view::member(words, n, j);
          out += " {displacement=" + std::to_string(m.displacement) +
                 " blocklength=" + std::to_string(m.blocklength) +
                 (m.ref >= 0 ? " #" + std::to_string(m.ref)
                             : " " + std::string(name_of(static_cast<primitive>(-1 - m.ref)))) +
                 "}";
        }
        break;
      default:
        break;
    }
    out += '\n';
  }
  return out;
}

}  // namespace xf::dt
