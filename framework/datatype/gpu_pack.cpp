// gpu_pack and gpu_unpack: where the two pointers are, which path the rule takes, and the launch of that
// path (a copy-engine call here, a kernel through pack_kernels.cu).
#include "framework/datatype/gpu_pack.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>

#include "framework/core/cuda_check.hpp"
#include "framework/core/errors.hpp"
#include "framework/datatype/pack.hpp"
#include "framework/datatype/traversal.hpp"

namespace xf::dt {

std::string_view name_of(pack_path p) {
  switch (p) {
    case pack_path::automatic:
      return "automatic";
    case pack_path::kernel:
      return "kernel";
    case pack_path::point_kernel:
      return "point_kernel";
    case pack_path::copy_engine:
      return "copy_engine";
  }
  return "?";
}

std::string_view name_of(memory_kind k) {
  switch (k) {
    case memory_kind::device:
      return "device";
    case memory_kind::pinned_host:
      return "pinned host";
    case memory_kind::managed:
      return "managed";
    case memory_kind::pageable_host:
      return "pageable host";
  }
  return "?";
}

std::string pack_choice::describe() const {
  std::string s(name_of(path));
  if (path == pack_path::copy_engine) return s + (copy_dims == 0 ? " 1D" : copy_dims == 1 ? " 2D" : " 3D");
  s += " ";
  s += name_of(method);
  if (method != pack_method::elements) s += ", " + std::to_string(unit_bytes) + " B units";
  return s;
}

namespace {

bool crosses_pcie(memory_kind k) {
  return k == memory_kind::pinned_host || k == memory_kind::pageable_host;
}

/// One call, worked out: the choice, MPI's buf as the device addresses it, the packed buffer's device
/// address, and the copy-engine call where the path is the copy engine.
struct call_plan {
  pack_choice choice;
  std::byte* user_device = nullptr;
  std::byte* packed_device = nullptr;
  std::optional<copy_engine_shape> copy;
};

call_plan plan_call(const device_type& t, std::int64_t count, std::int64_t bytes,
                    const detail::pointer_place& user_place, const detail::pointer_place& packed_place,
                    const gpu_pack_options& options) {
  call_plan c;
  c.choice.bytes = bytes;
  c.choice.user = user_place.kind;
  c.choice.packed = packed_place.kind;
  c.user_device = user_place.device_address;
  c.packed_device = packed_place.device_address;
  const type_record root = t.host().root();

  const pack_plan& plan = t.plan();
  std::optional<strided_shape> shape;
  copy_engine_fit fit;
  if (plan.method == pack_method::strided) {
    shape = shape_for(plan, root, count);
    fit = copy_engine_shape_of(*shape, t.limits().max_pitch);
  } else {
    fit.reason = "it is not a strided shape (" + plan.not_strided_because + ")";
  }
  const bool kernel_reaches = c.user_device != nullptr && c.packed_device != nullptr;
  pack_path path = options.path;
  if (path == pack_path::automatic) {
    const bool one_block = fit.shape && fit.shape->dims == 0;
    const bool across_pcie = crosses_pcie(c.choice.user) || crosses_pcie(c.choice.packed);
    const bool device_to_device =
        c.choice.user == memory_kind::device && c.choice.packed == memory_kind::device;
    const pack_costs* costs = across_pcie ? &options.pcie : device_to_device ? &options.device : nullptr;
    const bool copy_faster =
        fit.shape && costs && costs->copy_engine_faster(fit.shape->rows * fit.shape->planes, c.choice.bytes);
    if (one_block || copy_faster || (!kernel_reaches && fit.shape))
      path = pack_path::copy_engine;
    else
      path = pack_path::kernel;
  }
  c.choice.path = path;
  if (path == pack_path::copy_engine) {
    XF_EXPECTS(fit.shape.has_value(), "the copy engine cannot move " + describe(deserialize(t.host())) +
                                          " in one call: " + fit.reason);
    c.copy = fit.shape;
    c.choice.copy_dims = fit.shape->dims;
    return c;
  }
  XF_EXPECTS(c.user_device != nullptr, "a packing kernel cannot reach the user buffer: it is " +
                                           std::string(name_of(c.choice.user)) +
                                           " memory (pin it with cudaHostRegister, or use device memory)");
  XF_EXPECTS(c.packed_device != nullptr, "a packing kernel cannot reach the packed buffer: it is " +
                                             std::string(name_of(c.choice.packed)) +
                                             " memory (pin it with cudaHostRegister, or use device memory)");
  c.choice.method = path == pack_path::point_kernel ? pack_method::elements : plan.method;
  return c;
}

/// One cudaMemcpyAsync, 2D or 3D between the user's strided block and the packed rows.
void copy_engine_move(const copy_engine_shape& s, const std::byte* from, std::byte* to, bool unpack,
                      cudaStream_t stream) {
  // The user side is at `base` and `pitch`; the packed side is rows of row_bytes one after the other.
  const std::size_t row = static_cast<std::size_t>(s.row_bytes);
  const std::size_t from_pitch = unpack ? row : static_cast<std::size_t>(s.pitch);
  const std::size_t to_pitch = unpack ? static_cast<std::size_t>(s.pitch) : row;
  const std::byte* source = from + (unpack ? 0 : s.base);
  std::byte* target = to + (unpack ? s.base : 0);
  if (s.dims == 0) {
    XF_CUDA_TRY(cudaMemcpyAsync(target, source, row, cudaMemcpyDefault, stream));
  } else if (s.dims == 1) {
    XF_CUDA_TRY(cudaMemcpy2DAsync(target, to_pitch, source, from_pitch, row, static_cast<std::size_t>(s.rows),
                                  cudaMemcpyDefault, stream));
  } else {
    const auto user_plane = static_cast<std::size_t>(s.rows_per_plane),
               packed_plane = static_cast<std::size_t>(s.rows);
    cudaMemcpy3DParms p{};
    // cudaPitchedPtr holds a non-const pointer whichever side it is; the source is only read.
    p.srcPtr =
        cudaPitchedPtr{const_cast<std::byte*>(source), from_pitch, row, unpack ? packed_plane : user_plane};
    p.dstPtr = cudaPitchedPtr{target, to_pitch, row, unpack ? user_plane : packed_plane};
    p.extent = cudaExtent{row, static_cast<std::size_t>(s.rows), static_cast<std::size_t>(s.planes)};
    p.kind = cudaMemcpyDefault;
    XF_CUDA_TRY(cudaMemcpy3DAsync(&p, stream));
  }
}

/// A call's plan and, on a kernel path, its kernel's work.
struct planned_call {
  call_plan plan;
  std::optional<detail::kernel_work> work;
};

/// What a plan depends on: the type (its address and upload), the count, where the two buffers are and
/// the addresses the device takes them at (their alignment picks the kernel's unit), and the options.
struct plan_key {
  const device_type* type = nullptr;
  std::uint64_t serial = 0;
  std::int64_t count = 0;
  memory_kind user = memory_kind::device, packed = memory_kind::device;
  const std::byte* user_device = nullptr;
  const std::byte* packed_device = nullptr;
  pack_path path = pack_path::automatic;
  pack_costs pcie, device;
  friend bool operator==(const plan_key&, const plan_key&) = default;
};

/// The call's plan. The last one made on this thread is kept and reused when a call repeats it, as
/// programs do (a halo exchange, a ping-pong, a stream of frames): then a call's host work is the two
/// pointer queries (about 0.2 µs each, fig6's pointer_query) and the launch, where planning it anew
/// measured 0.4-1.0 µs (fig6's choose) beside a 10 µs call. Only the pointer queries are redone each
/// time: they are what can change between two calls with the same arguments.
const planned_call& plan_of(const device_type& t, std::int64_t count, const void* user, const void* packed,
                            const gpu_pack_options& options) {
  thread_local planned_call nothing;
  thread_local plan_key last_key;
  thread_local std::optional<planned_call> last;
  const std::int64_t bytes = packed_bytes(t.host(), count);  // checks the count
  if (bytes == 0) return nothing;
  XF_EXPECTS(user != nullptr && packed != nullptr, "gpu_pack/gpu_unpack: a null buffer");
  detail::expect_device_of(t);
  const detail::pointer_place user_place = detail::place_of_user(t, count, user);
  const detail::pointer_place packed_place = detail::place_of(packed, t.limits());
  const plan_key key{&t,
                     t.serial(),
                     count,
                     user_place.kind,
                     packed_place.kind,
                     user_place.device_address,
                     packed_place.device_address,
                     options.path,
                     options.pcie,
                     options.device};
  if (last && key == last_key) return *last;
  last.reset();
  planned_call fresh{plan_call(t, count, bytes, user_place, packed_place, options), std::nullopt};
  if (!fresh.plan.copy) {
    fresh.work.emplace(t, count, fresh.plan.choice.method, fresh.plan.user_device, fresh.plan.packed_device);
    fresh.plan.choice.unit_bytes = fresh.work->unit_bytes();
  }
  last_key = key;
  last = std::move(fresh);
  return *last;
}

/// Does what `c` planned: from the source to the target (pack: user to packed; unpack: packed to user).
pack_choice run_call(const planned_call& c, const std::byte* from, std::byte* to, bool unpack,
                     cudaStream_t stream) {
  const call_plan& p = c.plan;
  if (p.choice.bytes == 0) return p.choice;
  if (p.copy) {
    copy_engine_move(*p.copy, from, to, unpack, stream);
  } else if (unpack) {
    c.work->unpack_range(0, c.work->items(), p.packed_device, p.user_device, stream);
  } else {
    c.work->pack_range(0, c.work->items(), p.user_device, p.packed_device, stream);
  }
  return p.choice;
}

}  // namespace

pack_choice choose_pack_path(const device_type& t, std::int64_t count, const void* user, const void* packed,
                             const gpu_pack_options& options) {
  return plan_of(t, count, user, packed, options).plan.choice;
}

pack_choice gpu_pack(const device_type& t, std::int64_t count, const void* user, void* packed,
                     cudaStream_t stream, const gpu_pack_options& options) {
  return run_call(plan_of(t, count, user, packed, options), static_cast<const std::byte*>(user),
                  static_cast<std::byte*>(packed), false, stream);
}

pack_choice gpu_unpack(const device_type& t, std::int64_t count, const void* packed, void* user,
                       cudaStream_t stream, const gpu_pack_options& options) {
  return run_call(plan_of(t, count, user, packed, options), static_cast<const std::byte*>(packed),
                  static_cast<std::byte*>(user), true, stream);
}

namespace detail {

pointer_place place_of(const void* p, const device_limits& limits) {
  cudaPointerAttributes a{};
  XF_CUDA_TRY(cudaPointerGetAttributes(&a, p));
  pointer_place place;
  place.device_address = static_cast<std::byte*>(a.devicePointer);
  switch (a.type) {
    case cudaMemoryTypeDevice:
      place.kind = memory_kind::device;
      break;
    case cudaMemoryTypeManaged:
      place.kind = memory_kind::managed;
      break;
    case cudaMemoryTypeHost:
      place.kind = memory_kind::pinned_host;
      break;
    default:
      place.kind = memory_kind::pageable_host;
      // Where the device reads and writes pageable memory (HMM, ATS) a kernel takes the host address.
      // Written through only where the caller's pointer was writable (gpu_unpack's user, gpu_pack's packed).
      place.device_address =
          limits.pageable_memory_access ? static_cast<std::byte*>(const_cast<void*>(p)) : nullptr;
      break;
  }
  return place;
}

pointer_place place_of_user(const device_type& t, std::int64_t count, const void* user) {
  const type_record root = t.host().root();
  const std::int64_t lowest = root.true_lb + std::min<std::int64_t>(0, (count - 1) * root.extent);
  pointer_place place = place_of(static_cast<const std::byte*>(user) + lowest, t.limits());
  if (place.device_address != nullptr) place.device_address -= lowest;
  return place;
}

void expect_device_of(const device_type& t) {
  int current = 0;
  XF_CUDA_TRY(cudaGetDevice(&current));
  XF_EXPECTS(current == t.limits().device, "the type was uploaded to device " +
                                               std::to_string(t.limits().device) +
                                               ", and the current device is " + std::to_string(current));
}

namespace {

std::int64_t low_address_bits(const void* p) {
  return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p) & 0xffff);  // enough for 16-byte units
}

}  // namespace

