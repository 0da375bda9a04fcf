// An xeflow datatype as an MPI derived datatype, built with the MPI constructor of each node: what the
// ping-pong's baselines hand to MPI, and what the tests use as an independent oracle (MPI_Pack of the
// library's own engine against ours).
#pragma once

#include <mpi.h>

#include <utility>

#include "framework/datatype/datatype.hpp"
#include "framework/datatype/primitive.hpp"

namespace xf::mpi {

/// Owns an MPI datatype (frees it with MPI_Type_free). Move-only; the destructor never throws and frees
/// nothing after MPI_Finalize (when every handle is gone anyway). Thread-safety as MPI's for the handle.
class mpi_datatype {
 public:
  mpi_datatype() = default;
  /// Takes ownership of a derived (non-predefined) datatype.
  explicit mpi_datatype(MPI_Datatype t) noexcept : type_(t) {}
  ~mpi_datatype();
  mpi_datatype(mpi_datatype&& o) noexcept : type_(std::exchange(o.type_, MPI_DATATYPE_NULL)) {}
  mpi_datatype& operator=(mpi_datatype&& o) noexcept {
    std::swap(type_, o.type_);
    return *this;
  }
  mpi_datatype(const mpi_datatype&) = delete;
  mpi_datatype& operator=(const mpi_datatype&) = delete;

  MPI_Datatype get() const noexcept { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

/// The predefined MPI datatype of a primitive: MPI_UINT8_T ... MPI_DOUBLE, MPI_BYTE, MPI_CHAR.
MPI_Datatype mpi_primitive(dt::primitive p);

/// `t` as a committed MPI datatype with the same type map, lower bound and extent at every node: each node
/// built by its MPI constructor (MPI_Type_contiguous, _vector, _create_hvector, _indexed, _create_hindexed,
/// _create_indexed_block, _create_hindexed_block, _create_struct, _create_subarray in C or Fortran order,
/// _create_resized; a primitive root is a duplicate of the predefined type). Where the MPI library bounds a
/// node differently from MPI-3.1's text as framework/datatype reads it (the alignment ε of types without
/// markers, which implementations apply to structs only or not at all), the node is resized to our bounds,
/// so that the enclosing strides, and so the type map, agree. Needs MPI initialised. Throws
/// precondition_error for a count, block length or subarray size beyond MPI's `int`, and mpi_error naming
/// the constructor that failed.
mpi_datatype to_mpi_datatype(const dt::datatype& t);

}  // namespace xf::mpi
