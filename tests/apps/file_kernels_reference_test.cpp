// xeflow-file-kernels' host code (apps/file_kernels): the generator's values and files, the size check, the
// CPU references against the kernels' definitions written out naively, the check of a run's outputs —
// which must pass float results and name the first element that is wrong — and the cpu-io input's
// launches slab by slab. No GPU.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "apps/file_kernels/file_kernels.hpp"
#include "apps/file_kernels/kernel_spec.hpp"
#include "apps/file_kernels/matrix_file.hpp"
#include "apps/file_kernels/reference.hpp"
#include "tests/support/scratch_dir.hpp"

namespace {

using namespace xf::file_kernels;

std::vector<char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Matrix m of the generated file, whole.
std::vector<float> matrix(std::uint64_t seed, matrix_shape shape, std::uint32_t m) {
  std::vector<float> a(shape.rows * shape.cols);
  for (std::uint64_t k = 0; k < a.size(); ++k) a[k] = matrix_value(seed, m, k);
  return a;
}

/// The kernels' definitions, naively in double (PolyBench's loops).
std::vector<std::vector<double>> naive(const kernel_spec& spec, matrix_shape shape, const kernel_inputs& in,
                                       std::uint64_t seed) {
  const std::uint64_t R = shape.rows, C = shape.cols;
  const std::vector<float> A = matrix(seed, shape, 0);
  const auto a = [&](std::uint64_t i, std::uint64_t j) { return static_cast<double>(A[i * C + j]); };
  const auto& v = in.vectors;
  switch (spec.kind) {
    case kernel_kind::gesummv: {
      const std::vector<float> B = matrix(seed, shape, 1);
      std::vector<double> y(R);
      for (std::uint64_t i = 0; i < R; ++i) {
        double ax = 0, bx = 0;
        for (std::uint64_t j = 0; j < C; ++j) {
          ax += a(i, j) * v[0][j];
          bx += double{B[i * C + j]} * v[0][j];
        }
        y[i] = double{gesummv_alpha} * ax + double{gesummv_beta} * bx;
      }
      return {y};
    }
    case kernel_kind::mvt: {
      std::vector<double> x1(v[2].begin(), v[2].end()), x2(v[3].begin(), v[3].end());
      for (std::uint64_t i = 0; i < R; ++i)
        for (std::uint64_t j = 0; j < C; ++j) x1[i] += a(i, j) * v[0][j];
      for (std::uint64_t j = 0; j < C; ++j)
        for (std::uint64_t i = 0; i < R; ++i) x2[j] += a(i, j) * v[1][i];
      return {x1, x2};
    }
    case kernel_kind::atax: {
      std::vector<double> tmp(R), y(C);
      for (std::uint64_t i = 0; i < R; ++i)
        for (std::uint64_t j = 0; j < C; ++j) tmp[i] += a(i, j) * v[0][j];
      for (std::uint64_t j = 0; j < C; ++j)
        for (std::uint64_t i = 0; i < R; ++i) y[j] += a(i, j) * tmp[i];
      return {tmp, y};
    }
    case kernel_kind::bicg: {
      std::vector<double> q(R), s(C);
      for (std::uint64_t i = 0; i < R; ++i)
        for (std::uint64_t j = 0; j < C; ++j) q[i] += a(i, j) * v[0][j];
      for (std::uint64_t j = 0; j < C; ++j)
        for (std::uint64_t i = 0; i < R; ++i) s[j] += v[1][i] * a(i, j);
      return {q, s};
    }
    case kernel_kind::conv2d: {
      std::vector<double> B(R * C);
      for (std::uint64_t i = 1; i + 1 < R; ++i)
        for (std::uint64_t j = 1; j + 1 < C; ++j)
          for (int dr = -1; dr <= 1; ++dr)
            for (int dc = -1; dc <= 1; ++dc)
              B[i * C + j] += double{conv2d_weight[dr + 1][dc + 1]} * a(i + dr, j + dc);
      return {B};
    }
  }
  return {};
}

/// The naive outputs rounded to float: what a correct GPU run gives, give or take rounding.
std::vector<std::vector<float>> as_float(const std::vector<std::vector<double>>& d) {
  std::vector<std::vector<float>> f;
  for (const auto& v : d) f.emplace_back(v.begin(), v.end());
  return f;
}

const matrix_shape shapes[] = {{1, 1}, {7, 5}, {3, 1}, {1, 9}, {33, 17}};

}  // namespace

