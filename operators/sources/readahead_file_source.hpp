// readahead_file_source: files streamed into a topic by the kernel's blocks through the file
// cache — the GPUfs readahead paper's reader as a source. Placed on gpu it runs in the kernel's blocks
// (today the host executor's; the device's file cache comes next): each block claims a run of consecutive
// offsets and reads their frames in order, so its misses run sequentially and the readahead window
// follows them. Placed on cpu it reads the same frames with a pread each.
#pragma once

#include <cstdint>
#include <string>

#include "framework/files/file_frames.hpp"
#include "framework/files/file_list.hpp"
#include "framework/files/path_text.hpp"
#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"

namespace xf {

/// Up to 8 paths, written "a.bin" or "a.bin; b.bin; …" (trimmed; a path cannot hold ';').
struct path_list {
  static constexpr std::uint32_t capacity = 8;
  path_text paths[capacity];
  std::uint32_t count = 0;
};

/// operator_schema::parsed's parser for a path_list: "" or the problem.
const char* parse_path_list(const std::string& text, path_list& out);
/// operator_schema::parsed's parser for an access_advice ("sequential", "normal", "random").
const char* parse_access_advice(const std::string& text, access_advice& out);

struct readahead_file_source {
  static constexpr char class_name[] = "readahead_file_source";

  struct params {
    path_list files;
    access_advice access = access_advice::sequential;
  };

  static void describe(operator_schema<params>& s) {
    s.describe(
        "streams files as frames through the file cache (GPU blocks read runs of frames with readahead); "
        "each "
        "file's last frame may be short; frames never span files");
    s.parsed(&params::files, "path", "the file, or files separated by ';', streamed in that order",
             std::string(), parse_path_list);
    s.parsed(
        &params::access, "access",
        "how the blocks walk the files: sequential (readahead from the first miss), normal (readahead once "
        "misses run sequentially), random (no readahead)",
        "sequential", parse_access_advice);
    s.check_params([](const params& p) {
      return p.files.count == 0 ? std::string("path: name at least one file") : std::string();
    });
  }

  static void files(const params& p, file_list& out) {
    for (std::uint32_t f = 0; f < p.files.count; ++f) out.add(p.files.paths[f], p.access);
  }

  static std::uint64_t frame_count(const params& p, const std::uint64_t* sizes, std::uint64_t capacity) {
    return frames_of_files(sizes, p.files.count, capacity);
  }
  static XF_HOST_DEVICE std::uint64_t frame_bytes(const params& p, const std::uint64_t* sizes,
                                                  std::uint64_t capacity, std::uint64_t offset) {
    return place_of_frame(sizes, p.files.count, capacity, offset).bytes;
  }

  template <class T>
  static XF_HOST_DEVICE read_step reads(const params& p, const frame_task<T>& task, read_list& list) {
    if (task.stage > 0) return read_step::done;
    const frame_place at = place_of_frame(task.file_sizes, p.files.count, task.out_capacity, task.offset);
    list.read(file_id{at.file}, at.offset, at.bytes);
    return read_step::more;
  }

  template <class T>
  static XF_HOST_DEVICE void compute(const params& p, const frame_task<T>& task) {
    const frame_place at = place_of_frame(task.file_sizes, p.files.count, task.out_capacity, task.offset);
    task.files->copy(reinterpret_cast<std::byte*>(task.out), file_id{at.file}, at.offset, at.bytes,
                     task.thread_id, task.thread_count);
  }
};

static_assert(gpu_file_source<readahead_file_source>);

}  // namespace xf
