// A topology's shared object: the working copy under its protocol, the version buffers, the horizon.
#include "framework/shared/versioned_object.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>
#include <stdexcept>

namespace xf::shared {
namespace {

constexpr std::uint64_t page_bytes = 4096;

std::uint64_t round_up(std::uint64_t n, std::uint64_t to) {
  return (n + to - 1) / to * to;
}

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

}  // namespace

/// The object space's accelerator for one object: its "accelerator copy" is the last published content, in
/// host memory, and every range the protocol moves there is noted by block, so the publish that follows
/// knows what changed. Moves are memcpy and notes atomic stores: both may run in the fault handler (rolling
/// update's early flush).
class versioned_object::dirty_log final : public accelerator {
 public:
  dirty_log(std::uint64_t bytes, std::uint64_t block_bytes)
      : block_bytes_(block_bytes),
        blocks_(static_cast<std::uint32_t>((bytes + block_bytes - 1) / block_bytes)),
        touched_(new std::atomic<std::uint8_t>[blocks_]) {
    for (std::uint32_t k = 0; k < blocks_; ++k) touched_[k].store(0, std::memory_order_relaxed);
  }

  void* allocate(std::size_t bytes) override {
    mirror_ = static_cast<std::byte*>(::operator new[](bytes, std::align_val_t{page_bytes}));
    std::memset(mirror_, 0, bytes);
    return mirror_;
  }
  void release(void* copy) noexcept override {
    ::operator delete[](static_cast<std::byte*>(copy), std::align_val_t{page_bytes});
    if (copy == mirror_) mirror_ = nullptr;
  }
  void to_accelerator(void* copy, const void* host, std::size_t bytes) override {
    std::memcpy(copy, host, bytes);
    const std::uint64_t at = static_cast<std::uint64_t>(static_cast<std::byte*>(copy) - mirror_);
    for (std::uint64_t k = at / block_bytes_; k < blocks_ && k * block_bytes_ < at + bytes; ++k)
      touched_[k].store(1, std::memory_order_release);
  }
  void finish_to_accelerator() override {}
  void to_host(void* host, const void* copy, std::size_t bytes) override { std::memcpy(host, copy, bytes); }
  bool transfers_signal_safe() const override { return true; }

  const std::byte* mirror() const { return mirror_; }
  /// Whether block k moved since the last look (and forgets it).
  bool take(std::uint32_t k) { return touched_[k].exchange(0, std::memory_order_acq_rel) != 0; }

