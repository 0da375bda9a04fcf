// Static dispatch from a kernel operator's type index and element type to its device code: the calls the
// round makes into an operator (compute, a file reader's reads, a file source's frame_bytes). No function
// pointers: one switch over the list.
#pragma once

#include <cstdint>

#include "framework/core/element_type.hpp"
#include "framework/kernel/kernel_catalog.hpp"
#include "framework/model/gpu_operator_list.hpp"
#include "framework/model/operator.hpp"

namespace xf {
namespace kernel_detail {

/// Calls f(T{}) for the element type e when Op accepts it (accepted_elements): the operator's code is
/// compiled for those types only. Validation refuses a topic of any other type, so no item carries one.
template <class Op, class F>
__device__ __forceinline__ void with_element(element_type e, F&& f) {
  constexpr element_set accepted = accepted_elements<Op>();
  switch (e) {
    case element_type::u8:
      if constexpr (accepted.contains(element_type::u8)) f(std::uint8_t{});
      break;
    case element_type::i8:
      if constexpr (accepted.contains(element_type::i8)) f(std::int8_t{});
      break;
    case element_type::u16:
      if constexpr (accepted.contains(element_type::u16)) f(std::uint16_t{});
      break;
    case element_type::i16:
      if constexpr (accepted.contains(element_type::i16)) f(std::int16_t{});
      break;
    case element_type::u32:
      if constexpr (accepted.contains(element_type::u32)) f(std::uint32_t{});
      break;
    case element_type::i32:
      if constexpr (accepted.contains(element_type::i32)) f(std::int32_t{});
      break;
    case element_type::u64:
      if constexpr (accepted.contains(element_type::u64)) f(std::uint64_t{});
      break;
    case element_type::i64:
      if constexpr (accepted.contains(element_type::i64)) f(std::int64_t{});
      break;
    case element_type::f32:
      if constexpr (accepted.contains(element_type::f32)) f(float{});
      break;
    case element_type::f64:
      if constexpr (accepted.contains(element_type::f64)) f(double{});
      break;
  }
}

template <class Op>
__device__ __forceinline__ const typename Op::params& params_of(const std::byte* params) {
  static_assert(alignof(typename Op::params) <= 16,
                "the parameter arena aligns each params struct to 16 bytes");
  // Read in place (16-byte aligned arena, trivially copyable params, no strict aliasing in this build): a
  // copy put large params — kmeans_assign's 32 centres — on every thread's stack for every item.
  return *reinterpret_cast<const typename Op::params*>(params);
}

template <class Op>
__device__ void run_op(element_type e, const std::byte* params, const frame_call& c) {
  with_element<Op>(e, [&](auto zero) { Op::compute(params_of<Op>(params), task_of<decltype(zero)>(c)); });
}

/// Runs operator `type` of the list over the item `c`, for the calling thread (c.thread_id).
template <class... Ops>
__device__ void dispatch(gpu_operator_list<Ops...>, std::uint32_t type, element_type e,
                         const std::byte* params, const frame_call& c) {
  std::uint32_t i = 0;
  ((type == i++ ? run_op<Ops>(e, params, c) : void()), ...);
}

template <class Op>
__device__ void reads_op(element_type e, const std::byte* params, const frame_call& c, read_list& list,
                         read_step& step) {
  if constexpr (gpu_file_reader<Op>)
    with_element<Op>(e, [&](auto zero) {
      step = Op::template reads<decltype(zero)>(params_of<Op>(params), task_of<decltype(zero)>(c), list);
    });
}

template <class Op>
__device__ void frame_bytes_op(const std::byte* params, const frame_call& c, std::uint64_t& bytes) {
  if constexpr (gpu_file_source<Op>)
    bytes = Op::frame_bytes(params_of<Op>(params), c.file_sizes, c.out_capacity, c.offset);
}

/// Whether any operator of the list reads files: the kernel's reader phases are compiled in only then.
template <class List>
struct reads_any_files;
template <class... Ops>
struct reads_any_files<gpu_operator_list<Ops...>> {
  static constexpr bool value = (gpu_file_reader<Ops> || ...);
};

/// The round's Dispatch (framework/kernel/round_steps.hpp) over the list's device code.
template <class List>
struct device_dispatch;
template <class... Ops>
struct device_dispatch<gpu_operator_list<Ops...>> {
  const std::byte* params;  ///< the parameter arena

  /// A file reader's `reads` for the stage in `c`; `done` for any other type.
  __device__ read_step reads(const kernel_op& op, std::uint32_t, const frame_call& c, read_list& list) const {
    read_step step = read_step::done;
    std::uint32_t i = 0;
    ((op.type == i++ ? reads_op<Ops>(op.element, params + op.params_offset, c, list, step) : void()), ...);
    return step;
  }
  /// A file source's frame_bytes; 0 for any other type.
  __device__ std::uint64_t frame_bytes(const kernel_op& op, std::uint32_t, const frame_call& c) const {
    std::uint64_t bytes = 0;
    std::uint32_t i = 0;
    ((op.type == i++ ? frame_bytes_op<Ops>(params + op.params_offset, c, bytes) : void()), ...);
    return bytes;
  }
};

}  // namespace kernel_detail
}  // namespace xf
