// Building the MPI datatype of a type tree node by node, bottom up, and resizing a node where the MPI
// library's bounds differ from ours.
#include "framework/mpi/mpi_datatype.hpp"

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "framework/core/errors.hpp"
#include "framework/mpi/mpi_error.hpp"

namespace xf::mpi {

mpi_datatype::~mpi_datatype() {
  if (type_ == MPI_DATATYPE_NULL) return;
  int finalized = 0;
  if (MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized) (void)MPI_Type_free(&type_);
}

MPI_Datatype mpi_primitive(dt::primitive p) {
  switch (p) {
    case dt::primitive::u8:
      return MPI_UINT8_T;
    case dt::primitive::i8:
      return MPI_INT8_T;
    case dt::primitive::u16:
      return MPI_UINT16_T;
    case dt::primitive::i16:
      return MPI_INT16_T;
    case dt::primitive::u32:
      return MPI_UINT32_T;
    case dt::primitive::i32:
      return MPI_INT32_T;
    case dt::primitive::u64:
      return MPI_UINT64_T;
    case dt::primitive::i64:
      return MPI_INT64_T;
    case dt::primitive::f32:
      return MPI_FLOAT;
    case dt::primitive::f64:
      return MPI_DOUBLE;
    case dt::primitive::byte:
      return MPI_BYTE;
    case dt::primitive::character:
      return MPI_CHAR;
  }
  return MPI_DATATYPE_NULL;
}

namespace {

using i64 = std::int64_t;

/// MPI-3's constructors take int counts and block lengths (Open MPI 4 has no MPI_Count forms).
int as_int(i64 v, const dt::datatype& t, const char* argument) {
  XF_EXPECTS(v >= INT_MIN && v <= INT_MAX, std::string(name_of(t.kind())) + ": " + argument + " " +
                                               std::to_string(v) + " does not fit MPI's int");
  return static_cast<int>(v);
}
std::vector<int> as_ints(std::span<const i64> v, const dt::datatype& t, const char* argument) {
  std::vector<int> out;
  out.reserve(v.size());
  for (i64 x : v) out.push_back(as_int(x, t, argument));
  return out;
}
std::vector<MPI_Aint> as_aints(std::span<const i64> v) {
  return {v.begin(), v.end()};  // MPI_Aint is 64 bits where this builds (checked below)
}
static_assert(sizeof(MPI_Aint) == sizeof(i64), "byte displacements are 64-bit");

const call_site no_site{};

/// The node's MPI type, uncommitted, with our lower bound and extent.
mpi_datatype build(const dt::datatype& t) {
  MPI_Datatype out = MPI_DATATYPE_NULL;
  if (t.kind() == dt::type_kind::primitive) {
    XF_MPI_TRY(MPI_Type_dup(mpi_primitive(t.element()), &out), no_site);
    return mpi_datatype(out);
  }
  std::vector<mpi_datatype> children;
  std::vector<MPI_Datatype> handles;
  for (const dt::datatype& c : t.children()) {
    children.push_back(build(c));
    handles.push_back(children.back().get());
  }
  const MPI_Datatype child = handles.front();
  switch (t.kind()) {
    case dt::type_kind::contiguous:
      XF_MPI_TRY(MPI_Type_contiguous(as_int(t.count(), t, "count"), child, &out), no_site);
      break;
    case dt::type_kind::vector:
      XF_MPI_TRY(MPI_Type_vector(as_int(t.count(), t, "count"), as_int(t.blocklength(), t, "blocklength"),
                                 as_int(t.stride(), t, "stride"), child, &out),
                 no_site);
      break;
    case dt::type_kind::hvector:
      XF_MPI_TRY(MPI_Type_create_hvector(as_int(t.count(), t, "count"),
                                         as_int(t.blocklength(), t, "blocklength"), t.stride(), child, &out),
                 no_site);
      break;
    case dt::type_kind::indexed: {
      const std::vector<int> lengths = as_ints(t.blocklengths(), t, "blocklengths");
      const std::vector<int> displacements = as_ints(t.displacements(), t, "displacements");
      XF_MPI_TRY(MPI_Type_indexed(static_cast<int>(lengths.size()), lengths.data(), displacements.data(),
                                  child, &out),
                 no_site);
      break;
    }
    case dt::type_kind::hindexed: {
      const std::vector<int> lengths = as_ints(t.blocklengths(), t, "blocklengths");
      const std::vector<MPI_Aint> displacements = as_aints(t.displacements());
      XF_MPI_TRY(MPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(),
                                          displacements.data(), child, &out),
                 no_site);
      break;
    }
    case dt::type_kind::indexed_block: {
      const std::vector<int> displacements = as_ints(t.displacements(), t, "displacements");
      XF_MPI_TRY(MPI_Type_create_indexed_block(static_cast<int>(displacements.size()),
                                               as_int(t.blocklength(), t, "blocklength"),
                                               displacements.data(), child, &out),
                 no_site);
      break;
    }
    case dt::type_kind::hindexed_block: {
      const std::vector<MPI_Aint> displacements = as_aints(t.displacements());
      XF_MPI_TRY(MPI_Type_create_hindexed_block(static_cast<int>(displacements.size()),
                                                as_int(t.blocklength(), t, "blocklength"),
                                                displacements.data(), child, &out),
                 no_site);
      break;
    }
    case dt::type_kind::struct_type: {
      const std::vector<int> lengths = as_ints(t.blocklengths(), t, "blocklengths");
      const std::vector<MPI_Aint> displacements = as_aints(t.displacements());
      XF_MPI_TRY(MPI_Type_create_struct(static_cast<int>(lengths.size()), lengths.data(),
                                        displacements.data(), handles.data(), &out),
                 no_site);
      break;
    }
    case dt::type_kind::subarray: {
      const std::vector<int> sizes = as_ints(t.sizes(), t, "sizes");
      const std::vector<int> subsizes = as_ints(t.subsizes(), t, "subsizes");
      const std::vector<int> starts = as_ints(t.starts(), t, "starts");
      const int order = t.order() == dt::array_order::c ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
      XF_MPI_TRY(MPI_Type_create_subarray(static_cast<int>(sizes.size()), sizes.data(), subsizes.data(),
                                          starts.data(), order, child, &out),
                 no_site);
      break;
    }
    case dt::type_kind::resized:
      XF_MPI_TRY(MPI_Type_create_resized(child, t.lb(), t.extent(), &out), no_site);
      break;
    case dt::type_kind::primitive:
      break;
  }
  mpi_datatype made(out);
  // The children are freed when `children` goes: MPI keeps what the new type still refers to.
  MPI_Aint lb = 0, extent = 0;
  XF_MPI_TRY(MPI_Type_get_extent(made.get(), &lb, &extent), no_site);
  if (lb == t.lb() && extent == t.extent()) return made;
  MPI_Datatype fixed = MPI_DATATYPE_NULL;
  XF_MPI_TRY(MPI_Type_create_resized(made.get(), t.lb(), t.extent(), &fixed), no_site);
  return mpi_datatype(fixed);
}

}  // namespace

mpi_datatype to_mpi_datatype(const dt::datatype& t) {
  mpi_datatype made = build(t);
  MPI_Datatype handle = made.get();
  XF_MPI_TRY(MPI_Type_commit(&handle), no_site);
  return made;
}

}  // namespace xf::mpi
