// Result files of GPU sinks.
#include "operators/sinks/result_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace xf {

void write_result_file(const path_text& path, std::string_view bytes) {
  const std::string target = path.text;
  const std::string temporary = target + ".partial";
  auto fail = [&](const std::string& what) {
    const std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    throw std::runtime_error("result file '" + target + "': " + what + ": " + reason);
  };
  std::FILE* f = std::fopen(temporary.c_str(), "wb");
  if (f == nullptr) fail("cannot create " + temporary);
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !written) fail("cannot write " + temporary);
  if (std::rename(temporary.c_str(), target.c_str()) != 0) fail("cannot rename " + temporary);
}

}  // namespace xf
