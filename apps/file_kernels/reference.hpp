// The CPU references of xeflow-file-kernels and the check of a run's outputs against them: each
// kernel computed in double from the same file's rows, with a scale per element that bounds float's
// rounding error, so the check's tolerance is relative to what rounding can do and a wrong element shows.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "apps/file_kernels/kernel_spec.hpp"
#include "apps/file_kernels/matrix_file.hpp"

namespace xf::file_kernels {

/// One output of a reference, in double: each element's value and its scale — the same sums over the
/// absolute values of every term (|α|·Σ|a·x| …; ATAX's second product over the first's scales). A float
/// computation of the element in any summation order of n terms is off by at most about n·ε·scale, and a
/// scale of 0 (conv2d's border) means the element is exactly 0.
struct reference_vector {
  std::vector<double> value;
  std::vector<double> scale;
};

/// The outputs of a vector kernel (every kernel but conv2d) in the spec's order, from `rows` (read
/// `rows_per_read` rows at a time) by `threads` threads over disjoint row ranges; the column sums are merged
/// in thread order, so the result does not depend on the timing.
std::vector<reference_vector> reference_outputs(const kernel_spec& spec, matrix_shape shape,
                                                const kernel_inputs& in, const row_reader& rows,
                                                unsigned threads);

/// conv2d's output row i (`cols` values and scales) from input rows i − 1, i and i + 1 (`above` and `below`
/// may be null at the matrix's first and last rows, which are border). Border elements are 0 with scale 0.
void conv2d_reference_row(matrix_shape shape, std::uint64_t i, const float* above, const float* row,
                          const float* below, double* value, double* scale);

/// The first element that failed the check: |got − expected| > tolerance · scale (not finite counts too).
struct mismatch {
  std::uint32_t output = 0;  ///< in the spec's order
  std::uint64_t index = 0;   ///< within that output (row-major for conv2d's matrix)
  double got = 0, expected = 0, scale = 0;
};

struct check_result {
  std::optional<mismatch> first;  ///< the lowest bad index of the first output that has one
  double max_error = 0;           ///< max |got − expected| / scale over the elements with a scale
  std::uint64_t elements = 0;     ///< elements compared
};

/// Compares a run's outputs (spec order, each as long as its extent) with the reference computed from
/// `rows`. conv2d is compared row by row as the reference computes it (its output is as large as the file);
/// the vector kernels after reference_outputs. `threads` threads.
check_result check_outputs(const kernel_spec& spec, matrix_shape shape, const kernel_inputs& in,
                           const row_reader& rows, std::span<const std::vector<float>> outputs,
                           double tolerance, unsigned threads);

/// "atax: y[17] is 0.5, the CPU reference 0.51 (|difference| 0.01 > tolerance 1e-05 x scale 3.2)";
/// conv2d's element as "B[i][j]".
std::string describe(const kernel_spec& spec, matrix_shape shape, const mismatch& m, double tolerance);

}  // namespace xf::file_kernels
