// host_file_cache: laying out the cache in host memory and starting its I/O threads.
#include "framework/files/host_file_cache.hpp"

#include <cstdlib>
#include <cstring>

namespace xf {
namespace {

/// Memory aligned for O_DIRECT buffers and cache lines. `zero` for the slots (a zero slot is free); the
/// page bytes and staging are written before they are read, and left untouched they cost no memory (a
/// default cache is 2 GiB, sized for a GPU).
void* allocate(std::size_t bytes, bool zero, std::size_t alignment = 4096) {
  const std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(alignment, rounded);
  XF_EXPECTS(p != nullptr, "host memory for the file cache (" + std::to_string(rounded) + " bytes)");
  if (zero) std::memset(p, 0, rounded);
  return p;
}

}  // namespace

void host_file_cache::freer::operator()(void* p) const { std::free(p); }

host_file_cache::host_file_cache(const file_cache_spec& spec, std::uint32_t blocks,
                                 const std::vector<cache_file>& files, io_service::site_of_request site_of,
                                 std::chrono::milliseconds watchdog)
    : spec_(spec), files_({.direct = spec.direct, .max_direct_alignment = spec.page_bytes}) {
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
  slots_.reset(static_cast<page_slot*>(allocate(std::size_t{slot_count} * sizeof(page_slot), true, 64)));
  pages_.reset(static_cast<std::byte*>(allocate(std::size_t{slot_count} * page, false)));
  table_.assign(first_page_.back(), 0);
  const std::uint32_t request_count = blocks * spec.io_slots_per_block;
  requests_.resize(request_count);
  staging_.reset(static_cast<std::byte*>(allocate(std::size_t{request_count} * spec.max_request, false)));
  std::uint64_t cells = 1;
  while (cells < request_count) cells *= 2;
  cells_.resize(cells);

  int shift = 0;
  while ((std::uint64_t{1} << shift) < page) ++shift;
  view_ = {slots_.get(),      pages_.get(),       slot_count,        static_cast<std::uint32_t>(shift),
           table_.data(),     first_page_.data(), sizes_.data(),     static_cast<std::uint32_t>(sizes_.size()),
           requests_.data(),  staging_.get(),     spec.max_request,
           request_ring_view{cells_.data(), cells, &ring_head_, &ring_tail_}};
  reset_request_ring(view_.ring);

  // Readahead: a buffer per block and a window per block and file, whose mode the file's advice may set.
  const auto ahead_pages = static_cast<std::uint32_t>(spec.readahead / page);
  const bool readahead = ahead_pages > 0 && spec.readahead_policy != readahead_mode::off;
  if (readahead) {
    ahead_.reset(static_cast<std::byte*>(allocate(std::size_t{blocks} * ahead_pages * page, false)));
    for (std::uint32_t b = 0; b < blocks; ++b) {
      for (const cache_file& f : files) {
        const readahead_mode mode = f.advice == access_advice::random       ? readahead_mode::off
                                    : f.advice == access_advice::sequential ? readahead_mode::on
                                                                            : spec.readahead_policy;
        windows_.emplace_back(mode, ahead_pages);
      }
    }
  }

  // LRA: block b owns slots [b·share, (b+1)·share); the slots past blocks·share are the last block's.
  const std::uint32_t share = slot_count / blocks;
  for (std::uint32_t b = 0; b < blocks; ++b) {
    fetch_block block;
    if (readahead) {
      block.ahead = ahead_.get() + std::size_t{b} * ahead_pages * page;
      block.ahead_capacity = ahead_pages;
      block.windows = windows_.data() + std::size_t{b} * files.size();
    }
    block.lra = {b * share, b + 1 == blocks ? slot_count - b * share : share, 0};
    if (spec.replacement == page_replacement::global) block.global_hand = &global_hand_;
    block.first_request = b * spec.io_slots_per_block;
    block.request_count = spec.io_slots_per_block;
    block.reset_requests();
    blocks_.push_back(block);
  }
  io_ = std::make_unique<io_service>(files_, view_.ring,
                                     request_slots_view{requests_, staging_.get(), spec.max_request},
                                     std::move(site_of),
                                     io_service_options{.threads = spec.io_threads, .chunk_bytes = spec.io_chunk,
                                                        .watchdog = watchdog});
}

host_file_cache::~host_file_cache() { io_->stop(); }  // before the memory its threads read goes

}  // namespace xf
