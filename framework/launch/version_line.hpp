// What `xeflow-run --version` prints: the build (version, commit, build type) and what it was built with.
#pragma once

#include <string>

namespace xf {

/// One line, "xeflow-run 0.1.0 (commit 1a2b3c4d5e6f, release build, CUDA 12.4, MPI yes)": the CUDA
/// runtime's version, or "without CUDA" in a build without it; "MPI no" in a build without MPI (no ranked
/// runs). Needs no GPU. Never throws for a missing GPU or driver.
std::string version_line();

}  // namespace xf
