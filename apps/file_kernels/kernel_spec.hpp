// xeflow-file-kernels' kernels (the end-to-end file benchmark), declared once: the PolyBench-style kernels
// whose matrices come from a file — their names, how many matrices the file holds, and the vectors they
// take and give. The generator, the CPU references, the GPU kernels and the command line all read this
// table.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace xf::file_kernels {

enum class kernel_kind : std::uint8_t { conv2d, gesummv, mvt, atax, bicg };

/// What a vector runs along: the matrix's rows (one element a row), its columns, or (conv2d's output) the
/// whole matrix.
enum class extent : std::uint8_t { rows, cols, matrix };

struct vector_spec {
  std::string_view name;
  extent along = extent::rows;
};

struct kernel_spec {
  kernel_kind kind;
  std::string_view name;
  std::string_view formula;  ///< for --help and the README
  std::uint32_t matrices;    ///< float32 matrices in the file, one after another
  std::array<vector_spec, 4> inputs;
  std::uint32_t input_count;
  std::array<vector_spec, 2> outputs;
  std::uint32_t output_count;
};

/// The matrices' shape: every matrix of the file is rows × cols float32, row-major.
struct matrix_shape {
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
  std::uint64_t length(extent e) const {
    return e == extent::rows ? rows : e == extent::cols ? cols : rows * cols;
  }
  std::uint64_t row_bytes() const { return cols * sizeof(float); }
  std::uint64_t matrix_bytes() const { return rows * cols * sizeof(float); }
};

// PolyBench's constants: GESUMMV's α and β, 2DCONV's 3×3 weights (weight[dr + 1][dc + 1] multiplies
// A[i + dr][j + dc]; PolyBench's c11 … c33 with c<column><row>).
inline constexpr float gesummv_alpha = 1.5f;
inline constexpr float gesummv_beta = 1.2f;
inline constexpr float conv2d_weight[3][3] = {{0.2f, 0.5f, -0.8f}, {-0.3f, 0.6f, -0.9f}, {0.4f, 0.7f, 0.1f}};

// clang-format off
inline constexpr std::array<kernel_spec, 5> kernel_specs{{
    {.kind = kernel_kind::conv2d, .name = "conv2d", .formula = "B = 3x3 convolution of A (the border is 0)",
     .matrices = 1, .inputs = {}, .input_count = 0,
     .outputs = {{{"B", extent::matrix}}}, .output_count = 1},
    {.kind = kernel_kind::gesummv, .name = "gesummv", .formula = "y = alpha A x + beta B x",
     .matrices = 2, .inputs = {{{"x", extent::cols}}}, .input_count = 1,
     .outputs = {{{"y", extent::rows}}}, .output_count = 1},
    {.kind = kernel_kind::mvt, .name = "mvt", .formula = "x1 = x1_0 + A y1, x2 = x2_0 + A^T y2",
     .matrices = 1,
     .inputs = {{{"y1", extent::cols}, {"y2", extent::rows}, {"x1_0", extent::rows}, {"x2_0", extent::cols}}},
     .input_count = 4,
     .outputs = {{{"x1", extent::rows}, {"x2", extent::cols}}}, .output_count = 2},
    {.kind = kernel_kind::atax, .name = "atax", .formula = "tmp = A x, y = A^T tmp",
     .matrices = 1, .inputs = {{{"x", extent::cols}}}, .input_count = 1,
     .outputs = {{{"tmp", extent::rows}, {"y", extent::cols}}}, .output_count = 2},
    {.kind = kernel_kind::bicg, .name = "bicg", .formula = "q = A p, s = A^T r",
     .matrices = 1, .inputs = {{{"p", extent::cols}, {"r", extent::rows}}}, .input_count = 2,
     .outputs = {{{"q", extent::rows}, {"s", extent::cols}}}, .output_count = 2},
}};
// clang-format on

static_assert(
    [] {
      for (std::size_t i = 0; i < kernel_specs.size(); ++i)
        if (static_cast<std::size_t>(kernel_specs[i].kind) != i) return false;
      return true;
    }(),
    "kernel_specs in kernel_kind's order");

inline const kernel_spec& spec_of(kernel_kind k) {
  return kernel_specs[static_cast<std::size_t>(k)];
}

inline std::optional<kernel_kind> parse_kernel(std::string_view name) {
  for (const kernel_spec& s : kernel_specs)
    if (s.name == name) return s.kind;
  return std::nullopt;
}

/// The file's bytes: every matrix of the kernel at this shape.
inline std::uint64_t input_bytes(const kernel_spec& s, matrix_shape shape) {
  return s.matrices * shape.matrix_bytes();
}

/// The default shape: square 32768 × 32768 matrices, and 16384 × 32768 for GESUMMV's two, so that every
/// kernel's file is 4 GiB.
inline matrix_shape default_shape(const kernel_spec& s) {
  return s.matrices == 2 ? matrix_shape{16384, 32768} : matrix_shape{32768, 32768};
}

}  // namespace xf::file_kernels
