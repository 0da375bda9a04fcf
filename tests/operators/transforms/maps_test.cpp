// Tests of the built-in GPU maps run on the host: the result does not depend on how many virtual threads
// cover the frame, and matches a plain loop (std::fma for fma).
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "framework/model/registry.hpp"
#include "operators/builtin.hpp"
#include "operators/frame_content.hpp"
#include "operators/transforms/fma.hpp"
#include "operators/transforms/kmeans_assign.hpp"
#include "operators/transforms/pass_through.hpp"
#include "operators/transforms/scale.hpp"

using namespace xf;

namespace {

/// Elements per test frame: not a multiple of any thread count used, so grid strides end unevenly.
constexpr std::uint64_t element_count = 4099;
constexpr std::uint32_t map_thread_counts[] = {1, 32, 256, 7};

template <class T>
std::vector<T> input_frame() {
  std::vector<T> in(element_count);
  if constexpr (std::is_floating_point_v<T>) {
    // Mixed signs and magnitudes; sequence values would keep fma's results integral.
    for (std::uint64_t i = 0; i < element_count; ++i) {
      in[i] = static_cast<T>(content::random_value<T>(3, i) * 200 - 100);
    }
  } else {
    for (std::uint64_t i = 0; i < element_count; ++i) in[i] = content::random_value<T>(3, i);
  }
  return in;
}

/// Runs Op::compute over `in` with `thread_count` virtual threads, each thread id in turn.
template <class Op, class T>
std::vector<T> run_op(const typename Op::params& p, const std::vector<T>& in, std::uint32_t thread_count) {
  std::vector<T> out(in.size(), T{});
  frame_task<T> task;
  task.in = in.data();
  task.out = out.data();
  task.count = in.size();
  task.offset = 5;
  task.thread_count = thread_count;
  for (std::uint32_t t = 0; t < thread_count; ++t) {
    task.thread_id = t;
    Op::compute(p, task);
  }
  return out;
}

template <class T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <class Op, class T>
void check_thread_count_independent(const typename Op::params& p) {
  const auto in = input_frame<T>();
  const auto reference = run_op<Op>(p, in, 1);
  for (std::uint32_t threads : map_thread_counts) {
    CAPTURE(threads);
    CHECK(same_bytes(run_op<Op>(p, in, threads), reference));
  }
}

template <class T>
void check_all_maps_for() {
  CAPTURE(name_of(element_of<T>::value));
  check_thread_count_independent<scale_op, T>({3.0});
  check_thread_count_independent<pass_through_op, T>({});
  check_thread_count_independent<fma_op, T>({16, 1.0001, 0.5});
  check_thread_count_independent<fma_op, T>({5, 3.0, 7.0});
}

}  // namespace

TEST_CASE("operators.maps_independent_of_thread_count") {
  check_all_maps_for<std::uint8_t>();
  check_all_maps_for<std::uint32_t>();
  check_all_maps_for<std::int64_t>();
  check_all_maps_for<float>();
  check_all_maps_for<double>();
}

TEST_CASE("operators.scale_byte_exact") {
  {
    const auto in = input_frame<float>();
    const auto out = run_op<scale_op>({2.5}, in, 32);
    std::vector<float> want(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) want[i] = in[i] * 2.5f;
    CHECK(same_bytes(out, want));
  }
  {
    const auto in = input_frame<double>();
    const auto out = run_op<scale_op>({-0.1}, in, 7);
    std::vector<double> want(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) want[i] = in[i] * -0.1;
    CHECK(same_bytes(out, want));
  }
  {
    // Integers: the factor is truncated (3.9 → 3) and the product wraps in the element type.
    const auto in = input_frame<std::uint8_t>();
    const auto out = run_op<scale_op>({3.9}, in, 256);
    std::vector<std::uint8_t> want(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) want[i] = static_cast<std::uint8_t>(in[i] * 3u);
    CHECK(same_bytes(out, want));
  }
  {
    const auto in = input_frame<std::int64_t>();
    const auto out = run_op<scale_op>({-2.0}, in, 1);
    std::vector<std::int64_t> want(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
      want[i] = static_cast<std::int64_t>(static_cast<std::uint64_t>(in[i]) * static_cast<std::uint64_t>(-2));
    }
    CHECK(same_bytes(out, want));
  }
}

TEST_CASE("operators.element_from_real_is_defined_everywhere") {
  using element_math::element_from_real;
  CHECK(element_from_real<std::uint8_t>(2.7) == 2);
  CHECK(element_from_real<std::uint8_t>(-1.0) == 255);
  CHECK(element_from_real<std::uint8_t>(300.0) == 44);
  CHECK(element_from_real<std::int8_t>(-2.9) == -2);
  CHECK(element_from_real<std::int64_t>(1e300) == INT64_MAX);
  CHECK(element_from_real<std::int64_t>(-1e300) == INT64_MIN);
  CHECK(element_from_real<std::uint32_t>(std::nan("")) == 0);
  CHECK(element_from_real<float>(0.1) == 0.1f);
  CHECK(element_math::wrapping_mul<std::uint16_t>(65535, 65535) == 1);  // no int overflow on the way
  CHECK(element_math::wrapping_mul<std::int32_t>(INT32_MAX, 2) == -2);
}

