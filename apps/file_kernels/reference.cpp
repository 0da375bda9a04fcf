// The CPU references: the vector kernels over row ranges with per-thread column sums, conv2d row by row.
#include "apps/file_kernels/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "apps/dataset_support/parallel.hpp"

namespace xf::file_kernels {
namespace {

constexpr std::uint64_t read_bytes = 4 << 20;  // the references read about this much at a time

std::uint64_t rows_per_read(matrix_shape shape) {
  return std::max<std::uint64_t>(1, read_bytes / std::max<std::uint64_t>(1, shape.row_bytes()));
}

/// One thread's column sums (value and scale), merged in thread order.
struct column_sums {
  std::vector<double> value, scale;
  explicit column_sums(std::uint64_t cols) : value(cols), scale(cols) {}
};

/// A row's dot product with v, and the same over absolute values.
void dot(const float* row, const std::vector<float>& v, std::uint64_t cols, double& value, double& scale) {
  double s = 0, a = 0;
  for (std::uint64_t j = 0; j < cols; ++j) {
    const double t = static_cast<double>(row[j]) * v[j];
    s += t;
    a += std::fabs(t);
  }
  value = s;
  scale = a;
}

/// sums[j] += row[j] · w (and |row[j]| · w_scale into the scales).
void add_row(const float* row, double w, double w_scale, std::uint64_t cols, column_sums& sums) {
  for (std::uint64_t j = 0; j < cols; ++j) {
    sums.value[j] += static_cast<double>(row[j]) * w;
    sums.scale[j] += std::fabs(static_cast<double>(row[j])) * w_scale;
  }
}

/// Compares elements [begin, end) of `got` with value/scale (indexed from `begin`); the lowest bad index
/// and the largest error go to `first` and `max_error`.
void compare(std::span<const float> got, std::uint64_t begin, std::uint64_t end, const double* value,
             const double* scale, double tolerance, std::uint32_t output, std::optional<mismatch>& first,
             double& max_error) {
  for (std::uint64_t e = begin; e < end; ++e) {
    const double v = value[e - begin], s = scale[e - begin];
    const double diff = std::fabs(static_cast<double>(got[e]) - v);
    if (!(diff <= tolerance * s)) {
      if (!first) first = mismatch{output, e, got[e], v, s};
      if (s > 0 && std::isfinite(diff)) max_error = std::max(max_error, diff / s);
      if (!std::isfinite(diff)) max_error = std::numeric_limits<double>::infinity();
    } else if (s > 0) {
      max_error = std::max(max_error, diff / s);
    }
  }
}

check_result check_conv2d(matrix_shape shape, const row_reader& rows, std::span<const float> got,
                          double tolerance, unsigned threads) {
  struct part_result {
    std::optional<mismatch> first;
    double max_error = 0;
  };
  std::vector<part_result> parts(std::max(1u, threads));
  const std::uint64_t chunk = rows_per_read(shape);
  apps::run_parallel(threads, [&](unsigned t) {
    const apps::index_range mine = apps::split_range(shape.rows, parts.size(), t);
    std::vector<float> window((chunk + 2) * shape.cols);
    std::vector<double> value(shape.cols), scale(shape.cols);
    for (std::uint64_t c = mine.begin; c < mine.end; c += chunk) {
      const std::uint64_t n = std::min(chunk, mine.end - c);
      // Window row k holds input row c − 1 + k; rows outside the matrix are not read (border rows need none).
      const std::uint64_t lo = c == 0 ? 0 : c - 1, hi = std::min(shape.rows, c + n + 1);
      rows(0, lo, hi - lo, window.data() + (lo + 1 - c) * shape.cols);
      for (std::uint64_t i = c; i < c + n; ++i) {
        const float* row = window.data() + (i + 1 - c) * shape.cols;
        conv2d_reference_row(shape, i, i == 0 ? nullptr : row - shape.cols, row,
                             i + 1 == shape.rows ? nullptr : row + shape.cols, value.data(), scale.data());
        compare(got, i * shape.cols, (i + 1) * shape.cols, value.data(), scale.data(), tolerance, 0,
                parts[t].first, parts[t].max_error);
      }
      if (parts[t].first) return;  // the rest of this part cannot be the first
    }
  });
  check_result r;
  r.elements = shape.rows * shape.cols;
  for (const part_result& p : parts) {  // in row order: the first part with a mismatch has the lowest index
    if (!r.first && p.first) r.first = p.first;
    r.max_error = std::max(r.max_error, p.max_error);
  }
  return r;
}

}  // namespace

void conv2d_reference_row(matrix_shape shape, std::uint64_t i, const float* above, const float* row,
                          const float* below, double* value, double* scale) {
  const bool interior_row = i >= 1 && i + 1 < shape.rows && above != nullptr && below != nullptr;
  for (std::uint64_t j = 0; j < shape.cols; ++j) {
    value[j] = 0;
    scale[j] = 0;
    if (!interior_row || j == 0 || j + 1 >= shape.cols) continue;
    const float* in[3] = {above, row, below};
    double s = 0, a = 0;
    for (int dr = 0; dr < 3; ++dr)
      for (int dc = 0; dc < 3; ++dc) {
        const double t = static_cast<double>(conv2d_weight[dr][dc]) * in[dr][j + dc - 1];
        s += t;
        a += std::fabs(t);
      }
    value[j] = s;
    scale[j] = a;
  }
}

std::vector<reference_vector> reference_outputs(const kernel_spec& spec, matrix_shape shape,
                                                const kernel_inputs& in, const row_reader& rows,
                                                unsigned threads) {
  if (spec.kind == kernel_kind::conv2d)
    throw std::invalid_argument("reference_outputs: conv2d's output is a matrix, checked row by row");
  std::vector<reference_vector> out(spec.output_count);
  for (std::uint32_t k = 0; k < spec.output_count; ++k) {
    out[k].value.assign(shape.length(spec.outputs[k].along), 0.0);
    out[k].scale.assign(shape.length(spec.outputs[k].along), 0.0);
  }
  const unsigned parts = std::max(1u, threads);
  const bool has_columns = spec.kind != kernel_kind::gesummv;
  std::vector<column_sums> columns;
  if (has_columns)
    for (unsigned t = 0; t < parts; ++t) columns.emplace_back(shape.cols);
  const std::uint64_t chunk = rows_per_read(shape);
  apps::run_parallel(parts, [&](unsigned t) {
    const apps::index_range mine = apps::split_range(shape.rows, parts, t);
    std::vector<float> a(chunk * shape.cols), b(spec.matrices == 2 ? chunk * shape.cols : 0);
    for (std::uint64_t c = mine.begin; c < mine.end; c += chunk) {
      const std::uint64_t n = std::min(chunk, mine.end - c);
      rows(0, c, n, a.data());
      if (spec.matrices == 2) rows(1, c, n, b.data());
      for (std::uint64_t r = 0; r < n; ++r) {
        const std::uint64_t i = c + r;
        const float* row = a.data() + r * shape.cols;
        double v = 0, s = 0;
        switch (spec.kind) {
          case kernel_kind::gesummv: {
            double bv = 0, bs = 0;
            dot(row, in.vectors[0], shape.cols, v, s);
            dot(b.data() + r * shape.cols, in.vectors[0], shape.cols, bv, bs);
            out[0].value[i] = double{gesummv_alpha} * v + double{gesummv_beta} * bv;
            out[0].scale[i] = std::fabs(double{gesummv_alpha}) * s + std::fabs(double{gesummv_beta}) * bs;
            break;
          }
          case kernel_kind::mvt: {  // x1 = x1_0 + A y1; x2 = x2_0 + A^T y2 (x2_0 added at the merge)
            dot(row, in.vectors[0], shape.cols, v, s);
            out[0].value[i] = in.vectors[2][i] + v;
            out[0].scale[i] = std::fabs(static_cast<double>(in.vectors[2][i])) + s;
            add_row(row, in.vectors[1][i], std::fabs(static_cast<double>(in.vectors[1][i])), shape.cols,
                    columns[t]);
            break;
          }
          case kernel_kind::atax: {  // tmp = A x; y = A^T tmp
            dot(row, in.vectors[0], shape.cols, v, s);
            out[0].value[i] = v;
            out[0].scale[i] = s;
            add_row(row, v, s, shape.cols, columns[t]);
            break;
          }
          case kernel_kind::bicg: {  // q = A p; s = A^T r
            dot(row, in.vectors[0], shape.cols, v, s);
            out[0].value[i] = v;
            out[0].scale[i] = s;
            add_row(row, in.vectors[1][i], std::fabs(static_cast<double>(in.vectors[1][i])), shape.cols,
                    columns[t]);
            break;
          }
          case kernel_kind::conv2d:
            break;
        }
      }
    }
  });
  if (has_columns) {
    reference_vector& col = out[1];
    if (spec.kind == kernel_kind::mvt)
      for (std::uint64_t j = 0; j < shape.cols; ++j) {
        col.value[j] = in.vectors[3][j];
        col.scale[j] = std::fabs(static_cast<double>(in.vectors[3][j]));
      }
    for (const column_sums& part : columns)
      for (std::uint64_t j = 0; j < shape.cols; ++j) {
        col.value[j] += part.value[j];
        col.scale[j] += part.scale[j];
      }
  }
  return out;
}

check_result check_outputs(const kernel_spec& spec, matrix_shape shape, const kernel_inputs& in,
                           const row_reader& rows, std::span<const std::vector<float>> outputs,
                           double tolerance, unsigned threads) {
  if (outputs.size() != spec.output_count)
    throw std::invalid_argument("check_outputs: one vector per output");
  for (std::uint32_t k = 0; k < spec.output_count; ++k)
    if (outputs[k].size() != shape.length(spec.outputs[k].along))
      throw std::invalid_argument("check_outputs: output '" + std::string(spec.outputs[k].name) + "' has " +
                                  std::to_string(outputs[k].size()) + " elements, not " +
                                  std::to_string(shape.length(spec.outputs[k].along)));
  if (spec.kind == kernel_kind::conv2d) return check_conv2d(shape, rows, outputs[0], tolerance, threads);
  const std::vector<reference_vector> ref = reference_outputs(spec, shape, in, rows, threads);
  check_result r;
  for (std::uint32_t k = 0; k < spec.output_count; ++k) {
    std::optional<mismatch> first;
    compare(outputs[k], 0, outputs[k].size(), ref[k].value.data(), ref[k].scale.data(), tolerance, k, first,
            r.max_error);
    if (!r.first && first) r.first = first;
    r.elements += outputs[k].size();
  }
  return r;
}

std::string describe(const kernel_spec& spec, matrix_shape shape, const mismatch& m, double tolerance) {
  std::string where = std::string(spec.outputs[m.output].name);
  if (spec.outputs[m.output].along == extent::matrix)
    where += "[" + std::to_string(m.index / shape.cols) + "][" + std::to_string(m.index % shape.cols) + "]";
  else
    where += "[" + std::to_string(m.index) + "]";
  char numbers[256];
  std::snprintf(numbers, sizeof numbers,
                " is %.9g, the CPU reference %.9g (|difference| %.3g > tolerance %.3g x scale %.6g)", m.got,
                m.expected, std::fabs(m.got - m.expected), tolerance, m.scale);
  return std::string(spec.name) + ": " + where + numbers;
}

}  // namespace xf::file_kernels
