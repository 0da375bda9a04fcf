// xeflow-file-kernels' input files: float32 matrices, row-major, one after another, whose every
// element is a function of the seed and its position — so the generator writes them in parallel, tests
// compute any element without a file, and the kernels' vectors come from the same seed, in memory.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "apps/file_kernels/kernel_spec.hpp"
#include "framework/files/file_table.hpp"

namespace xf::file_kernels {

/// Element `index` (row-major: i·cols + j) of matrix `matrix`: uniform in [-1, 1) on a grid of 2^-23, so
/// exact in float32 and summed exactly in double by the references.
float matrix_value(std::uint64_t seed, std::uint32_t matrix, std::uint64_t index);
/// Element `index` of the kernel's input vector number `input` (the spec's order); the same distribution.
float vector_value(std::uint64_t seed, std::uint32_t input, std::uint64_t index);

/// The kernel's input vectors in the spec's order, each as long as its extent.
struct kernel_inputs {
  std::vector<std::vector<float>> vectors;
};
kernel_inputs make_inputs(const kernel_spec& spec, matrix_shape shape, std::uint64_t seed);

/// Writes the kernel's input file at `path` (replacing any file there): spec.matrices matrices, element
/// (m, i, j) = matrix_value(seed, m, i·cols + j) at byte 4·(m·rows·cols + i·cols + j), little-endian.
/// `threads` fill and write disjoint chunks (pwrite), so the bytes do not depend on how many there are.
/// Returns the bytes written. Throws std::runtime_error naming the path (and the byte offset of a failed
/// write).
std::uint64_t generate_matrix_file(const std::string& path, const kernel_spec& spec, matrix_shape shape,
                                   std::uint64_t seed, unsigned threads);

/// Throws std::runtime_error naming the path when the file cannot be opened, is not a regular file, or does
/// not hold the kernel's matrices at `shape` (input_bytes) — checked before any GPU work.
void check_matrix_file(const std::string& path, const kernel_spec& spec, matrix_shape shape);

/// Reads `count` rows of matrix `matrix`, from row `first_row` on, into dst (count·cols floats). May be
/// called from several threads at once (for distinct dst).
using row_reader =
    std::function<void(std::uint32_t matrix, std::uint64_t first_row, std::uint64_t count, float* dst)>;

/// The rows of an input file, read with pread (buffered): the CPU reference's input. A failed or short read
/// throws run_error naming the path and byte offset. reader() is valid while this object lives.
class matrix_file_rows {
 public:
  matrix_file_rows(const std::string& path, matrix_shape shape);
  void read(std::uint32_t matrix, std::uint64_t first_row, std::uint64_t count, float* dst) const;
  row_reader reader() const;

 private:
  file_table files_;
  matrix_shape shape_;
};

/// The rows as the generator writes them, computed instead of read: the tests' input without a file.
row_reader generated_rows(std::uint64_t seed, matrix_shape shape);

}  // namespace xf::file_kernels
