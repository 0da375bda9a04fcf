// The shared objects' life: two views of one memfd per object, the protocols' transitions at call, sync and
// fault (coherence.hpp's table), and rolling update's ring of dirty blocks. The fault path (serve,
// make_dirty_rolling) runs in signal context: atomics, spin flags, mprotect and the accelerator's
// signal-safe transfers (or the transfer agent's hand-off) only — no allocation, no mutex.
#include "framework/shared/object_space.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "framework/shared/spin_wait.hpp"

namespace xf::shared {

struct object_space::object {
  object_space* space = nullptr;
  protocol proto = protocol::lazy;
  std::size_t bytes = 0;         ///< as asked
  std::size_t mapped_bytes = 0;  ///< whole pages
  std::size_t range_bytes = 0;   ///< the whole object, or rolling update's block
  std::uint32_t ranges = 0;
  int memfd = -1;
  std::byte* user = nullptr;     ///< the address handed out; its protection follows the ranges' states
  std::byte* library = nullptr;  ///< the same pages, always read-write: every transfer's host side
  std::byte* copy = nullptr;     ///< the accelerator's copy
  std::unique_ptr<std::atomic<range_state>[]> state;
  /// Held while a range changes state (a fault, an eviction, a call): faulting threads wait on it.
  std::unique_ptr<std::atomic_flag[]> busy;
  range_ticket ticket;
  bool watched = false;  ///< registered with the fault handler (lazy and rolling update)

  std::size_t offset(std::uint32_t r) const { return std::size_t{r} * range_bytes; }
  std::size_t length(std::uint32_t r) const { return std::min(range_bytes, mapped_bytes - offset(r)); }
  void lock(std::uint32_t r) { spin_lock(busy[r]); }
  void unlock(std::uint32_t r) { busy[r].clear(std::memory_order_release); }
};

namespace {

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), "shared objects: " + what);
}

/// Maps the pages of [view, view + bytes) for writing where the kernel can (Linux 5.14 and later); a kernel
/// without MADV_POPULATE_WRITE leaves them to be mapped at first touch, which is only slower.
void populate(std::byte* view, std::size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  (void)::madvise(view, bytes, MADV_POPULATE_WRITE);
#else
  (void)view;
  (void)bytes;
#endif
}

int protection_of(host_access a) {
  switch (a) {
    case host_access::none:
      return PROT_NONE;
    case host_access::read:
      return PROT_READ;
    case host_access::read_write:
      return PROT_READ | PROT_WRITE;
  }
  return PROT_NONE;
}

}  // namespace

object_space::object_space(accelerator& device, object_space_options options)
    : device_(device), options_(options), page_bytes_(static_cast<std::size_t>(::sysconf(_SC_PAGESIZE))) {
  if (options_.block_bytes == 0 || options_.block_bytes % page_bytes_ != 0)
    throw std::invalid_argument("shared objects: block_bytes must be a positive multiple of the page size (" +
                                std::to_string(page_bytes_) + " bytes)");
  dirty_.resize(std::size_t{options_.max_rolling_size} + 1);
  if (!device_.transfers_signal_safe()) agent_ = std::make_unique<transfer_agent>(device_);
}

object_space::~object_space() {
  while (!objects_.empty()) release(reinterpret_cast<void*>(objects_.begin()->first));
}

void* object_space::allocate(std::size_t bytes) {
  return allocate(bytes, options_.default_protocol);
}

