// file_checksum: the host's pass over the file.
#include "apps/file_baseline/file_checksum.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace xf::file_baseline {

std::uint64_t file_checksum(const file_table& files, std::uint32_t id, std::uint64_t size, std::uint64_t request,
                            const std::string& who) {
  void* raw = nullptr;
  if (posix_memalign(&raw, 4096, request) != 0) throw std::runtime_error("host memory for the checksum");
  std::unique_ptr<std::byte, decltype(&std::free)> chunk(static_cast<std::byte*>(raw), &std::free);
  std::uint64_t sum = 0;
  for (std::uint64_t at = 0; at < size; at += request) {
    const std::uint64_t n = std::min(request, size - at);
    const read_outcome out = files.read(id, at, n, chunk.get(), request);
    if (out.status != file_status::ok) throw files.failure(id, out, at, {who, "", std::nullopt});
    std::memset(chunk.get() + n, 0, (n + 7) / 8 * 8 - n);
    for (std::uint64_t w = 0; w < (n + 7) / 8; ++w) {
      std::uint64_t word;
      std::memcpy(&word, chunk.get() + 8 * w, 8);
      sum += word;
    }
  }
  return sum;
}

}  // namespace xf::file_baseline
