// The input files: element values, the parallel generator, the size check and the rows' reader.
#include "apps/file_kernels/matrix_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "apps/dataset_support/parallel.hpp"
#include "apps/dataset_support/seeded_random.hpp"

namespace xf::file_kernels {
namespace {

static_assert(std::endian::native == std::endian::little, "the files are little-endian float32");

constexpr std::uint64_t golden_gamma = 0x9e3779b97f4a7c15ull;   // splitmix64's increment
constexpr std::uint64_t vector_stream = 100;                    // input vector k: stream 100 + k
constexpr std::uint64_t chunk_floats = std::uint64_t{1} << 20;  // the generator's unit of work: 4 MiB

/// Where stream `stream`'s values start: element i is output i of a splitmix64 sequence from here, so any
/// element is computed directly (no walk from the start).
std::uint64_t stream_base(std::uint64_t seed, std::uint64_t stream) {
  return apps::block_seed(seed, stream, 0);
}

/// The top 24 bits of the element's splitmix64 output, centred: k / 2^23 − 1 for k in [0, 2^24).
float value_at(std::uint64_t base, std::uint64_t index) {
  std::uint64_t state = base + index * golden_gamma;
  const std::uint64_t h = apps::splitmix64(state);
  return static_cast<float>(static_cast<std::int64_t>(h >> 40) - (std::int64_t{1} << 23)) * 0x1p-23f;
}

std::runtime_error file_error(const std::string& path, const std::string& what) {
  return std::runtime_error("file '" + path + "': " + what);
}

}  // namespace

float matrix_value(std::uint64_t seed, std::uint32_t matrix, std::uint64_t index) {
  return value_at(stream_base(seed, matrix), index);
}

float vector_value(std::uint64_t seed, std::uint32_t input, std::uint64_t index) {
  return value_at(stream_base(seed, vector_stream + input), index);
}

kernel_inputs make_inputs(const kernel_spec& spec, matrix_shape shape, std::uint64_t seed) {
  kernel_inputs in;
  for (std::uint32_t k = 0; k < spec.input_count; ++k) {
    const std::uint64_t base = stream_base(seed, vector_stream + k);
    std::vector<float>& v = in.vectors.emplace_back(shape.length(spec.inputs[k].along));
    for (std::uint64_t i = 0; i < v.size(); ++i) v[i] = value_at(base, i);
  }
  return in;
}

std::uint64_t generate_matrix_file(const std::string& path, const kernel_spec& spec, matrix_shape shape,
                                   std::uint64_t seed, unsigned threads) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw file_error(path, std::string("cannot create: ") + std::strerror(errno));
  const std::uint64_t per_matrix = shape.rows * shape.cols;
  const std::uint64_t chunks_per_matrix = (per_matrix + chunk_floats - 1) / chunk_floats;
  const std::uint64_t chunks = chunks_per_matrix * spec.matrices;
  try {
    // Thread t fills and writes chunks t, t + threads, …: each chunk lies inside one matrix.
    apps::run_parallel(threads, [&](unsigned t) {
      std::vector<float> buffer(chunk_floats);
      for (std::uint64_t c = t; c < chunks; c += std::max(1u, threads)) {
        const auto matrix = static_cast<std::uint32_t>(c / chunks_per_matrix);
        const std::uint64_t first = (c % chunks_per_matrix) * chunk_floats;
        const std::uint64_t count = std::min(chunk_floats, per_matrix - first);
        const std::uint64_t base = stream_base(seed, matrix);
        for (std::uint64_t k = 0; k < count; ++k) buffer[k] = value_at(base, first + k);
        const auto* bytes = reinterpret_cast<const char*>(buffer.data());
        const std::uint64_t offset = (matrix * per_matrix + first) * sizeof(float);
        for (std::uint64_t done = 0; done < count * sizeof(float);) {
          const ssize_t n =
              ::pwrite(fd, bytes + done, count * sizeof(float) - done, static_cast<off_t>(offset + done));
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0)
            throw file_error(path, "write failed at byte offset " + std::to_string(offset + done) + ": " +
                                       (n < 0 ? std::strerror(errno) : "no progress"));
          done += static_cast<std::uint64_t>(n);
        }
      }
    });
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) throw file_error(path, std::string("close failed: ") + std::strerror(errno));
  return input_bytes(spec, shape);
}

void check_matrix_file(const std::string& path, const kernel_spec& spec, matrix_shape shape) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw file_error(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  const int status = ::fstat(fd, &st);
  const int error = errno;
  ::close(fd);
  if (status != 0) throw file_error(path, std::string("cannot stat: ") + std::strerror(error));
  if (!S_ISREG(st.st_mode)) throw file_error(path, "not a regular file");
  const std::uint64_t want = input_bytes(spec, shape);
  if (static_cast<std::uint64_t>(st.st_size) != want)
    throw file_error(path, "holds " + std::to_string(st.st_size) + " bytes, but " + std::string(spec.name) +
                               "'s " + std::to_string(spec.matrices) + " float32 matrix(es) of " +
                               std::to_string(shape.rows) + " x " + std::to_string(shape.cols) + " are " +
                               std::to_string(want) +
                               " bytes (give --rows and --cols, or write the file with --generate)");
}

matrix_file_rows::matrix_file_rows(const std::string& path, matrix_shape shape)
    : files_({.direct = direct_io_mode::off, .advise_random = false}), shape_(shape) {
  files_.open(path, {"xeflow-file-kernels reference", "", std::nullopt}, access_advice::sequential);
}

void matrix_file_rows::read(std::uint32_t matrix, std::uint64_t first_row, std::uint64_t count,
                            float* dst) const {
  const std::uint64_t offset = matrix * shape_.matrix_bytes() + first_row * shape_.row_bytes();
  const std::uint64_t bytes = count * shape_.row_bytes();
  const read_outcome out = files_.read(0, offset, bytes, reinterpret_cast<std::byte*>(dst), bytes);
  if (out.status != file_status::ok)
    throw files_.failure(0, out, offset, {"xeflow-file-kernels reference", "", std::nullopt});
}

row_reader matrix_file_rows::reader() const {
  return [this](std::uint32_t matrix, std::uint64_t first_row, std::uint64_t count, float* dst) {
    read(matrix, first_row, count, dst);
  };
}

row_reader generated_rows(std::uint64_t seed, matrix_shape shape) {
  return [seed, shape](std::uint32_t matrix, std::uint64_t first_row, std::uint64_t count, float* dst) {
    const std::uint64_t base = stream_base(seed, matrix);
    for (std::uint64_t k = 0; k < count * shape.cols; ++k)
      dst[k] = value_at(base, first_row * shape.cols + k);
  };
}

}  // namespace xf::file_kernels