TEST_CASE("operators.pass_through_byte_exact") {
  const auto in = input_frame<std::uint32_t>();
  CHECK(same_bytes(run_op<pass_through_op>({}, in, 7), in));
  const auto f = input_frame<double>();
  CHECK(same_bytes(run_op<pass_through_op>({}, f, 256), f));
}

TEST_CASE("operators.fma_matches_std_fma_loop") {
  const fma_op::params p{16, 1.0001, 0.5};
  {
    const auto in = input_frame<float>();
    std::vector<float> want(in);
    for (float& v : want) {
      for (std::uint32_t k = 0; k < p.iterations; ++k) v = std::fma(v, 1.0001f, 0.5f);
    }
    CHECK(same_bytes(run_op<fma_op>(p, in, 32), want));
  }
  {
    const auto in = input_frame<double>();
    std::vector<double> want(in);
    for (double& v : want) {
      for (std::uint32_t k = 0; k < p.iterations; ++k) v = std::fma(v, 1.0001, 0.5);
    }
    CHECK(same_bytes(run_op<fma_op>(p, in, 7), want));
  }
  {
    // Integers: v·A + B with A, B truncated; defaults truncate to 1 and 0, so the frame is unchanged.
    const auto in = input_frame<std::uint32_t>();
    CHECK(same_bytes(run_op<fma_op>(p, in, 32), in));
    std::vector<std::uint32_t> want(in);
    for (auto& v : want) {
      for (int k = 0; k < 3; ++k) v = v * 5u + 7u;
    }
    CHECK(same_bytes(run_op<fma_op>({3, 5.0, 7.0}, in, 256), want));
  }
}

TEST_CASE("operators.maps_handle_empty_frames") {
  const std::vector<float> empty;
  CHECK(run_op<fma_op>({16, 1.0, 1.0}, empty, 32).empty());
  CHECK(run_op<scale_op>({2.0}, empty, 1).empty());
}

TEST_CASE("operators.fma_changes_its_cost_from_switch_offset_on") {
  // The test frame is offset 5: switching at 5 applies iterations_after, at 6 not yet.
  const auto in = input_frame<std::uint32_t>();
  fma_op::params light{4, 3.0, 1.0}, heavy{64, 3.0, 1.0};
  fma_op::params switched_here = light, switched_later = light;
  switched_here.switch_offset = 5;
  switched_here.iterations_after = 64;
  switched_later.switch_offset = 6;
  switched_later.iterations_after = 64;
  CHECK(same_bytes(run_op<fma_op>(switched_here, in, 32), run_op<fma_op>(heavy, in, 32)));
  CHECK(same_bytes(run_op<fma_op>(switched_later, in, 32), run_op<fma_op>(light, in, 32)));
  CHECK_FALSE(same_bytes(run_op<fma_op>(light, in, 32), run_op<fma_op>(heavy, in, 32)));
}

TEST_CASE("operators.kmeans_assign_picks_the_nearest_centre") {
  kmeans_assign_op::params p;
  const float centres[] = {0, 0, 0, 10, 10, 10, 10, 10, 10};  // centre 2 ties with 1: the lower index wins
  std::memcpy(p.centres, centres, sizeof centres);
  p.centre_values = 9;
  // Four particles field by field: x[4], y[4], z[4].
  const std::vector<float> in = {1, 9, 5, 6, /*y*/ 0, 9, 5, 6, /*z*/ 0, 9, 5, 6};
  for (const std::uint32_t threads : {1u, 3u, 32u}) {
    CAPTURE(threads);
    const std::vector<float> out = run_op<kmeans_assign_op>(p, in, threads);
    const std::uint32_t expected[] = {0, 1, 0, 1};  // (5, 5, 5) is as far from 0 as from 1: the lower index
    for (int r = 0; r < 4; ++r) CHECK(std::bit_cast<std::uint32_t>(out[r]) == expected[r]);
  }
  // The output is the ids only: a third of the input's bytes, in every executor (the registry's info,
  // the CPU placement's frame).
  static_assert(output_numerator<kmeans_assign_op>() == 1 && output_denominator<kmeans_assign_op>() == 3);
  operator_registry registry;
  register_builtin_operators(registry);
  const operator_entry& entry = *registry.find("kmeans_assign");
  CHECK(entry.info.output_share_for({{"centres", std::string("0 0 0")}}).of(48) == 16);
  CHECK(entry.make_host_kernel({{"centres", std::string("0 0 0")}}, {})->output_bytes(48) == 16);
  auto on_cpu = entry.make_cpu({{"centres", std::string("0 0 0")}}, {});
  std::vector<float> frame(12, 1.0f), ids(12, -1.0f);
  frame_in fi{reinterpret_cast<const std::byte*>(frame.data()), 48, element_type::f32};
  frame_out fo{reinterpret_cast<std::byte*>(ids.data()), 48, 0, element_type::f32};
  dynamic_cast<cpu_map&>(*on_cpu).on_frame(0, fi, fo);
  CHECK(fo.bytes == 16);
  CHECK(ids[4] == -1.0f);  // past the ids: not written
  // A frame that is not whole particles fails.
  frame_task<float> task;
  std::vector<float> odd(5), result(5);
  std::uint64_t failure = 0;
  task.in = odd.data();
  task.out = result.data();
  task.count = 5;
  task.failure = &failure;
  kmeans_assign_op::compute(p, task);
  CHECK(failure == ((std::uint64_t{1} << 32) | kmeans_assign_op::bad_frame));
}