kernel_work::kernel_work(const device_type& t, std::int64_t count, pack_method method,
                         const std::byte* user_device, const void* packed_address)
    : type_(&t), bytes_(packed_bytes(t.host(), count)) {
  const pack_plan& plan = t.plan();
  const type_record root = t.host().root();
  kernel_launch& a = launch_;
  a.method = method;
  a.count = count;
  a.type = t.device_view();
  if (method == pack_method::strided) {
    const strided_shape shape = shape_for(plan, root, count);
    a.unit_bytes = static_cast<int>(
        unit_bytes_dividing({shape.segment_bytes, shape.offset_divisor, low_address_bits(user_device),
                             low_address_bits(packed_address)}));
    a.units_per_segment = shape.segment_bytes / a.unit_bytes;
    a.base = shape.base;
    a.dims = static_cast<int>(shape.dims.size());
    for (std::size_t d = 0; d < shape.dims.size(); ++d) {
      a.counts[d] = shape.dims[d].count;
      a.strides[d] = shape.dims[d].stride;
      a.tables[d] = shape.dims[d].has_table() ? t.device_tables() + shape.dims[d].table : nullptr;
    }
    a.last = shape.segments * a.units_per_segment;
  } else if (method == pack_method::run_list) {
    const std::int64_t divisor = count > 1 ? std::gcd(plan.offset_divisor, root.extent) : plan.offset_divisor;
    a.unit_bytes = static_cast<int>(
        unit_bytes_dividing({divisor, low_address_bits(user_device), low_address_bits(packed_address)}));
    a.units_per_segment = root.size / a.unit_bytes;
    a.counts[0] = plan.run_count;
    a.counts[1] = plan.bucket_shift;
    a.strides[0] = root.extent;
    a.tables[0] = t.device_tables();
    a.tables[1] = t.device_tables() + plan.run_count;
    a.tables[2] = t.device_tables() + 2 * plan.run_count;
    a.last = count * a.units_per_segment;
  } else if (method == pack_method::runs) {
    const std::int64_t divisor = count > 1 ? std::gcd(plan.offset_divisor, root.extent) : plan.offset_divisor;
    a.unit_bytes = static_cast<int>(unit_bytes_dividing(
        {plan.segment_bytes, divisor, low_address_bits(user_device), low_address_bits(packed_address)}));
    a.units_per_segment = plan.segment_bytes / a.unit_bytes;
    a.segment_elements = plan.segment_elements;
    a.last = count * root.elements / plan.segment_elements * a.units_per_segment;
  } else {
    a.last = count * root.elements;
  }
  a.threads = static_cast<unsigned>(std::min(pack_block_threads, t.limits().max_threads_per_block));
  const std::uint32_t record_bytes = a.type.record_count * static_cast<std::uint32_t>(sizeof(type_record));
  a.records_in_shared = (method == pack_method::runs || method == pack_method::elements) &&
                        record_bytes <= max_shared_record_bytes;
  const std::uint32_t records_part = a.records_in_shared ? (record_bytes + 15) / 16 * 16 : 0;
  if (method == pack_method::elements) {
    a.stage_offset = records_part;
    // The tile's packed bytes, and up to 15 bytes before them to match the packed side's alignment.
    a.shared_bytes = records_part + a.threads * items_per_thread * max_element_bytes + 16;
  } else {
    a.shared_bytes = records_part;
  }
}

