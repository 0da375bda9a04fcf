// Where a GPU sink's finish writes its result: a path held in the operator's trivially copyable params
// (path_text: GPU operators' params are copied to the device as bytes, so no std::string), and the write.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "framework/files/path_text.hpp"

namespace xf {

/// Writes `bytes` to `path` (replaced whole: `<path>.partial` written, synced and renamed over it, so a
/// reader never sees a partial result); std::runtime_error naming the path, the system's reason and where
/// the partial file was left when it cannot.
void write_result_file(const path_text& path, std::string_view bytes);

}  // namespace xf
