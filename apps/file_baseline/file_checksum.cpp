// file_checksum: the host's pass over the file, and its walk of the random pattern's chains.
#include "apps/file_baseline/file_checksum.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "apps/file_baseline/read_chain.hpp"

namespace xf::file_baseline {

std::uint64_t file_checksum(const file_table& files, std::uint32_t id, std::uint64_t size,
                            std::uint64_t request, const std::string& who) {
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

chain_sum chain_checksum(const file_table& files, std::uint32_t id, std::uint64_t size, std::uint32_t blocks,
                         std::uint32_t reads, std::uint64_t request, std::uint64_t page_bytes,
                         unsigned threads, const std::string& who) {
  // A direct file's reads start and end on its alignment: read the aligned span around each request and
  // take the request out of it.
  const std::uint64_t align = std::max<std::uint64_t>(files.file(id).alignment, 1);
  const std::uint64_t capacity = (request + 2 * align + 8 + align - 1) / align * align;
  const unsigned workers = std::max(1u, std::min(threads, blocks));
  std::vector<chain_sum> partial(workers);
  std::vector<std::exception_ptr> errors(workers);
  const auto walk = [&](unsigned worker) {
    void* raw = nullptr;
    if (posix_memalign(&raw, 4096, capacity) != 0)
      throw std::runtime_error("host memory for the chains' check");
    std::unique_ptr<std::byte, decltype(&std::free)> span(static_cast<std::byte*>(raw), &std::free);
    chain_sum& mine = partial[worker];
    for (std::uint32_t block = worker; block < blocks; block += workers) {
      std::uint64_t at = chain_first_offset(block, size, page_bytes);
      for (std::uint32_t step = 0; step < reads; ++step) {
        const std::uint64_t n = chain_read_bytes(at, size, request);
        const std::uint64_t first = at / align * align;
        const read_outcome out = files.read(id, first, at + n - first, span.get(), capacity);
        if (out.status != file_status::ok) throw files.failure(id, out, first, {who, "", std::nullopt});
        std::byte* data = span.get() + (at - first);
        std::memset(data + n, 0, (n + 7) / 8 * 8 - n);
        std::uint64_t word0 = 0;
        for (std::uint64_t w = 0; w < (n + 7) / 8; ++w) {
          std::uint64_t word;
          std::memcpy(&word, data + 8 * w, 8);
          if (w == 0) word0 = word;
          mine.sum += word;
        }
        mine.bytes += n;
        at = chain_next_offset(word0, block, step, size, request);
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned w = 1; w < workers; ++w)
    pool.emplace_back([&, w] {
      try {
        walk(w);
      } catch (...) {
        errors[w] = std::current_exception();
      }
    });
  try {
    walk(0);
  } catch (...) {
    errors[0] = std::current_exception();
  }
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  chain_sum total;
  for (const chain_sum& p : partial) {
    total.sum += p.sum;
    total.bytes += p.bytes;
  }
  return total;
}

}  // namespace xf::file_baseline
