// The file cache's protocol headers compiled as device code (issue 6): the kernel does not include them
// yet, so this object is what keeps them valid CUDA until it does. Built with CUDA only; never run.
#include "framework/files/file_api.hpp"
#include "framework/files/file_fetch.hpp"
#include "framework/files/lra_queue.hpp"
#include "framework/files/readahead_window.hpp"
#include "framework/files/request_ring.hpp"
#include "framework/files/request_slot.hpp"

namespace xf {

__global__ void files_device_compile(file_cache_view view, fetch_block* blocks, fetch_item* items,
                                     fetch_counters* counters, std::byte* out) {
  __shared__ deferred_moves moves;
  fetch_item& item = items[blockIdx.x];
  read_list reads;
  reads.read(file_id{0}, 4096 * blockIdx.x, 100);
  moves.clear();
  const fetch_status status = fetch_step(view, blocks[blockIdx.x], item, 1, 7, counters[blockIdx.x], moves);
  moves.run(0, [](std::byte* d, const std::byte* s, std::uint32_t n, std::uint32_t z) {
    for (std::uint32_t i = 0; i < n; ++i) d[i] = s[i];
    for (std::uint32_t i = 0; i < z; ++i) d[n + i] = std::byte{0};
  });
  moves.finish(view.slots);
  inline_moves at_once;
  if (fetch_step(view, blocks[0], item, 1, 7, counters[0], at_once) == fetch_status::resolved &&
      status == fetch_status::resolved) {
    const file_pages pages = file_pages::paged(&view, &item);
    pages.copy(out, file_id{0}, 0, 100, threadIdx.x, blockDim.x);
    out[0] = static_cast<std::byte>(pages.load<std::uint32_t>(file_id{0}, 4094));
    fetch_release(view, item);
  }
  readahead_window window(readahead_mode::adaptive, 16);
  out[1] = static_cast<std::byte>(window.on_miss(blockIdx.x));
  request_outcome outcome{};
  if (request_done(view.requests[0], 1, &outcome)) out[2] = std::byte{1};
  std::uint64_t old_key = 0;
  out[3] = static_cast<std::byte>(blocks[0].lra.allocate(view.slots, 1, &old_key) & 0xff);
}

}  // namespace xf
