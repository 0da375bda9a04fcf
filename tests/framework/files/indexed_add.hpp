// A test file reader of two stages (framework/model/operator.hpp: gpu_file_reader), shared by the tests of
// the reader on cpu and on the host executor's blocks.
#pragma once

#include <cstring>

#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"

namespace xf {

/// Two stages per frame of u32 elements: stage 0 reads the 8-byte index word at (offset · 8) of the index
/// file and keeps it in the carry; stage 1 reads `count` u32 of the data file at the byte the index word
/// names (mod a window), and the output is input + data. A frame whose first element is 0xDEAD fails.
struct indexed_add {
  static constexpr char class_name[] = "indexed_add";
  struct params {
    path_text index, data;
    std::uint64_t window = 0;  ///< bytes of the data file the index words address
  };
  static void describe(operator_schema<params>& s) {
    s.describe("adds data the index file points at (test reader)");
    s.parsed(&params::index, "index", "index file", std::string(), parse_path_text);
    s.parsed(&params::data, "data", "data file", std::string(), parse_path_text);
    s.bytes(&params::window, "window", "bytes the index words address", 0);
  }
  static void files(const params& p, file_list& out) {
    out.add(p.index, access_advice::random);
    out.add(p.data);
  }
  template <class T>
  XF_HOST_DEVICE static read_step reads(const params& p, const frame_task<T>& task, read_list& list) {
    if (task.stage == 0) {
      list.read(file_id{0}, task.offset * 8, 8);
      return read_step::more;
    }
    if (task.stage == 1) {
      std::uint64_t word = 0;
      std::memcpy(&word, task.carry, 8);
      list.read(file_id{1}, word % p.window / 4 * 4, task.count * sizeof(T));
      return read_step::more;
    }
    return read_step::done;
  }
  template <class T>
  XF_HOST_DEVICE static void compute(const params& p, const frame_task<T>& task) {
    if (task.count > 0 && task.in[0] == T(0xDEAD)) task.fail(7);
    if (task.stage == 0) {
      const std::uint64_t word = task.files->template load<std::uint64_t>(file_id{0}, task.offset * 8);
      std::memcpy(task.carry, &word, 8);
      return;
    }
    std::uint64_t word = 0;
    std::memcpy(&word, task.carry, 8);
    const std::uint64_t at = word % p.window / 4 * 4;
    for (std::uint64_t i = task.thread_id; i < task.count; i += task.thread_count) {
      task.out[i] = task.in[i] + task.files->template load<T>(file_id{1}, at + i * sizeof(T));
    }
  }
};

static_assert(gpu_file_reader<indexed_add>);

}  // namespace xf