TEST_CASE("file_kernels.values_are_deterministic_and_exact_in_float") {
  for (std::uint64_t k : {0ull, 1ull, 12345ull, 1ull << 40}) {
    const float v = matrix_value(7, 0, k);
    CHECK(v == matrix_value(7, 0, k));
    CHECK(v >= -1.0f);
    CHECK(v < 1.0f);
    CHECK(std::ldexp(static_cast<double>(v), 23) == std::floor(std::ldexp(static_cast<double>(v), 23)));
  }
  int differ_by_seed = 0, differ_by_matrix = 0, differ_from_vectors = 0;
  for (std::uint64_t k = 0; k < 64; ++k) {
    differ_by_seed += matrix_value(1, 0, k) != matrix_value(2, 0, k);
    differ_by_matrix += matrix_value(1, 0, k) != matrix_value(1, 1, k);
    differ_from_vectors += matrix_value(1, 0, k) != vector_value(1, 0, k);
  }
  CHECK(differ_by_seed > 60);
  CHECK(differ_by_matrix > 60);
  CHECK(differ_from_vectors > 60);
  const kernel_inputs in = make_inputs(spec_of(kernel_kind::mvt), {3, 4}, 5);
  REQUIRE(in.vectors.size() == 4);
  CHECK(in.vectors[0].size() == 4);  // y1 along the columns
  CHECK(in.vectors[1].size() == 3);  // y2 along the rows
  CHECK(in.vectors[1][2] == vector_value(5, 1, 2));
}

TEST_CASE("file_kernels.generator_writes_every_value_in_place_for_any_thread_count") {
  xf::test::scratch_dir dir;
  // More than one of the generator's 4 MiB chunks per matrix, the last one short, and two matrices.
  const matrix_shape shape{1100, 1000};
  const kernel_spec& spec = spec_of(kernel_kind::gesummv);
  const std::string one = dir.file("one"), three = dir.file("three");
  CHECK(generate_matrix_file(one, spec, shape, 9, 1) == 2 * 1100 * 1000 * 4);
  generate_matrix_file(three, spec, shape, 9, 3);
  const std::vector<char> a = file_bytes(one), b = file_bytes(three);
  REQUIRE(a.size() == input_bytes(spec, shape));
  CHECK(a == b);
  for (const std::uint64_t k : {0ull, 999ull, 1048575ull, 1048576ull, 1099999ull}) {
    for (std::uint32_t m = 0; m < 2; ++m) {
      float v;
      std::memcpy(&v, a.data() + (m * shape.rows * shape.cols + k) * 4, 4);
      CHECK(v == matrix_value(9, m, k));
    }
  }
  // The rows' reader reads what the generator wrote.
  matrix_file_rows rows(one, shape);
  std::vector<float> from_file(3 * shape.cols), computed(3 * shape.cols);
  rows.read(1, 1000, 3, from_file.data());
  generated_rows(9, shape)(1, 1000, 3, computed.data());
  CHECK(from_file == computed);
}