void* object_space::allocate(std::size_t bytes, protocol p) {
  if (bytes == 0) throw std::invalid_argument("shared objects: an object of 0 bytes");
  auto o = std::make_unique<object>();
  o->space = this;
  o->proto = p;
  o->bytes = bytes;
  o->mapped_bytes = (bytes + page_bytes_ - 1) / page_bytes_ * page_bytes_;
  o->range_bytes = p == protocol::rolling ? options_.block_bytes : o->mapped_bytes;
  o->ranges = static_cast<std::uint32_t>((o->mapped_bytes + o->range_bytes - 1) / o->range_bytes);
  o->memfd = ::memfd_create("xeflow-shared-object", MFD_CLOEXEC);
  if (o->memfd < 0) throw_errno("memfd_create");
  bool library_view_announced = false;
  auto fail = [&](const std::string& what) {
    const int saved = errno;
    if (o->user != nullptr) unmap_user_view(*o);
    if (library_view_announced) device_.host_view_released(o->library, o->mapped_bytes);
    if (o->library != nullptr) ::munmap(o->library, o->mapped_bytes);
    if (o->copy != nullptr) device_.release(o->copy);
    ::close(o->memfd);
    errno = saved;
    throw_errno(what);
  };
  if (::ftruncate(o->memfd, static_cast<off_t>(o->mapped_bytes)) != 0) fail("ftruncate");
  try {
    o->copy = static_cast<std::byte*>(device_.allocate(o->mapped_bytes));
  } catch (...) {
    ::close(o->memfd);
    throw;
  }
  void* m = ::mmap(nullptr, o->mapped_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, o->memfd, 0);
  if (m == MAP_FAILED) fail("mmap");
  o->library = static_cast<std::byte*>(m);
  // One pointer: the user's pages over the accelerator's reservation at the copy's address, where kernels
  // see the accelerator's memory and the CPU these pages.
  m = device_.single_address()
          ? ::mmap(o->copy, o->mapped_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, o->memfd, 0)
          : ::mmap(nullptr, o->mapped_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, o->memfd, 0);
  if (m == MAP_FAILED) fail("mmap");
  o->user = static_cast<std::byte*>(m);
  // Every page mapped now, while both views allow writing: the CPU's first touch of each page would
  // otherwise take a fault of the kernel's own (one a 4 KiB page: 128 MiB written into a new object took
  // five times as long as into a zeroed vector), besides the protocol's faults.
  populate(o->library, o->mapped_bytes);
  populate(o->user, o->mapped_bytes);
  try {
    device_.host_view_created(o->library, o->mapped_bytes);
    library_view_announced = true;
    // Both copies start as zero: equal, as read_only says (the memfd's pages are zero already).
    device_.to_accelerator(o->copy, o->library, o->mapped_bytes);
    device_.finish_to_accelerator();
  } catch (...) {
    if (library_view_announced) device_.host_view_released(o->library, o->mapped_bytes);
    unmap_user_view(*o);
    ::munmap(o->library, o->mapped_bytes);
    device_.release(o->copy);
    ::close(o->memfd);
    throw;
  }
  o->state = std::make_unique<std::atomic<range_state>[]>(o->ranges);
  o->busy = std::make_unique<std::atomic_flag[]>(o->ranges);
  for (std::uint32_t r = 0; r < o->ranges; ++r) {
    o->state[r].store(initial_state(p));
    set_access(*o, r, access_of(p, initial_state(p)));
  }
  if (p != protocol::batch) {
    o->ticket =
        fault_handler::instance().register_range(o->user, o->mapped_bytes, &object_space::on_fault, o.get());
    o->watched = true;
  }
  if (p == protocol::rolling)
    rolling_size_.store(std::min(options_.max_rolling_size, rolling_size_.load() + options_.rolling_step));
  std::byte* address = o->user;
  std::lock_guard lock(objects_mutex_);
  objects_.emplace(reinterpret_cast<std::uintptr_t>(address), std::move(o));
  return address;
}

void object_space::release(void* address) {
  std::unique_ptr<object> o;
  {
    std::lock_guard lock(objects_mutex_);
    const auto it = objects_.find(reinterpret_cast<std::uintptr_t>(address));
    if (it == objects_.end())
      throw std::invalid_argument("shared objects: release of an address allocate did not return");
    o = std::move(it->second);
    objects_.erase(it);
  }
  if (o->watched) fault_handler::instance().unregister_range(o->ticket);
  forget_dirty(*o);
  unmap_user_view(*o);
  device_.host_view_released(o->library, o->mapped_bytes);
  ::munmap(o->library, o->mapped_bytes);
  ::close(o->memfd);
  device_.release(o->copy);
}

void object_space::unmap_user_view(object& o) {
  if (!device_.single_address()) {
    ::munmap(o.user, o.mapped_bytes);
    return;
  }
  // Inside the accelerator's reservation: its placeholder goes back (an inaccessible anonymous mapping),
  // so that no other mapping can take the range before the accelerator frees it.
  if (::mmap(o.user, o.mapped_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1,
             0) == MAP_FAILED)
    std::abort();
}

void* object_space::accelerator_address(const void* host) const {
  const auto at = reinterpret_cast<std::uintptr_t>(host);
  std::lock_guard lock(objects_mutex_);
  auto it = objects_.upper_bound(at);
  if (it != objects_.begin()) {
    --it;
    const object& o = *it->second;
    if (at < it->first + o.bytes) return o.copy + (at - it->first);
  }
  throw std::invalid_argument("shared objects: an address outside every shared object");
}

