// Commit: a datatype tree turned into its serialized form (serialized_type.hpp), the one buffer that the
// traversal, the packers and, later, the GPU kernels read. Round trip: deserialize() gives the tree back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "framework/datatype/datatype.hpp"
#include "framework/datatype/serialized_type.hpp"

namespace xf::dt {

/// Owns a serialized datatype: a value (a copy copies the bytes), immutable once built, so any number of
/// threads may read it.
class committed_type {
 public:
  /// Reads bytes that commit() wrote (copied anywhere, at any address) and checks them whole: they must be
  /// exactly what committing the type they describe gives. Throws invalid_datatype (constructor "load")
  /// naming what is wrong, or the constructor's error for parameters no datatype has.
  static committed_type load(std::span<const std::byte> bytes);

  /// The buffer: header, records, lookaside. Position-independent: copy it anywhere and view_of() it there.
  std::span<const std::byte> bytes() const {
    return {reinterpret_cast<const std::byte*>(words_.data()), words_.size() * sizeof(std::int64_t)};
  }
  serialized_view view() const { return view_of(bytes().data()); }
  serialized_header header() const;
  /// The root's record: elements, size, extent, bounds of one instance.
  type_record root() const { return view().record(0); }

 private:
  friend committed_type commit(const datatype& t);
  std::vector<std::int64_t> words_;  // int64 words: the records' and lookaside's 8-byte alignment
};

committed_type commit(const datatype& t);

/// The tree the buffer was committed from (operator== to it). Throws invalid_datatype for a buffer that
/// commit() did not write.
datatype deserialize(const committed_type& c);

/// The records and their lookaside as text, a record a line ("#1 vector count=4 ... child=#2"): for error
/// messages and tests' failure output.
std::string dump(const committed_type& c);

}  // namespace xf::dt