TEST_CASE("file_kernels.check_matrix_file_names_the_path_and_what_is_wrong") {
  xf::test::scratch_dir dir;
  const kernel_spec& spec = spec_of(kernel_kind::atax);
  try {
    check_matrix_file(dir.file("missing"), spec, {4, 4});
    FAIL("no error for a missing file");
  } catch (const std::runtime_error& e) {
    CHECK_MESSAGE(
        std::string(e.what()).find("'" + dir.file("missing") + "': cannot open") != std::string::npos,
        e.what());
  }
  const std::string path = dir.file("m");
  generate_matrix_file(path, spec, {4, 4}, 1, 2);
  CHECK_NOTHROW(check_matrix_file(path, spec, {4, 4}));
  try {
    check_matrix_file(path, spec, {4, 5});
    FAIL("no error for a file of the wrong size");
  } catch (const std::runtime_error& e) {
    CHECK_MESSAGE(std::string(e.what()).find("holds 64 bytes") != std::string::npos, e.what());
    CHECK_MESSAGE(std::string(e.what()).find(path) != std::string::npos, e.what());
  }
  CHECK_THROWS_WITH_AS(check_matrix_file(dir.file(""), spec, {4, 4}), doctest::Contains("not a regular file"),
                       std::runtime_error);
}

TEST_CASE("file_kernels.references_are_the_kernels_definitions") {
  for (const kernel_spec& spec : kernel_specs) {
    if (spec.kind == kernel_kind::conv2d) continue;
    for (const matrix_shape shape : shapes) {
      for (const unsigned threads : {1u, 3u}) {
        CAPTURE(spec.name);
        CAPTURE(shape.rows);
        CAPTURE(shape.cols);
        CAPTURE(threads);
        const kernel_inputs in = make_inputs(spec, shape, 3);
        const auto want = naive(spec, shape, in, 3);
        const auto got = reference_outputs(spec, shape, in, generated_rows(3, shape), threads);
        REQUIRE(got.size() == spec.output_count);
        for (std::uint32_t k = 0; k < spec.output_count; ++k) {
          REQUIRE(got[k].value.size() == want[k].size());
          for (std::size_t e = 0; e < want[k].size(); ++e) {
            CHECK(got[k].value[e] == doctest::Approx(want[k][e]).epsilon(1e-12));
            CHECK(got[k].scale[e] >= std::fabs(got[k].value[e]) * (1 - 1e-12));
          }
        }
      }
    }
  }
}

TEST_CASE("file_kernels.conv2d_reference_row_is_the_stencil_and_a_zero_border") {
  const matrix_shape shape{4, 5};
  const kernel_inputs none;
  const auto want = naive(spec_of(kernel_kind::conv2d), shape, none, 4)[0];
  const std::vector<float> a = matrix(4, shape, 0);
  std::vector<double> value(shape.cols), scale(shape.cols);
  for (std::uint64_t i = 0; i < shape.rows; ++i) {
    conv2d_reference_row(shape, i, i == 0 ? nullptr : &a[(i - 1) * 5], &a[i * 5],
                         i == 3 ? nullptr : &a[(i + 1) * 5], value.data(), scale.data());
    for (std::uint64_t j = 0; j < shape.cols; ++j) {
      CAPTURE(i);
      CAPTURE(j);
      CHECK(value[j] == doctest::Approx(want[i * 5 + j]).epsilon(1e-12));
      const bool border = i == 0 || i == 3 || j == 0 || j == 4;
      CHECK((scale[j] == 0) == border);
    }
  }
}

