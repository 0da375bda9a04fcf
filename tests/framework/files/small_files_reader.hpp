// A test file reader: one small file per frame, read whole. In a header of its own so the files
// tests' GPU kernel (files_kernel.cu) compiles it in.
#pragma once

#include <cstdint>
#include <string>

#include "framework/files/path_text.hpp"
#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"

namespace xf::test {

/// A reader of many small files: `count` files named <dir>/small<k>; frame o (u8) holds file o % count,
/// its bytes from the start of the frame, zeros after.
struct small_files_reader {
  static constexpr char class_name[] = "small_files_reader";
  struct params {
    path_text dir;
    std::uint32_t count = 0;
  };
  static void describe(operator_schema<params>& s) {
    s.describe("reads one small file per frame (test)");
    s.parsed(&params::dir, "dir", "folder of the files", std::string(), parse_path_text);
    s.param(&params::count, "count", "files", 1u, 1);
  }
  static void files(const params& p, file_list& out) {
    for (std::uint32_t k = 0; k < p.count; ++k) out.add(p.dir.str() + "/small" + std::to_string(k));
  }
  template <class T>
  XF_HOST_DEVICE static read_step reads(const params& p, const frame_task<T>& task, read_list& list) {
    if (task.stage > 0) return read_step::done;
    const auto f = static_cast<std::uint32_t>(task.offset % p.count);
    list.read(file_id{f}, 0, task.file_sizes[f]);
    return read_step::more;
  }
  template <class T>
  XF_HOST_DEVICE static void compute(const params& p, const frame_task<T>& task) {
    const auto f = static_cast<std::uint32_t>(task.offset % p.count);
    auto* out = reinterpret_cast<std::byte*>(task.out);
    const std::uint64_t size = task.file_sizes[f], bytes = task.count * sizeof(T);
    for (std::uint64_t b = task.thread_id; b < bytes; b += task.thread_count) {
      const std::byte* at = b < size ? task.files->at(file_id{f}, b) : nullptr;
      out[b] = at != nullptr ? *at : std::byte{0};
    }
  }
};

}  // namespace xf::test