void object_space::release_to_accelerator() {
  std::lock_guard lock(objects_mutex_);
  for (auto& [address, o] : objects_) apply(*o, coherence_event::call);
  spin_lock(dirty_lock_);
  dirty_count_ = 0;  // every dirty block went with the call
  dirty_lock_.clear(std::memory_order_release);
  device_.finish_to_accelerator();
}

void object_space::sync() {
  device_.wait_for_kernels();
  std::lock_guard lock(objects_mutex_);
  for (auto& [address, o] : objects_) apply(*o, coherence_event::sync);
}

void object_space::apply(object& o, coherence_event e) {
  // A range whose transition changes nothing is left alone (lazy and rolling update's sync, an invalid
  // range at a call): a call or sync then costs what changes, not a lock and an mprotect per range. A range
  // that moves is protected on its own before it moves at a call (a write racing the copy would otherwise
  // be lost with the range marked as sent; no thread should write now, and a buggy one faults instead);
  // ranges whose protection alone changes are protected in runs, one mprotect for neighbours.
  std::uint32_t run_begin = 0, run_end = 0;
  host_access run_access = host_access::none;
  const auto close_run = [&] {
    if (run_end > run_begin) protect(o, run_begin, run_end, run_access);
    run_begin = run_end = 0;
  };
  for (std::uint32_t r = 0; r < o.ranges; ++r) {
    const range_state now = o.state[r].load();
    const transition t = next_state(o.proto, now, e);
    if (t.move == transfer::none && t.next == now) continue;
    const host_access before = access_of(o.proto, now), after = access_of(o.proto, t.next);
    o.lock(r);
    if (t.move == transfer::none) {
      o.state[r].store(t.next);
      o.unlock(r);
      if (after == before || o.proto == protocol::batch) continue;
      if (run_end == r && run_access == after) {
        ++run_end;
      } else {
        close_run();
        run_begin = r;
        run_end = r + 1;
        run_access = after;
      }
      continue;
    }
    if (t.move == transfer::to_accelerator) set_access(o, r, after);
    flush_range(o, r, t.move, false);
    o.state[r].store(t.next);
    if (t.move != transfer::to_accelerator) set_access(o, r, after);
    o.unlock(r);
  }
  close_run();
}

void object_space::protect(object& o, std::uint32_t first, std::uint32_t end, host_access a) {
  const std::size_t begin = o.offset(first), bytes = o.offset(end - 1) + o.length(end - 1) - begin;
  if (::mprotect(o.user + begin, bytes, protection_of(a)) != 0) ::abort();
}

object_space::object* object_space::object_at(const void* address, std::size_t bytes) const {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::lock_guard lock(objects_mutex_);
  auto it = objects_.upper_bound(at);
  if (it == objects_.begin()) return nullptr;
  --it;
  object& o = *it->second;
  if (at >= it->first + o.bytes) return nullptr;
  if (bytes > it->first + o.bytes - at)
    throw std::invalid_argument("shared objects: " + std::to_string(bytes) + " bytes at offset " +
                                std::to_string(at - it->first) + " run past the end of a shared object of " +
                                std::to_string(o.bytes) + " bytes");
  return &o;
}

object_space::host_acquired object_space::acquire_for_host(object& o, std::uint32_t range, bool write,
                                                           bool whole) {
  if (o.proto == protocol::batch) return {};  // never watched: the host's copy counts outside a call
  const range_state now = o.state[range].load();
  const transition t =
      next_state(o.proto, now, write ? coherence_event::cpu_write : coherence_event::cpu_read);
  if (!t.valid) return {};  // the host's pages allow the access already
  host_acquired result;
  if (t.move == transfer::to_host) {
    if (write && whole)
      result.fetch_skipped = true;
    else
      flush_range(o, range, t.move, false);
  }
  // An early flush of this block may still be reading its host bytes: let it finish before they change.
  if (o.proto == protocol::rolling && now == range_state::read_only) device_.finish_to_accelerator();
  o.state[range].store(t.next);
  set_access(o, range, access_of(o.proto, t.next));
  result.queue = o.proto == protocol::rolling && t.next == range_state::dirty;
  return result;
}