std::int64_t kernel_work::packed_offset(std::int64_t item) const {
  if (launch_.method != pack_method::elements) return item * launch_.unit_bytes;
  if (item >= launch_.last) return bytes_;
  return locate(type_->host().view(), launch_.count, item).out;
}

std::int64_t kernel_work::items_within(std::int64_t bytes) const {
  if (launch_.method != pack_method::elements) return std::max<std::int64_t>(1, bytes / launch_.unit_bytes);
  const type_record root = type_->host().root();
  // Whole instances where one fits: each packs exactly `size` bytes. Else elements of at most 8 bytes.
  if (root.size <= bytes) return bytes / root.size * root.elements;
  return std::max<std::int64_t>(1, bytes / max_element_bytes);
}

void kernel_work::launch(kernel_launch a, std::int64_t first, std::int64_t last, cudaStream_t stream) const {
  XF_EXPECTS(0 <= first && first <= last && last <= launch_.last, "items [" + std::to_string(first) + ", " +
                                                                      std::to_string(last) + ") of " +
                                                                      std::to_string(launch_.last));
  if (first == last) return;
  a.first = first;
  a.last = last;
  if (a.method == pack_method::elements) {
    a.packed_first = packed_offset(first);
    a.packed_last = packed_offset(last);
  }
  // Enough blocks for the range: one a tile for the strided and run_list kernels, at most what the device
  // holds at once for those that load the records into each block (pack_kernels.hpp). A grid's x is
  // below 2^31; the kernels loop over tiles beyond it.
  const bool per_block_setup = a.method == pack_method::runs || a.method == pack_method::elements;
  const std::int64_t tile =
      static_cast<std::int64_t>(a.threads) * (per_block_setup ? items_per_thread : unit_items_per_thread);
  const device_limits& l = type_->limits();
  const std::int64_t resident =
      static_cast<std::int64_t>(l.sm_count) * std::max(1, l.max_threads_per_sm / static_cast<int>(a.threads));
  const std::int64_t limit = per_block_setup ? resident : std::int64_t{0x7fffffff};
  a.blocks = static_cast<unsigned>(std::min((last - first + tile - 1) / tile, limit));
  launch_pack_kernel(a, stream);
}

void kernel_work::pack_range(std::int64_t first, std::int64_t last, const std::byte* user, std::byte* packed,
                             cudaStream_t stream) const {
  kernel_launch a = launch_;
  a.unpack = false;
  a.from = user;
  a.to = packed;
  launch(a, first, last, stream);
}

void kernel_work::unpack_range(std::int64_t first, std::int64_t last, const std::byte* packed,
                               std::byte* user, cudaStream_t stream) const {
  kernel_launch a = launch_;
  a.unpack = true;
  a.from = packed;
  a.to = user;
  launch(a, first, last, stream);
}

}  // namespace detail

}  // namespace xf::dt
