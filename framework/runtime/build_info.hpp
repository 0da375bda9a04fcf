// What this program was built from: the project's version, the git commit and the build type. The values
// live in one generated file (build_info.cpp, from build_info.cpp.in) that only this declaration's users
// link: a new commit recompiles that file alone.
#pragma once

#include <string_view>

namespace xf {

struct build_info {
  std::string_view version;  ///< the project's version (meson.build's project(version:))
  /// The commit's short hash at build time, "-dirty" appended when the checkout had uncommitted changes;
  /// "unknown" for a build outside a git checkout (a source tarball).
  std::string_view commit;
  std::string_view build_type;  ///< meson's buildtype: debug, debugoptimized, release, ...
};

/// This program's build. Never throws.
build_info this_build() noexcept;

}  // namespace xf