template <class Visit>
void object_space::each_range(object& o, const void* address, std::size_t bytes, bool write, Visit&& visit) {
  const auto first = static_cast<std::size_t>(static_cast<const std::byte*>(address) - o.user);
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t at = first + done;
    const auto range = static_cast<std::uint32_t>(at / o.range_bytes);
    const std::size_t range_end = o.offset(range) + o.length(range);
    const std::size_t n = std::min(bytes - done, range_end - at);
    // Whole: from the range's start to its end or the object's, whichever comes first.
    const bool whole = at == o.offset(range) && at + n >= std::min(range_end, o.bytes);
    // Under the range's lock, so that an early flush cannot copy it while the visit writes it.
    o.lock(range);
    host_acquired acquired;
    std::size_t handled = 0;
    try {
      acquired = acquire_for_host(o, range, write, whole);
      handled = visit(o.library + at, done, n);
    } catch (...) {
      // What the visit wrote over bytes never fetched is not the object's: the accelerator's copy is.
      if (acquired.fetch_skipped)
        device_.to_host(o.library + o.offset(range), o.copy + o.offset(range), o.length(range));
      o.unlock(range);
      throw;
    }
    if (handled < n && acquired.fetch_skipped)
      device_.to_host(o.library + at + handled, o.copy + at + handled, range_end - at - handled);
    o.unlock(range);
    if (acquired.queue) make_dirty_rolling(o, range);
    if (handled < n) return;
    done += n;
  }
}

void object_space::memset(void* destination, int value, std::size_t bytes) {
  object* o = object_at(destination, bytes);
  if (o == nullptr) {
    std::memset(destination, value, bytes);
    return;
  }
  each_range(*o, destination, bytes, true, [&](std::byte* view, std::size_t, std::size_t n) {
    std::memset(view, value, n);
    return n;
  });
}

void object_space::memcpy(void* destination, const void* source, std::size_t bytes) {
  object* to = object_at(destination, bytes);
  object* from = object_at(source, bytes);
  if (to == nullptr && from == nullptr) {
    std::memcpy(destination, source, bytes);
  } else if (from == nullptr) {
    each_range(*to, destination, bytes, true, [&](std::byte* view, std::size_t done, std::size_t n) {
      std::memcpy(view, static_cast<const std::byte*>(source) + done, n);
      return n;
    });
  } else if (to == nullptr) {
    each_range(*from, source, bytes, false, [&](std::byte* view, std::size_t done, std::size_t n) {
      std::memcpy(static_cast<std::byte*>(destination) + done, view, n);
      return n;
    });
  } else {
    // Object to object through a buffer a range at a time: never two ranges' locks at once.
    std::vector<std::byte> buffer(std::min(bytes, from->range_bytes));
    for (std::size_t done = 0; done < bytes; done += buffer.size()) {
      const std::size_t n = std::min(buffer.size(), bytes - done);
      each_range(*from, static_cast<const std::byte*>(source) + done, n, false,
                 [&](std::byte* view, std::size_t at, std::size_t k) {
                   std::memcpy(buffer.data() + at, view, k);
                   return k;
                 });
      each_range(*to, static_cast<std::byte*>(destination) + done, n, true,
                 [&](std::byte* view, std::size_t at, std::size_t k) {
                   std::memcpy(view, buffer.data() + at, k);
                   return k;
                 });
    }
  }
}

std::size_t object_space::read_file(int fd, void* destination, std::size_t bytes, std::uint64_t offset) {
  object* o = object_at(destination, bytes);
  std::size_t moved = 0;
  // Returns the bytes read into [to, to + n): fewer at the file's end.
  auto read_into = [&](std::byte* to, std::size_t done, std::size_t n) {
    std::size_t got = 0;
    while (got < n) {
      const ssize_t r = ::pread(fd, to + got, n - got, static_cast<off_t>(offset + done + got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) throw_errno("read into a shared object");
      if (r == 0) break;
      got += static_cast<std::size_t>(r);
    }
    moved += got;
    return got;
  };
  if (o == nullptr)
    read_into(static_cast<std::byte*>(destination), 0, bytes);
  else
    each_range(*o, destination, bytes, true, read_into);
  return moved;
}

std::size_t object_space::write_file(int fd, const void* source, std::size_t bytes, std::uint64_t offset) {
  object* o = object_at(source, bytes);
  auto write_from = [&](const std::byte* from, std::size_t done, std::size_t n) {
    for (std::size_t put = 0; put < n;) {
      const ssize_t r = ::pwrite(fd, from + put, n - put, static_cast<off_t>(offset + done + put));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) throw_errno("write from a shared object");
      put += static_cast<std::size_t>(r);
    }
    return n;
  };
  if (o == nullptr)
    write_from(static_cast<const std::byte*>(source), 0, bytes);
  else
    each_range(*o, source, bytes, false, write_from);
  return bytes;
}

object_space_counters object_space::counters() const {
  return {bytes_to_accelerator_.load(), bytes_to_host_.load(), faults_.load(), evictions_.load()};
}

