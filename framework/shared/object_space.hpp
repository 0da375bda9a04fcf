// object_space: the ADSM/GMAC paper's shared objects over one accelerator. allocate() hands out one host
// address per object; call() is the release point (what the CPU wrote reaches the accelerator's copy, then
// the kernel is launched), sync() the acquire point (the CPU then sees what the kernel wrote), each object
// kept coherent by its protocol (coherence.hpp): batch, lazy or rolling update.
//
// Host memory: each object is a memfd mapped twice — the view handed out, whose protection follows its
// ranges' states (so the CPU's first read of an invalid range, or first write of a read-only one, faults
// into fault_handler), and a view of the library's own that is always writable: transfers go through it,
// so a range is filled completely before its view lets any thread see it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "framework/shared/accelerator.hpp"
#include "framework/shared/coherence.hpp"
#include "framework/shared/fault_handler.hpp"
#include "framework/shared/transfer_agent.hpp"

namespace xf::shared {

struct object_space_options {
  protocol default_protocol = protocol::rolling;
  /// Rolling update's block: the unit that faults, moves and is evicted (a multiple of the page size).
  std::size_t block_bytes = std::size_t{256} << 10;
  /// Rolling update's dirty blocks allowed before the oldest is flushed early: grows by rolling_step with
  /// every allocation (the paper's adaptive rolling size), up to max_rolling_size.
  std::uint32_t rolling_step = 2;
  std::uint32_t max_rolling_size = 4096;
};

/// Bytes moved and faults served, since the space was made.
struct object_space_counters {
  std::uint64_t bytes_to_accelerator = 0;
  std::uint64_t bytes_to_host = 0;
  std::uint64_t faults = 0;
  std::uint64_t evictions = 0;  ///< rolling update's early flushes
};

class object_space {
 public:
  /// `device` must outlive the space. Objects still allocated when it is destroyed are released.
  explicit object_space(accelerator& device, object_space_options options = {});
  ~object_space();
  object_space(const object_space&) = delete;
  object_space& operator=(const object_space&) = delete;

  /// A shared object of `bytes` (> 0) under `p` (the space's default without it): its host address,
  /// page-aligned. Its contents start as zero on both sides.
  void* allocate(std::size_t bytes);
  void* allocate(std::size_t bytes, protocol p);
  /// Frees an object by the address allocate returned. Throws std::invalid_argument for another address.
  void release(void* object);

  /// The accelerator copy's address of the byte at `host` inside an object (the paper's adsmSafe): what
  /// a kernel that cannot take the shared address gets. Throws std::invalid_argument outside every object.
  void* accelerator_address(const void* host) const;

  /// The release point, then `launch()` (which starts the kernel). No thread may touch the objects from
  /// here until sync() returns.
  template <class Launch>
  void call(Launch&& launch) {
    release_to_accelerator();
    launch();
  }
  /// The transfers of call() without the launch.
  void release_to_accelerator();
  /// The acquire point, once the kernel has finished.
  void sync();

  /// Bulk access, the paper's interposed calls: each goes through the library's view a range at a time
  /// with the protocol's transitions made once per range, not a fault per page; a range it overwrites
  /// whole is not fetched first. Addresses may lie in shared objects or anywhere else (then the call is
  /// the plain one); a span may not run past the end of its object (std::invalid_argument).
  void memset(void* destination, int value, std::size_t bytes);
  void memcpy(void* destination, const void* source, std::size_t bytes);
  /// pread / pwrite between a file and memory, objects included: the bytes moved (short at the file's
  /// end); throws std::system_error on an I/O error.
  std::size_t read_file(int fd, void* destination, std::size_t bytes, std::uint64_t offset);
  std::size_t write_file(int fd, const void* source, std::size_t bytes, std::uint64_t offset);

  /// A typed allocation: `count` elements of T (trivially copyable), zero.
  template <class T>
  T* allocate_array(std::size_t count, protocol p) {
    static_assert(std::is_trivially_copyable_v<T>, "shared objects hold plain bytes");
    return static_cast<T*>(allocate(count * sizeof(T), p));
  }
  template <class T>
  T* allocate_array(std::size_t count) {
    return allocate_array<T>(count, options_.default_protocol);
  }

  object_space_counters counters() const;
  std::uint32_t rolling_size() const { return rolling_size_.load(std::memory_order_relaxed); }

 private:
  struct object;
  struct dirty_entry {
    object* owner;
    std::uint32_t range;
  };

  static bool on_fault(void* context, const fault_access& access);
  bool serve(object& o, std::uint32_t range, bool write);
  void make_dirty_rolling(object& o, std::uint32_t range);
  void flush_range(object& o, std::uint32_t range, transfer move, bool in_fault);
  /// The object holding [address, address + bytes), or null where `address` is in none; throws where the
  /// span starts in one and runs past its end.
  object* object_at(const void* address, std::size_t bytes) const;
  /// Visits [address, address + bytes) of object `o` range by range with the host's copy made current for
  /// reading (`write` false) or owned for writing (`write` true: a range the span covers whole is not
  /// fetched), calling visit(library view pointer, offset into the span, length), which returns the bytes
  /// it handled: fewer ends the walk (a file's end), the rest of a range it did not fetch fetched then.
  template <class Visit>
  void each_range(object& o, const void* address, std::size_t bytes, bool write, Visit&& visit);
  struct host_acquired {
    bool queue = false;          ///< turned dirty under rolling update: the caller queues it
    bool fetch_skipped = false;  ///< a write covering it whole: the host's bytes were not fetched
  };
  /// With the range locked: its transition for a host read or write (fetching it unless a write covers
  /// it whole).
  host_acquired acquire_for_host(object& o, std::uint32_t range, bool write, bool whole);
  void unmap_user_view(object& o);
  /// The call's or the sync's transitions of every range of `o` (objects_mutex_ held).
  void apply(object& o, coherence_event e);
  /// Ranges [first, end) of `o` to access `a`, in one mprotect.
  void protect(object& o, std::uint32_t first, std::uint32_t end, host_access a);
  void set_access(object& o, std::uint32_t range, host_access a);
  void forget_dirty(const object& o);

  accelerator& device_;
  object_space_options options_;
  std::size_t page_bytes_;
  mutable std::mutex objects_mutex_;  ///< allocate, release, call, sync (never in signal context)
  std::map<std::uintptr_t, std::unique_ptr<object>> objects_;
  std::atomic<std::uint32_t> rolling_size_{0};
  // Rolling update's dirty blocks in the order they became dirty: a ring of fixed capacity (no allocation
  // in a fault), guarded by a spin flag that only fault paths and call() take, none while touching a view.
  std::vector<dirty_entry> dirty_;
  std::size_t dirty_head_ = 0, dirty_count_ = 0;
  std::atomic_flag dirty_lock_ = ATOMIC_FLAG_INIT;
  std::atomic<std::uint64_t> bytes_to_accelerator_{0}, bytes_to_host_{0}, faults_{0}, evictions_{0};
  /// Where the accelerator's transfers are not async-signal-safe: the faults' transfers go through it.
  std::unique_ptr<transfer_agent> agent_;
};

}  // namespace xf::shared
