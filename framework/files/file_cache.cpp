// file_cache: laying out the cache in its memory and starting its I/O threads.
#include "framework/files/file_cache.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <span>

namespace xf {
namespace {

/// Host memory for both places: anonymous mappings, not the heap. A mapping's pages are zero and cost
/// nothing until touched (a default cache is 2 GiB, sized for a GPU, and most runs read far less), so a
/// slot asked to start zeroed needs no pass over it; malloc would hand a block this size back from its
/// own mmap too, but debugging allocators (MALLOC_PERTURB_, a sanitizer's) fill or poison all of it.
class host_memory final : public cache_memory {
 public:
  host_memory() = default;
  host_memory(const host_memory&) = delete;
  host_memory& operator=(const host_memory&) = delete;
  ~host_memory() override {
    for (const mapping& m : blocks_) ::munmap(m.at, m.bytes);
  }

  void* allocate(std::size_t bytes, cache_place, bool) override {
    const std::size_t rounded = std::max<std::size_t>((bytes + 4095) / 4096 * 4096, 4096);
    void* p = ::mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    XF_EXPECTS(p != MAP_FAILED, "host memory for the file cache (" + std::to_string(rounded) +
                                    " bytes): " + std::strerror(errno));
    blocks_.push_back({p, rounded});
    return p;
  }
  void upload(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void download(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  const char* kernel_name() const override { return "host memory"; }
  bool kernel_on_host() const override { return true; }

 private:
  struct mapping {
    void* at;
    std::size_t bytes;
  };
  std::vector<mapping> blocks_;
};

}  // namespace

std::unique_ptr<cache_memory> host_cache_memory() {
  return std::make_unique<host_memory>();
}

file_cache::file_cache(const file_cache_spec& spec, std::uint32_t blocks,
                       const std::vector<cache_file>& files, io_service::site_of_request site_of,
                       std::chrono::milliseconds watchdog, std::unique_ptr<cache_memory> memory)
    : spec_(spec),
      memory_(memory ? std::move(memory) : host_cache_memory()),
      files_({.direct = spec.direct, .max_direct_alignment = spec.page_bytes}),
      block_count_(blocks) {
  const std::uint64_t page = spec.page_bytes;
  const auto slot_count = static_cast<std::uint32_t>(spec.size / page);
  XF_EXPECTS(blocks > 0 && slot_count >= blocks, "a file cache of at least one page per block");
  XF_EXPECTS(spec.io_slots_per_block >= 1 && spec.io_slots_per_block <= 32, "1 to 32 request slots a block");

  first_page_.push_back(0);
  for (const cache_file& f : files) {
    const std::uint32_t id = files_.open(f.path, f.site, f.advice);
    sizes_.push_back(files_.file(id).size);
    first_page_.push_back(first_page_.back() + (sizes_.back() + page - 1) / page);
  }
  // Kernel memory: what only the blocks touch.
  auto* slots = allocate<page_slot>(slot_count, cache_place::kernel, true);
  auto* pages = allocate<std::byte>(std::size_t{slot_count} * page, cache_place::kernel, false);
  auto* table = allocate<std::uint32_t>(first_page_.back(), cache_place::kernel, true);
  auto* first_page = allocate<std::uint64_t>(first_page_.size(), cache_place::kernel, false);
  memory_->upload(first_page, first_page_.data(), first_page_.size() * sizeof(std::uint64_t));
  auto* file_size =
      allocate<std::uint64_t>(std::max<std::size_t>(sizes_.size(), 1), cache_place::kernel, false);
  memory_->upload(file_size, sizes_.data(), sizes_.size() * sizeof(std::uint64_t));
  auto* ring_head = allocate<std::uint64_t>(1, cache_place::kernel, true);
  auto* global_hand = allocate<std::uint64_t>(1, cache_place::kernel, true);

  // Shared memory: the request slots (zero: no request yet), their staging, the ring's cells.
  const std::uint32_t request_count = blocks * spec.io_slots_per_block;
  auto* requests = allocate<request_slot>(request_count, cache_place::shared, true);
  auto* staging =
      allocate<std::byte>(std::size_t{request_count} * spec.max_request, cache_place::shared, false);
  std::uint64_t cells = 1;
  while (cells < request_count) cells *= 2;
  auto* ring_cells = allocate<request_ring_cell>(cells, cache_place::shared, false);
  for (std::uint64_t i = 0; i < cells; ++i)
    ring_cells[i] = request_ring_cell{i, 0};  // every cell at round one

  int shift = 0;
  while ((std::uint64_t{1} << shift) < page) ++shift;
  view_ = {
      slots,    pages,      slot_count,       static_cast<std::uint32_t>(shift),
      table,    first_page, file_size,        static_cast<std::uint32_t>(sizes_.size()),
      requests, staging,    spec.max_request, request_ring_view{ring_cells, cells, ring_head, &ring_tail_}};

  // Readahead: a buffer per block and a window per block and file, whose mode the file's advice may set.
  const auto ahead_pages = static_cast<std::uint32_t>(spec.readahead / page);
  const bool readahead = ahead_pages > 0 && spec.readahead_policy != readahead_mode::off;
  std::byte* ahead = nullptr;
  readahead_window* windows = nullptr;
  if (readahead) {
    ahead = allocate<std::byte>(std::size_t{blocks} * ahead_pages * page, cache_place::kernel, false);
    std::vector<readahead_window> host_windows;
    for (std::uint32_t b = 0; b < blocks; ++b) {
      for (const cache_file& f : files) {
        const readahead_mode mode = f.advice == access_advice::random       ? readahead_mode::off
                                    : f.advice == access_advice::sequential ? readahead_mode::on
                                                                            : spec.readahead_policy;
        host_windows.emplace_back(mode, ahead_pages);
      }
    }
    windows =
        allocate<readahead_window>(std::max<std::size_t>(host_windows.size(), 1), cache_place::kernel, false);
    memory_->upload(windows, host_windows.data(), host_windows.size() * sizeof(readahead_window));
  }

  // LRA: block b owns slots [b·share, (b+1)·share); the slots past blocks·share are the last block's.
  const std::uint32_t share = slot_count / blocks;
  std::vector<fetch_block> host_blocks;
  for (std::uint32_t b = 0; b < blocks; ++b) {
    fetch_block block;
    if (readahead) {
      block.ahead = ahead + std::size_t{b} * ahead_pages * page;
      block.ahead_capacity = ahead_pages;
      block.windows = windows + std::size_t{b} * files.size();
    }
    block.lra = {b * share, b + 1 == blocks ? slot_count - b * share : share, 0};
    if (spec.replacement == page_replacement::global) block.global_hand = global_hand;
    block.first_request = b * spec.io_slots_per_block;
    block.request_count = spec.io_slots_per_block;
    block.reset_requests();
    host_blocks.push_back(block);
  }
  blocks_ = allocate<fetch_block>(blocks, cache_place::kernel, false);
  memory_->upload(blocks_, host_blocks.data(), host_blocks.size() * sizeof(fetch_block));

  io_ = std::make_unique<io_service>(
      files_, view_.ring, request_slots_view{std::span(requests, request_count), staging, spec.max_request},
      std::move(site_of),
      io_service_options{.threads = io_threads_of(spec), .chunk_bytes = spec.io_chunk, .watchdog = watchdog});
}

file_cache::~file_cache() {
  io_->stop();
}  // before the memory its threads read goes

fetch_block& file_cache::block(std::uint32_t b) const {
  XF_EXPECTS(memory_->kernel_on_host(),
             "a block's share read on the host while it lives in " + std::string(memory_->kernel_name()));
  XF_EXPECTS(b < block_count_, "a block of the cache");
  return blocks_[b];
}

std::uint32_t file_cache::block_room() const {
  return spec_.replacement == page_replacement::global ? view_.slot_count : view_.slot_count / block_count_;
}

}  // namespace xf
