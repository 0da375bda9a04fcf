// Files streamed through pack and unpack under xeflow-run, and what comes out checked against the host
// datatype engine (dt::pack, dt::unpack): the end-to-end test runs it on the host executor, the GPU test
// on the device. Three chains: the Y-Z face of 32³ arrays of doubles, packed and unpacked; 64-byte records
// whose fields are packed 128 a frame; and 32×32 matrices transposed by a type of overlapping columns and
// transposed back.
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "framework/datatype/committed_type.hpp"
#include "framework/datatype/pack.hpp"
#include "tests/support/run_checks.hpp"

namespace xf::test {

class datatype_pipeline {
 public:
  static constexpr std::uint64_t frames = 12;
  static constexpr std::uint64_t array_bytes = 32 * 32 * 32 * 8, record_frame_bytes = 8192,
                                 matrix_bytes = 32 * 32 * 8;

  /// Writes the input files and the topology; `stem` keeps two pipelines of one process apart.
  explicit datatype_pipeline(const std::string& stem)
      : dir_(std::filesystem::temp_directory_path() /
             ("xeflow-datatypes-" + std::to_string(getpid()) + "-" + stem)) {
    std::filesystem::create_directories(dir_);
    write_random(path("arrays.bin"), frames * array_bytes, 1);
    write_random(path("records.bin"), frames * record_frame_bytes, 2);
    write_random(path("matrices.bin"), frames * matrix_bytes, 3);
    std::ofstream(path("pipeline.yaml")) << topology();
  }
  ~datatype_pipeline() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  datatype_pipeline(const datatype_pipeline&) = delete;
  datatype_pipeline& operator=(const datatype_pipeline&) = delete;

