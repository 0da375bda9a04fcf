// Tests of map_elements, the loop of the element-wise maps: every element of the frame is transformed
// exactly once and stored, whatever the element type, the frame's length, the number of virtual threads and
// the buffers' alignment (vector path, element path, both); nothing past the frame's end is written; the
// transform is told which of its elements are the frame's.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "operators/transforms/element_map.hpp"

using namespace xf;

namespace {

constexpr std::uint64_t lengths[] = {0, 1, 3, 15, 16, 17, 63, 64, 65, 1000, 4099};
constexpr std::uint32_t element_thread_counts[] = {1, 2, 7, 32, 256};
constexpr unsigned char canary = 0xa5;

/// Element i of a test frame: distinct for every i (within the type's range) and never 0.
template <class T>
T element(std::uint64_t i) {
  return static_cast<T>(i % 97 + 1);
}

/// A frame of `n` elements at byte `shift` past a 16-byte boundary, surrounded by canary bytes.
template <class T>
struct guarded_frame {
  static constexpr std::size_t guard = 64;
  std::vector<unsigned char> bytes;
  std::size_t start;

  guarded_frame(std::uint64_t n, std::size_t shift) : bytes(guard * 2 + n * sizeof(T) + 32, canary) {
    const auto base = reinterpret_cast<std::uintptr_t>(bytes.data());
    start = guard + (16 - base % 16) % 16 + shift;  // 16-aligned, then shifted
  }
  T* data() { return reinterpret_cast<T*>(bytes.data() + start); }
  bool guards_intact(std::uint64_t n) const {
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      if (i >= start && i < start + n * sizeof(T)) continue;
      if (bytes[i] != canary) return false;
    }
    return true;
  }
};

/// Runs map_elements with out = in · 3 + 1 (wrap-around for integers) over every virtual thread in turn;
/// returns the sum of `valid` over every transform call.
template <class T>
std::uint64_t run_map(const T* in, T* out, std::uint64_t n, std::uint32_t threads) {
  frame_task<T> task;
  task.in = in;
  task.out = out;
  task.count = n;
  task.thread_count = threads;
  std::uint64_t valid_total = 0;
  for (std::uint32_t t = 0; t < threads; ++t) {
    task.thread_id = t;
    map_elements(task, [&](auto& v, unsigned valid) {
      constexpr std::size_t n = sizeof(v) / sizeof(v[0]);
      static_assert(n == element_map_shape<T>::chunk || n == element_map_shape<T>::loads);
      CHECK(valid <= n);
      valid_total += valid;
      for (auto& x : v) x = static_cast<T>(x * 3 + 1);
    });
  }
  return valid_total;
}

template <class T>
void check_type() {
  for (const std::uint64_t n : lengths) {
    for (const std::uint32_t threads : element_thread_counts) {
      // in and out aligned (vector path), each misaligned by one element (element path), in place.
      for (const std::size_t in_shift : {std::size_t{0}, sizeof(T)}) {
        for (const bool in_place : {false, true}) {
          CAPTURE(sizeof(T));
          CAPTURE(n);
          CAPTURE(threads);
          CAPTURE(in_shift);
          CAPTURE(in_place);
          guarded_frame<T> in(n, in_shift), out(n, 0);
          for (std::uint64_t i = 0; i < n; ++i) in.data()[i] = element<T>(i);
          T* dst = in_place ? in.data() : out.data();
          CHECK(run_map<T>(in.data(), dst, n, threads) == n);
          bool all = true;
          for (std::uint64_t i = 0; i < n && all; ++i) all = dst[i] == static_cast<T>(element<T>(i) * 3 + 1);
          CHECK(all);
          CHECK(in.guards_intact(n));
          if (!in_place) CHECK(out.guards_intact(n));
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("operators.map_elements_transforms_every_element_once") {
  check_type<std::uint8_t>();
  check_type<std::int16_t>();
  check_type<std::uint32_t>();
  check_type<float>();
  check_type<std::int64_t>();
  check_type<double>();
}

TEST_CASE("operators.map_elements_shapes_keep_loads_in_flight") {
  // 16-byte units, at most 16 elements held per thread: the registers the persistent kernel can spare.
  CHECK(element_map_shape<float>::unit_elements == 4);
  CHECK(element_map_shape<float>::loads == 4);
  CHECK(element_map_shape<float>::chunk == 16);
  CHECK(element_map_shape<double>::chunk == 8);
  CHECK(element_map_shape<std::uint8_t>::unit_elements == 16);
  CHECK(element_map_shape<std::uint8_t>::loads == 1);
  CHECK(element_map_shape<std::uint16_t>::loads == 2);
  for (const unsigned chunk :
       {element_map_shape<std::uint8_t>::chunk, element_map_shape<std::uint16_t>::chunk,
        element_map_shape<float>::chunk, element_map_shape<double>::chunk})
    CHECK(chunk <= element_map_shape<float>::max_chunk);
}