bool object_space::on_fault(void* context, const fault_access& access) {
  auto& o = *static_cast<object*>(context);
  const auto offset = static_cast<std::size_t>(static_cast<std::byte*>(access.address) - o.user);
  const auto range = static_cast<std::uint32_t>(offset / o.range_bytes);
  // Without the access's kind (not x86-64), a fault on a readable range can only be a write.
  const bool write = access.write_known ? access.write : o.state[range].load() == range_state::read_only;
  return o.space->serve(o, range, write);
}

bool object_space::serve(object& o, std::uint32_t range, bool write) {
  o.lock(range);
  const range_state now = o.state[range].load();
  const transition t =
      next_state(o.proto, now, write ? coherence_event::cpu_write : coherence_event::cpu_read);
  if (!t.valid) {
    // Another thread served this range meanwhile (its pages allow the access now), or the fault is not
    // the protocol's.
    const host_access allowed = access_of(o.proto, now);
    o.unlock(range);
    return write ? allowed == host_access::read_write : allowed != host_access::none;
  }
  if (t.move == transfer::to_host) flush_range(o, range, t.move, true);
  // An early flush of this block may still be reading its host bytes: let it finish before they change.
  if (o.proto == protocol::rolling && now == range_state::read_only) {
    if (agent_)
      agent_->finish_to_accelerator();
    else
      device_.finish_to_accelerator();
  }
  o.state[range].store(t.next);
  set_access(o, range, access_of(o.proto, t.next));
  o.unlock(range);
  faults_.fetch_add(1, std::memory_order_relaxed);
  if (o.proto == protocol::rolling && t.next == range_state::dirty) make_dirty_rolling(o, range);
  return true;
}

void object_space::make_dirty_rolling(object& o, std::uint32_t range) {
  dirty_entry victim{nullptr, 0};
  spin_lock(dirty_lock_);
  dirty_[(dirty_head_ + dirty_count_) % dirty_.size()] = {&o, range};
  ++dirty_count_;
  if (dirty_count_ > rolling_size_.load(std::memory_order_relaxed)) {
    victim = dirty_[dirty_head_];
    dirty_head_ = (dirty_head_ + 1) % dirty_.size();
    --dirty_count_;
  }
  dirty_lock_.clear(std::memory_order_release);
  if (victim.owner == nullptr) return;
  object& v = *victim.owner;
  v.lock(victim.range);
  const transition t = next_state(v.proto, v.state[victim.range].load(), coherence_event::evict);
  if (t.valid) {                                              // still dirty (a call may have sent it since)
    set_access(v, victim.range, access_of(v.proto, t.next));  // read-only first: no write races the copy
    flush_range(v, victim.range, t.move, true);
    v.state[victim.range].store(t.next);
    evictions_.fetch_add(1, std::memory_order_relaxed);
  }
  v.unlock(victim.range);
}

void object_space::flush_range(object& o, std::uint32_t range, transfer move, bool in_fault) {
  const std::size_t at = o.offset(range), bytes = o.length(range);
  // In a fault, an accelerator whose transfers are not async-signal-safe is called by the agent's thread.
  transfer_agent* agent = in_fault ? agent_.get() : nullptr;
  if (move == transfer::to_accelerator) {
    if (agent)
      agent->to_accelerator(o.copy + at, o.library + at, bytes);
    else
      device_.to_accelerator(o.copy + at, o.library + at, bytes);
    bytes_to_accelerator_.fetch_add(bytes, std::memory_order_relaxed);
  } else if (move == transfer::to_host) {
    if (agent)
      agent->to_host(o.library + at, o.copy + at, bytes);
    else
      device_.to_host(o.library + at, o.copy + at, bytes);
    bytes_to_host_.fetch_add(bytes, std::memory_order_relaxed);
  }
}

void object_space::set_access(object& o, std::uint32_t range, host_access a) {
  if (o.proto == protocol::batch) return;  // never protected
  if (::mprotect(o.user + o.offset(range), o.length(range), protection_of(a)) != 0) ::abort();
}

void object_space::forget_dirty(const object& o) {
  spin_lock(dirty_lock_);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < dirty_count_; ++i) {
    const dirty_entry e = dirty_[(dirty_head_ + i) % dirty_.size()];
    if (e.owner != &o) dirty_[(dirty_head_ + kept++) % dirty_.size()] = e;
  }
  dirty_count_ = kept;
  dirty_lock_.clear(std::memory_order_release);
}

}  // namespace xf::shared