 private:
  std::uint64_t block_bytes_;
  std::uint32_t blocks_;
  std::unique_ptr<std::atomic<std::uint8_t>[]> touched_;
  std::byte* mirror_ = nullptr;
};

versioned_object::versioned_object(versioned_object_config config, version_words* words)
    : config_(std::move(config)), words_(words) {
  if (config_.bytes == 0) throw std::invalid_argument("shared object '" + config_.name + "': 0 bytes");
  if (config_.versions == 0 || config_.versions > max_object_versions)
    throw std::invalid_argument("shared object '" + config_.name + "': versions must be 1 to " +
                                std::to_string(max_object_versions));
  if (config_.written && config_.versions < 2)
    throw std::invalid_argument("shared object '" + config_.name + "': a written object needs 2 versions");
  if (config_.block_bytes == 0 || config_.block_bytes % page_bytes != 0)
    throw std::invalid_argument("shared object '" + config_.name + "': block size not a multiple of 4 KiB");
  if (!config_.initial.empty() && config_.initial.size() != config_.bytes)
    throw std::invalid_argument("shared object '" + config_.name + "': initial bytes of another size");
  // Batch and lazy update move whole objects; rolling update blocks.
  block_bytes_ =
      config_.proto == protocol::rolling ? config_.block_bytes : round_up(config_.bytes, page_bytes);
  blocks_ = static_cast<std::uint32_t>((config_.bytes + block_bytes_ - 1) / block_bytes_);
  stride_ = round_up(config_.bytes, page_bytes);
  buffers_ =
      static_cast<std::byte*>(::operator new[](stride_* config_.versions, std::align_val_t{page_bytes}));
  std::memset(buffers_, 0, stride_ * config_.versions);
  block_version_.assign(blocks_, 0);
  first_of_.assign(config_.versions, no_version_offset);

  log_ = std::make_unique<dirty_log>(config_.bytes, block_bytes_);
  object_space_options options;
  options.default_protocol = config_.proto;
  options.block_bytes = static_cast<std::size_t>(block_bytes_);
  space_ = std::make_unique<object_space>(*log_, options);
  working_ = static_cast<std::byte*>(space_->allocate(config_.bytes));
  if (!config_.initial.empty()) space_->memcpy(working_, config_.initial.data(), config_.bytes);
  // Version 0: the initial bytes, in buffer 0, for frames from offset 0 on.
  space_->release_to_accelerator();
  space_->sync();
  for (std::uint32_t k = 0; k < blocks_; ++k) (void)log_->take(k);
  std::memcpy(buffers_, log_->mirror(), config_.bytes);
  first_of_[0] = 0;
  std::memset(static_cast<void*>(words_), 0, sizeof(version_words));
  for (std::uint32_t i = 0; i < max_object_versions; ++i) words_->first[i] = no_version_offset;
  words_->number[0] = 0;
  store_release(words_->first[0], std::uint64_t{0});
  // A written object's frame 0 waits for promise(1): the writer may still publish at offset 0 before it
  // handles any frame (a first version known only once it started), and publishes for frames after the
  // one it handles from then on.
  horizon_ = config_.written ? 0 : no_version_offset;
  store_release(words_->horizon, horizon_);
}

versioned_object::~versioned_object() {
  if (space_ && working_ != nullptr) space_->release(working_);
  ::operator delete[](buffers_, std::align_val_t{page_bytes});
}

void versioned_object::attach_replica(std::unique_ptr<version_replica> replica) {
  // Every buffer, not only version 0's: a writer may have published in its on_start, before the executor
  // made the replica (and nothing publishes while it is attached: the workers have not started).
  replica_ = std::move(replica);
  replica_->copy(0, buffers_, stride_ * config_.versions);
  replica_->finish();
}

version_table_view versioned_object::host_view() const {
  return {words_, buffers_, stride_, config_.bytes, config_.versions};
}

version_table_view versioned_object::replica_view() const {
  version_table_view v = host_view();
  if (replica_) v.buffers = replica_->buffers();
  return v;
}

std::uint64_t versioned_object::publish(std::uint64_t offset,
                                        const std::function<void(std::uint64_t)>& wait_for_readers) {
  const std::uint64_t start = now_ns();
  std::lock_guard publishing(publish_mutex_);
  {
    std::lock_guard lock(horizon_mutex_);
    if (offset < horizon_)
      throw std::invalid_argument("shared object '" + config_.name + "': a version published at offset " +
                                  std::to_string(offset) + ", below the horizon " + std::to_string(horizon_) +
                                  " (frames below it may already have read the version before)");
  }
  const std::uint32_t versions = config_.versions;
  const std::uint64_t n = published_.load(std::memory_order_relaxed) + 1;
  const std::uint32_t b = static_cast<std::uint32_t>(n % versions);
  // Buffer b holds version n - versions (or nothing yet): its readers are those of frames below the first
  // offset of the version after it. Its entry goes first, so no reader picks the buffer while it changes.
  const bool fresh = n < versions;
  if (!fresh) {
    const std::uint64_t waited_from = now_ns();
    wait_for_readers(first_of_[(n - versions + 1) % versions]);
    wait_ns_.fetch_add(now_ns() - waited_from, std::memory_order_relaxed);
  }
  store_release(words_->first[b], no_version_offset);

  // The protocol's release point: what the writer wrote since the last publish reaches the mirror, noted
  // by block. sync() is the acquire point batch update needs to send everything again next time (lazy and
  // rolling update move nothing there).
  space_->release_to_accelerator();
  space_->sync();
  std::uint64_t written = 0;
  for (std::uint32_t k = 0; k < blocks_; ++k)
    if (log_->take(k)) {
      block_version_[k] = n;
      written += std::min(block_bytes_, config_.bytes - std::uint64_t{k} * block_bytes_);
    }

  // Buffer b from version n - versions to n: the blocks that changed since, in runs of neighbours.
  std::byte* buffer = buffers_ + b * stride_;
  std::uint64_t moved = 0;
  for (std::uint32_t k = 0; k < blocks_;) {
    if (!fresh && block_version_[k] + versions <= n) {
      ++k;
      continue;
    }
    std::uint32_t end = k + 1;
    while (end < blocks_ && (fresh || block_version_[end] + versions > n)) ++end;
    const std::uint64_t at = std::uint64_t{k} * block_bytes_;
    const std::uint64_t length = std::min(std::uint64_t{end} * block_bytes_, config_.bytes) - at;
    std::memcpy(buffer + at, log_->mirror() + at, length);
    if (replica_) replica_->copy(b * stride_ + at, buffer + at, length);
    moved += length;
    k = end;
  }
  if (replica_) replica_->finish();

  store_relaxed(words_->number[b], n);
  store_release(words_->first[b], offset);
  first_of_[b] = offset;
  published_.store(n, std::memory_order_relaxed);
  {
    std::lock_guard lock(horizon_mutex_);
    raise_horizon(offset + 1);
  }
  bytes_moved_.fetch_add(moved, std::memory_order_relaxed);
  bytes_written_.fetch_add(written, std::memory_order_relaxed);
  publish_ns_.fetch_add(now_ns() - start, std::memory_order_relaxed);
  return n;
}

void versioned_object::promise(std::uint64_t offset) {
  std::lock_guard lock(horizon_mutex_);
  raise_horizon(offset);
}

void versioned_object::finished_frame(std::uint64_t offset) {
  std::lock_guard lock(horizon_mutex_);
  if (offset < frontier_) return;
  finished_.insert(offset);
  while (!finished_.empty() && *finished_.begin() == frontier_) {
    finished_.erase(finished_.begin());
    ++frontier_;
  }
  raise_horizon(frontier_ + 1);
}

void versioned_object::close() {
  std::lock_guard lock(horizon_mutex_);
  horizon_ = no_version_offset;
  store_release(words_->horizon, horizon_);
}

std::uint64_t versioned_object::horizon() const {
  std::lock_guard lock(horizon_mutex_);
  return horizon_;
}

void versioned_object::raise_horizon(std::uint64_t h) {
  if (h <= horizon_) return;
  horizon_ = h;
  store_release(words_->horizon, h);
}

versioned_object_counters versioned_object::counters() const {
  versioned_object_counters c;
  c.versions = published_.load(std::memory_order_relaxed);
  c.bytes_moved = bytes_moved_.load(std::memory_order_relaxed);
  c.bytes_written = bytes_written_.load(std::memory_order_relaxed);
  c.wait_ns = wait_ns_.load(std::memory_order_relaxed);
  c.publish_ns = publish_ns_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace xf::shared
