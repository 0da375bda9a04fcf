// pread_copier: the reading threads and their copies.
#include "apps/file_baseline/pread_copier.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

#include "framework/core/cuda_check.hpp"

namespace xf::file_baseline {

pread_copier::pread_copier(const file_table& files, std::uint32_t file, unsigned threads,
                           std::uint64_t request, unsigned buffers, std::string who)
    : files_(files), file_(file), request_(request), who_(std::move(who)) {
  if (threads == 0 || buffers == 0) throw std::invalid_argument("--threads and --buffers must be at least 1");
  if (request == 0 || request % 4096 != 0)
    throw std::invalid_argument("--request must be a multiple of 4KiB");
  for (unsigned t = 0; t < threads; ++t) {
    auto l = std::make_unique<lane>();
    for (unsigned b = 0; b < buffers; ++b) {
      l->buffers.emplace_back(request);
      l->copied.push_back(std::make_unique<cuda_event>());
    }
    lanes_.push_back(std::move(l));
  }
}

pread_copier::~pread_copier() = default;

void pread_copier::read(std::uint64_t begin, std::uint64_t end, std::byte* dst) {
  if (begin % request_ != 0 || end < begin || end > files_.file(file_).size)
    throw std::invalid_argument(
        "pread_copier::read: a range that starts at a whole request, inside the file");
  if (begin == end) return;
  // Thread t reads bytes [begin + t·part, begin + (t+1)·part), part a multiple of the request.
  const std::uint64_t requests = (end - begin + request_ - 1) / request_;
  const std::uint64_t part = (requests + lanes_.size() - 1) / lanes_.size() * request_;
  std::atomic<bool> failed{false};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < lanes_.size(); ++t) {
    threads.emplace_back([&, t] {
      lane& l = *lanes_[t];
      try {
        const std::uint64_t from = std::min(end, begin + t * part);
        const std::uint64_t to = std::min(end, from + part);
        std::size_t next = 0;
        for (std::uint64_t at = from; at < to && !failed.load(); at += request_) {
          const std::uint64_t n = std::min(request_, to - at);
          std::byte* buffer = l.buffers[next].get();
          XF_CUDA_TRY(
              cudaEventSynchronize(l.copied[next]->get()));  // its last copy is done: the buffer is free
          const read_outcome out = files_.read(file_, at, n, buffer, request_);
          if (out.status != file_status::ok) throw files_.failure(file_, out, at, {who_, "", std::nullopt});
          XF_CUDA_TRY(cudaMemcpyAsync(dst + (at - begin), buffer, n, cudaMemcpyHostToDevice, l.stream.get()));
          XF_CUDA_TRY(cudaEventRecord(l.copied[next]->get(), l.stream.get()));
          next = (next + 1) % l.buffers.size();
        }
        XF_CUDA_TRY(cudaStreamSynchronize(l.stream.get()));
      } catch (...) {
        cuda_ok(cudaStreamSynchronize(l.stream.get()));  // no copy still reads a buffer after we leave
        std::lock_guard lock(failure_mutex);
        if (!failed.exchange(true)) failure = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace xf::file_baseline
