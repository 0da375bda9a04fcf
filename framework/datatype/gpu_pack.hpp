// Packing and unpacking on the GPU: `count` instances of a type uploaded once (device_type) between MPI's
// buf in device memory (or pinned host memory, or managed) and a contiguous packed buffer (device memory,
// or pinned host memory: then the kernel writes across PCIe itself, zero copy). Either a packing kernel or
// one copy-engine call (cudaMemcpy/2D/3D), by the rule in DESIGN.md, or as the caller forces it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "framework/datatype/device_type.hpp"
#include "framework/datatype/pack_costs.hpp"
#include "framework/datatype/pack_kernels.hpp"

namespace xf::dt {

/// What moves the data.
enum class pack_path : std::uint8_t {
  automatic,     ///< the rule: copy_engine for one contiguous block, or for a plain strided block where the
                 ///< costs (pcie or device, pack_costs.hpp) say the copy is faster; kernel otherwise
  kernel,        ///< the packing kernel of the type's plan (strided, runs or elements)
  point_kernel,  ///< the element kernel whatever the plan (the paper's point-based kernel, for measurement)
  copy_engine,   ///< one cudaMemcpyAsync, cudaMemcpy2DAsync or cudaMemcpy3DAsync; only for a shape it fits
};
std::string_view name_of(pack_path p);

struct gpu_pack_options {
  pack_path path = pack_path::automatic;
  /// The rule's weighing of copy and kernel (DESIGN.md; measured by xeflow-datatype-bench's fig5 and
  /// table2): across PCIe, and device to device.
  pack_costs pcie = pcie_pack_costs;
  pack_costs device = device_pack_costs;
};

/// Where a pointer's memory is, as the CUDA runtime says.
enum class memory_kind : std::uint8_t { device, pinned_host, managed, pageable_host };
std::string_view name_of(memory_kind k);

/// What a call did (or, from choose_pack_path, would do).
struct pack_choice {
  pack_path path = pack_path::kernel;         ///< kernel, point_kernel or copy_engine; automatic never
  pack_method method = pack_method::strided;  ///< the kernel's (kernel paths)
  std::int64_t unit_bytes = 0;                ///< strided, runs: bytes per load and store
  int copy_dims = -1;                         ///< copy_engine: 0 (cudaMemcpy), 1 (2D), 2 (3D)
  std::int64_t bytes = 0;                     ///< packed bytes
  memory_kind user = memory_kind::device, packed = memory_kind::device;
  /// "kernel strided, 16 B units" or "copy_engine 2D": for logs and the benchmark's rows.
  std::string describe() const;
};

/// Packs `count` instances of `t` at `user` (MPI's buf: displacements count from it, and may be negative)
/// into `packed` (packed_bytes(t.host(), count) bytes, not overlapping the data), in type-map order,
/// asynchronously on `stream`: the packed bytes are there once the stream has reached this point. `user`
/// must be memory the device can reach (device, pinned or managed; pageable only where the device has
/// pageable memory access) unless the copy engine moves it; `packed` likewise, and in pinned host memory
/// the kernel writes it across PCIe directly (zero copy). Throws precondition_error for a pointer a
/// path cannot use or a forced path that does not fit the type, and cuda_error naming the failed call.
/// The current device must be the one `t` was uploaded to. Thread-safe for distinct buffers.
pack_choice gpu_pack(const device_type& t, std::int64_t count, const void* user, void* packed,
                     cudaStream_t stream, const gpu_pack_options& options = {});

/// The reverse of gpu_pack: `packed` into the places `count` instances of `t` take at `user`. Where the
/// type names a byte twice the result there is unspecified (threads race; first_overlap() finds such
/// types), which MPI calls an erroneous receive.
pack_choice gpu_unpack(const device_type& t, std::int64_t count, const void* packed, void* user,
                       cudaStream_t stream, const gpu_pack_options& options = {});

/// What gpu_pack (or gpu_unpack: the same rule) would do with these arguments, without doing it.
pack_choice choose_pack_path(const device_type& t, std::int64_t count, const void* user, const void* packed,
                             const gpu_pack_options& options = {});

namespace detail {

/// A pointer's memory, and the address a kernel reaches it at (null where no kernel can).
struct pointer_place {
  memory_kind kind = memory_kind::device;
  std::byte* device_address = nullptr;
};
/// Asks the CUDA runtime where `p` is. Throws cuda_error.
pointer_place place_of(const void* p, const device_limits& limits);
/// MPI's buf of `count` instances of `t` at `user`, placed by its lowest data byte (the one surely inside
/// the user's allocation); device_address is buf as the device addresses it.
pointer_place place_of_user(const device_type& t, std::int64_t count, const void* user);
/// Throws precondition_error unless the current device is the one `t` was uploaded to.
void expect_device_of(const device_type& t);

/// A kernel path's work for one call as a range of items (copy units, or elements) that can be launched
/// in pieces: the chunked pipeline packs items [first, last) into a staging buffer at a time.
class kernel_work {
 public:
  /// `user_device` is MPI's buf as the device addresses it and `packed_address` the packed buffer (null:
  /// a staging buffer, aligned to 16); both only for the copy unit's alignment.
  kernel_work(const device_type& t, std::int64_t count, pack_method method, const std::byte* user_device,
              const void* packed_address);
  std::int64_t items() const { return launch_.last; }
  pack_method method() const { return launch_.method; }
  std::int64_t unit_bytes() const { return launch_.method == pack_method::elements ? 0 : launch_.unit_bytes; }
  /// Packed bytes before item `item` (0 <= item <= items()).
  std::int64_t packed_offset(std::int64_t item) const;
  /// A number of items whose packed bytes fit in `bytes` from any multiple of it on (at least 1 when
  /// `bytes` >= 16 and >= max_element_bytes).
  std::int64_t items_within(std::int64_t bytes) const;
  /// Packs items [first, last) from `user` (device address) to `packed`, item first's packed bytes.
  void pack_range(std::int64_t first, std::int64_t last, const std::byte* user, std::byte* packed,
                  cudaStream_t stream) const;
  /// Unpacks items [first, last) from `packed` (item first's packed bytes) to `user` (device address).
  void unpack_range(std::int64_t first, std::int64_t last, const std::byte* packed, std::byte* user,
                    cudaStream_t stream) const;

 private:
  void launch(kernel_launch a, std::int64_t first, std::int64_t last, cudaStream_t stream) const;

  const device_type* type_;
  std::int64_t bytes_ = 0;  // packed bytes of the whole call
  kernel_launch launch_;    // what every range shares; last = the call's items
};

}  // namespace detail

}  // namespace xf::dt
