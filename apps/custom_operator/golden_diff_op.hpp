// An example GPU file reader (framework/model/operator.hpp: gpu_file_reader): each frame comes out as the
// byte-wise XOR of itself and the bytes at the same stream position of a golden file, so a stream equal to
// the file comes out all zeros and every other byte shows where they differ. Stage 0 declares the one range
// of the file the frame needs; the framework makes it resident (the file cache on the kernel's blocks, a
// pread on: cpu) and compute reads it through task.files — compute never waits for I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <xeflow/operator.hpp>

namespace example {

struct golden_diff_op {
  static constexpr char class_name[] = "golden_diff";

  struct params {
    xf::path_text golden;
  };

  static void describe(xf::operator_schema<params>& s) {
    s.describe(
        "XORs each frame with the golden file's bytes at the same stream position (zeros where equal)");
    s.parsed(&params::golden, "golden", "the file the stream is compared against", std::string(),
             xf::parse_path_text);
    s.check_params([](const params& p) {
      return p.golden.empty() ? std::string("golden: name a file") : std::string();
    });
  }

  /// The files it opens at start: file_id{0} is the golden file. Read in stream order: readahead at once.
  static void files(const params& p, xf::file_list& out) { out.add(p.golden, xf::access_advice::sequential); }

  /// Where frame `offset` lies in the stream: offset × the frame size (every frame but the last is whole).
  template <class T>
  static XF_HOST_DEVICE std::uint64_t position(const xf::frame_task<T>& task) {
    return task.offset * task.out_capacity;
  }

  /// One stage: the frame's bytes of the golden file, as far as the file reaches.
  template <class T>
  static XF_HOST_DEVICE xf::read_step reads(const params&, const xf::frame_task<T>& task,
                                            xf::read_list& list) {
    if (task.stage > 0) return xf::read_step::done;
    const std::uint64_t size = task.file_sizes[0], at = position(task), bytes = task.count * sizeof(T);
    if (at < size) list.read(xf::file_id{0}, at, bytes < size - at ? bytes : size - at);
    return xf::read_step::more;  // a stage with no range (past the file's end) still runs compute
  }

  template <class T>
  static XF_HOST_DEVICE void compute(const params&, const xf::frame_task<T>& task) {
    const auto* in = reinterpret_cast<const std::byte*>(task.in);
    auto* out = reinterpret_cast<std::byte*>(task.out);
    const std::uint64_t at = position(task), bytes = task.count * sizeof(T);
    for (std::uint64_t b = task.thread_id; b < bytes; b += task.thread_count) {
      const std::byte* golden = task.files->at(xf::file_id{0}, at + b);  // null past the file's end
      out[b] = in[b] ^ (golden != nullptr ? *golden : std::byte{0});
    }
  }
};

}  // namespace example
