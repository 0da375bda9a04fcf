// element_map: the loop of every element-wise GPU map (out[i] = f(in[i])), shaped for memory that answers
// in hundreds of nanoseconds. A loop that loads one element, computes and stores before it loads the next
// keeps one 4-byte load in flight per thread: on the H100 one warp then moved 0.3 GB/s from device memory
// (64 KiB in 219 µs, FMA-4 and FMA-64 alike: the arithmetic hid behind the latency), so an operator's cost
// fell as 1/warps whatever its arithmetic, and only a full grid reached the link's speed. Here each
// virtual thread first issues several 16-byte loads (a warp: up to 2 KiB in flight), then transforms the
// elements it holds — independent chains the scheduler interleaves — then stores them.
#pragma once

#include <cstdint>
#include <cstring>

#include "framework/core/exec_space.hpp"
#include "framework/model/operator.hpp"

namespace xf {

/// How map_elements cuts a frame for element type T: each virtual thread loads `loads` units of
/// `unit_elements` elements (16 bytes where T divides 16) before it transforms them, `chunk` elements in all.
/// The chunk stays at most 16 elements (64 bytes for floats): the registers it takes come out of the
/// persistent kernel's 64 per thread (__launch_bounds__(1024, 1)).
template <class T>
struct element_map_shape {
  static constexpr unsigned vector_bytes = 16;
  static constexpr bool vectorised = sizeof(T) < vector_bytes && vector_bytes % sizeof(T) == 0;
  static constexpr unsigned unit_elements = vectorised ? vector_bytes / sizeof(T) : 1;
  static constexpr unsigned max_chunk = 16;
  static constexpr unsigned max_loads = 4;
  static constexpr unsigned loads =
      unit_elements >= max_chunk
          ? 1
          : (max_chunk / unit_elements < max_loads ? max_chunk / unit_elements : max_loads);
  static constexpr unsigned chunk = loads * unit_elements;
};

namespace detail {

/// `elements` contiguous elements moved as one aligned unit.
template <class T, unsigned Elements>
struct alignas(Elements * sizeof(T)) element_unit {
  T e[Elements];
};

template <class Unit>
XF_HOST_DEVICE XF_FORCE_INLINE Unit load_unit(const void* base, std::uint64_t index) {
#if XF_DEVICE_PASS
  return static_cast<const Unit*>(base)[index];  // one vector load (the build has no strict aliasing)
#else
  Unit u;
  std::memcpy(&u, static_cast<const unsigned char*>(base) + index * sizeof(Unit), sizeof(Unit));
  return u;
#endif
}

template <class Unit>
XF_HOST_DEVICE XF_FORCE_INLINE void store_unit(void* base, std::uint64_t index, const Unit& u) {
#if XF_DEVICE_PASS
  static_cast<Unit*>(base)[index] = u;
#else
  std::memcpy(static_cast<unsigned char*>(base) + index * sizeof(Unit), &u, sizeof(Unit));
#endif
}

/// Transforms units [0, units) of `in` into `out`: virtual thread `thread` takes units thread,
/// thread + stride, … `Loads` at a time (so every load instruction of a warp reads consecutive units),
/// loading all before transforming any. The transform gets the valid prefix's length: units past the end
/// are zeros whose results are dropped.
template <class T, unsigned Per, unsigned Loads, class Transform>
XF_HOST_DEVICE XF_FORCE_INLINE void map_units(const T* in, T* out, std::uint64_t units, std::uint64_t thread,
                                              std::uint64_t stride, Transform& transform) {
  using unit = element_unit<T, Per>;
  constexpr unsigned chunk = Per * Loads;
  for (std::uint64_t base = thread; base < units; base += Loads * stride) {
    T v[chunk];
    XF_UNROLL
    for (unsigned j = 0; j < Loads; ++j) {
      const std::uint64_t k = base + j * stride;
      unit u{};
      if (k < units) u = load_unit<unit>(in, k);
      XF_UNROLL
      for (unsigned e = 0; e < Per; ++e) v[j * Per + e] = u.e[e];
    }
    const std::uint64_t left = units - base;
    const unsigned valid = left >= std::uint64_t{Loads} * stride
                               ? chunk
                               : static_cast<unsigned>((left + stride - 1) / stride) * Per;
    transform(v, valid);
    XF_UNROLL
    for (unsigned j = 0; j < Loads; ++j) {
      const std::uint64_t k = base + j * stride;
      if (k >= units) break;
      unit u;
      XF_UNROLL
      for (unsigned e = 0; e < Per; ++e) u.e[e] = v[j * Per + e];
      store_unit<unit>(out, k, u);
    }
  }
}

}  // namespace detail

/// Runs an element-wise map over a frame task: `transform(T (&v)[N], unsigned valid)` rewrites the elements
/// in place, each independently of the others (N is element_map_shape<T>::chunk on the vector path, its
/// `loads` on the element path for unaligned buffers and the last elements: write the transform generic
/// over N). Only v[0..valid) are the frame's: the others (valid < N at the frame's end only) hold zeros
/// whose results are dropped, so a transform may compute all of v — a fixed trip count the compiler unrolls
/// into registers — but must judge (ctx.fail) only the valid ones. `in` and `out` may be the same buffer.
/// Works on the host too (the host executor runs the same code).
///
///   map_elements(task, [&](auto& v, unsigned) {
///     XF_UNROLL
///     for (auto& x : v) x = x * factor;
///   });
template <class T, class Transform>
XF_HOST_DEVICE XF_FORCE_INLINE void map_elements(const frame_task<T>& task, Transform transform) {
  using shape = element_map_shape<T>;
  const std::uint64_t thread = task.thread_id, stride = task.thread_count;
  std::uint64_t covered = 0;  // elements done with whole units
  if constexpr (shape::vectorised) {
    const auto aligned = [](const void* p) {
      return reinterpret_cast<std::uintptr_t>(p) % shape::vector_bytes == 0;
    };
    if (aligned(task.in) && aligned(task.out)) {
      const std::uint64_t units = task.count / shape::unit_elements;
      detail::map_units<T, shape::unit_elements, shape::loads>(task.in, task.out, units, thread, stride,
                                                               transform);
      covered = units * shape::unit_elements;
    }
  }
  // The rest (all of it where the buffers are not vector-aligned): element by element, `loads` at a time
  // (each load its own 64-bit address: more would cost the persistent kernel registers it spills).
  const std::uint64_t rest = task.count - covered;
  if (rest != 0)
    detail::map_units<T, 1, shape::loads>(task.in + covered, task.out + covered, rest, thread, stride,
                                          transform);
}

}  // namespace xf