  /// xeflow-run on the topology, then `extra` ("--host", or "--set runtime.executor=device").
  std::vector<std::string> command(const std::vector<std::string>& extra) const {
    std::vector<std::string> args{xeflow_run(), path("pipeline.yaml"), "-q", "--stats", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  /// Every output file holds what the host engine makes of the inputs.
  void check() const {
    const dt::committed_type face = dt::commit(face_type()), record = dt::commit(record_type()),
                             column = dt::commit(column_type());
    const std::vector<std::byte> arrays = read(path("arrays.bin")), records = read(path("records.bin")),
                                 matrices = read(path("matrices.bin"));
    const std::vector<std::byte> faces = read(path("faces.bin")), planes = read(path("planes.bin")),
                                 fields = read(path("fields.bin")), transposed = read(path("transposed.bin")),
                                 restored = read(path("restored.bin"));
    const std::uint64_t face_bytes = 32 * 32 * 8, field_bytes = 128 * 32;
    REQUIRE(faces.size() == frames * face_bytes);
    REQUIRE(planes.size() == arrays.size());
    REQUIRE(fields.size() == frames * field_bytes);
    REQUIRE(transposed.size() == matrices.size());
    for (std::uint64_t o = 0; o < frames; ++o) {
      CAPTURE(o);
      std::vector<std::byte> expected(face_bytes);
      dt::pack(face, 1, arrays.data() + o * array_bytes, expected.data());
      CHECK(std::memcmp(faces.data() + o * face_bytes, expected.data(), face_bytes) == 0);
      std::vector<std::byte> plane(array_bytes, std::byte{0});
      dt::unpack(face, 1, expected.data(), plane.data());
      CHECK(std::memcmp(planes.data() + o * array_bytes, plane.data(), array_bytes) == 0);
      std::vector<std::byte> packed_fields(field_bytes);
      dt::pack(record, 128, records.data() + o * record_frame_bytes, packed_fields.data());
      CHECK(std::memcmp(fields.data() + o * field_bytes, packed_fields.data(), field_bytes) == 0);
      std::vector<std::byte> columns(matrix_bytes);
      dt::pack(column, 32, matrices.data() + o * matrix_bytes, columns.data());
      CHECK(std::memcmp(transposed.data() + o * matrix_bytes, columns.data(), matrix_bytes) == 0);
      // And the columns are the transpose, element by element: the engine's answer is the right one.
      const std::byte* m = matrices.data() + o * matrix_bytes;
      const std::byte* t = transposed.data() + o * matrix_bytes;
      bool transposes = true;
      for (int i = 0; i < 32; ++i)
        for (int j = 0; j < 32; ++j)
          transposes &= std::memcmp(t + (i * 32 + j) * 8, m + (j * 32 + i) * 8, 8) == 0;
      CHECK(transposes);
    }
    CHECK(restored == matrices);  // the columns cover the matrix: unpack gives back every byte
  }

 private:
  static dt::datatype face_type() {
    return dt::subarray({32, 32, 32}, {32, 32, 1}, {0, 0, 7}, dt::array_order::c, dt::primitive::f64);
  }
  /// A 64-byte record's fields: an i32 id, three f32 coordinates, a char tag and 15 flag bytes (32 bytes).
  static dt::datatype record_type() {
    return dt::resized(dt::struct_type({1, 3, 1, 15}, {0, 8, 30, 40},
                                       {dt::primitive::i32, dt::primitive::f32, dt::primitive::character,
                                        dt::primitive::u8}),
                       0, 64);
  }
  static dt::datatype column_type() { return dt::resized(dt::vector(32, 1, 32, dt::primitive::f64), 0, 8); }

  std::string topology() const {
    const auto sink = [&](const char* name, const char* topic) {
      return std::string("  ") + name + "_file: {class: file_sink, inputs: [" + topic +
             "], params: {path: " + path(std::string(name) + ".bin") + "}}\n";
    };
    return "name: datatype_pipeline\n"
           "topics:\n"
           "  arrays: {frame_size: 256KiB, capacity: 8, element: f64}\n"
           "  faces: {frame_size: 8KiB, capacity: 8, element: f64}\n"
           "  planes: {frame_size: 256KiB, capacity: 8, element: f64}\n"
           "  records: {frame_size: 8KiB, capacity: 8, element: u8}\n"
           "  fields: {frame_size: 4KiB, capacity: 8, element: u8}\n"
           "  matrices: {frame_size: 8KiB, capacity: 8, element: f64}\n"
           "  transposed: {frame_size: 8KiB, capacity: 8, element: f64}\n"
           "  restored: {frame_size: 8KiB, capacity: 8, element: f64}\n"
           "datatypes:\n"
           "  face: {subarray: {sizes: [32, 32, 32], subsizes: [32, 32, 1], starts: [0, 0, 7], of: f64}}\n"
           "  record: {resized: {lb: 0, extent: 64, of: {struct: {blocklengths: [1, 3, 1, 15], "
           "displacements: [0, 8, 30, 40], types: [i32, f32, char, u8]}}}}\n"
           "  column: {resized: {lb: 0, extent: 8, of: {vector: {count: 32, blocklength: 1, stride: 32, "
           "of: f64}}}}\n"
           "operators:\n"
           "  array_source: {class: file_source, outputs: [arrays], params: {path: " +
           path("arrays.bin") +
           "}}\n"
           "  pack_faces: {class: pack, inputs: [arrays], outputs: [faces], params: {type: face}}\n"
           "  unpack_faces: {class: unpack, inputs: [faces], outputs: [planes], params: {type: face}}\n" +
           sink("faces", "faces") + sink("planes", "planes") +
           "  record_source: {class: file_source, outputs: [records], params: {path: " + path("records.bin") +
           "}}\n"
           "  pack_fields: {class: pack, inputs: [records], outputs: [fields], params: {type: record, count: "
           "128}}\n" +
           sink("fields", "fields") +
           "  matrix_source: {class: file_source, outputs: [matrices], params: {path: " +
           path("matrices.bin") +
           "}}\n"
           "  transpose: {class: pack, inputs: [matrices], outputs: [transposed], params: {type: column, "
           "count: 32}}\n"
           "  transpose_back: {class: unpack, inputs: [transposed], outputs: [restored], "
           "params: {type: column, count: 32}}\n" +
           sink("transposed", "transposed") + sink("restored", "restored");
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static void write_random(const std::string& file, std::uint64_t bytes, std::uint64_t seed) {
    std::mt19937_64 random(seed);
    std::vector<std::uint64_t> words(bytes / 8);
    for (auto& w : words) w = random();
    std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(words.data()), bytes);
  }

  static std::vector<std::byte> read(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    const std::string text(std::istreambuf_iterator<char>(in), {});
    std::vector<std::byte> bytes(text.size());
    std::memcpy(bytes.data(), text.data(), text.size());
    return bytes;
  }

  std::filesystem::path dir_;
};

}  // namespace xf::test