TEST_CASE("file_kernels.check_passes_float_results_and_names_the_first_bad_element") {
  for (const kernel_spec& spec : kernel_specs) {
    const matrix_shape shape{33, 17};
    CAPTURE(spec.name);
    const kernel_inputs in = make_inputs(spec, shape, 8);
    const auto rows = generated_rows(8, shape);
    std::vector<std::vector<float>> outputs = as_float(naive(spec, shape, in, 8));
    for (const unsigned threads : {1u, 4u}) {
      const check_result ok = check_outputs(spec, shape, in, rows, outputs, 1e-5, threads);
      CHECK_FALSE(ok.first);
      CHECK(ok.max_error < 1e-6);
      CHECK(ok.elements == (spec.kind == kernel_kind::conv2d ? 33 * 17
                            : spec.output_count == 1         ? 33
                                                             : 33 + 17));
    }
    // Two wrong elements in the last output: the lower index is named, whatever the threads.
    const std::uint32_t last = spec.output_count - 1;
    const std::uint64_t low = spec.kind == kernel_kind::conv2d ? 2 * 17 + 3 : 5;
    outputs[last][low + 7] += 1.0f;
    outputs[last][low] += 0.01f;
    for (const unsigned threads : {1u, 4u}) {
      const check_result bad = check_outputs(spec, shape, in, rows, outputs, 1e-5, threads);
      REQUIRE(bad.first);
      CHECK(bad.first->output == last);
      CHECK(bad.first->index == low);
      const std::string text = describe(spec, shape, *bad.first, 1e-5);
      const std::string where =
          spec.kind == kernel_kind::conv2d
              ? "conv2d: B[2][3] is "
              : std::string(spec.name) + ": " + std::string(spec.outputs[last].name) + "[5] is ";
      CHECK_MESSAGE(text.find(where) == 0, text);
    }
    // An error in an earlier output (or earlier in the same one) comes first; a NaN is an error.
    outputs[0][1] = std::nanf("");
    const check_result nan = check_outputs(spec, shape, in, rows, outputs, 1e-5, 2);
    REQUIRE(nan.first);
    CHECK(nan.first->output == 0);
    CHECK(nan.first->index == 1);
  }
  // conv2d's border is exactly zero: anything else there is wrong, however small.
  const kernel_spec& conv = spec_of(kernel_kind::conv2d);
  const matrix_shape shape{6, 6};
  std::vector<std::vector<float>> outputs = as_float(naive(conv, shape, {}, 1));
  outputs[0][6] = 1e-30f;  // B[1][0]
  const check_result border = check_outputs(conv, shape, {}, generated_rows(1, shape), outputs, 1e-5, 1);
  REQUIRE(border.first);
  CHECK(border.first->index == 6);
}

TEST_CASE("file_kernels.check_refuses_outputs_of_the_wrong_length") {
  const kernel_spec& spec = spec_of(kernel_kind::bicg);
  const matrix_shape shape{4, 3};
  std::vector<std::vector<float>> outputs{std::vector<float>(4), std::vector<float>(4)};
  CHECK_THROWS_WITH_AS(
      check_outputs(spec, shape, make_inputs(spec, shape, 1), generated_rows(1, shape), outputs, 1e-5, 1),
      doctest::Contains("output 's' has 4 elements, not 3"), std::invalid_argument);
}

TEST_CASE("file_kernels.cpu_io_launches_cover_every_row_once_and_only_when_loaded") {
  for (const kernel_spec& spec : kernel_specs) {
    for (const matrix_shape shape : {matrix_shape{301, 97}, matrix_shape{1, 1}, matrix_shape{2, 5},
                                     matrix_shape{5, 1}, matrix_shape{40, 1024}}) {
      for (const std::uint64_t slab : {4096ull, 8192ull, 12288ull, 1ull << 20}) {
        CAPTURE(spec.name);
        CAPTURE(shape.rows);
        CAPTURE(shape.cols);
        CAPTURE(slab);
        const std::uint64_t size = input_bytes(spec, shape);
        std::uint64_t done = 0, next = 0;
        for (std::uint64_t begin = 0; begin < size; begin += slab) {
          const std::uint64_t end = std::min(size, begin + slab);
          for (const row_launch& l : launches_after(spec, shape, end, done)) {
            CHECK(l.matrix < spec.matrices);
            CHECK(l.first_row < l.end_row);
            CHECK(l.end_row <= shape.rows);
            CHECK(l.matrix * shape.rows + l.first_row == next);  // in order, nothing skipped or repeated
            next = l.matrix * shape.rows + l.end_row;
            if (end < size) {
              // Every row read is loaded, conv2d's row below too (where there is one).
              const std::uint64_t last_needed = l.matrix * shape.rows + l.end_row +
                                                (spec.kind == kernel_kind::conv2d && l.end_row < shape.rows);
              CHECK(last_needed * shape.row_bytes() <= end);
            }
          }
          CHECK(done == next);
        }
        CHECK(done == spec.matrices * shape.rows);
      }
    }
  }
}
