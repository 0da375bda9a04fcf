// A request slot: where a reader that misses pages writes what it needs, and where a host I/O
// thread answers. Two 64-byte lines, one writer each: the request line is written by the reader
// (a GPU block, or a host thread in host mode), the completion line by the I/O service. The slot's number
// travels through the request ring (request_ring.hpp), whose release/acquire pair publishes the request
// line; the completion line publishes itself with `done_seq`, stored last.
//
// A slot is reused: its reader writes request k+1 only after it saw completion k, so `seq` (the slot's
// request count, from 1) tells a waiting reader whether the completion line is its own.
//
// The bytes go to the slot's staging area (pinned on the GPU executor): slot i owns
// [i * staging_bytes, (i + 1) * staging_bytes), so reuse needs no other acknowledgement.
#pragma once

#include <cstdint>
#include <type_traits>

#include "framework/core/exec_space.hpp"
#include "framework/core/system_atomic.hpp"

namespace xf {

/// What a completion says. Errors carry no text here: the I/O service keeps the message (path, byte offset,
/// errno) for the run's error, and the reader only needs to stop waiting.
enum class file_status : std::int32_t {
  ok = 0,
  io_error = 1,   ///< pread failed (the service's error names the errno)
  truncated = 2,  ///< the file ended before its size at open
  timed_out = 3,  ///< the I/O watchdog gave up on it
  stopped = 4,    ///< the run stopped before the request was served
};

/// Line 0, written by the reader before it rings; read by the I/O thread that pops the slot.
struct alignas(64) file_request {
  std::uint64_t seq;           ///< this slot's request count, from 1
  std::uint64_t offset;        ///< byte offset in the file (a multiple of the cache's page size)
  std::uint64_t bytes;         ///< bytes wanted, at most the slot's staging bytes, ending at most at the size
  std::uint64_t frame_offset;  ///< the offset of the frame the reader works on (names a fault)
  std::uint32_t file;          ///< run-global file id (file_table)
  std::uint32_t op;            ///< the reader's operator index (names a fault)
};

/// Line 1, written by the I/O service; polled by the reader.
struct alignas(64) file_completion {
  std::uint64_t done_seq;  ///< the `seq` of the request this answers; stored last (release)
  std::uint64_t bytes;     ///< bytes delivered into staging (short only at the end of the file)
  std::int32_t status;     ///< a file_status
};

struct request_slot {
  file_request request;
  file_completion completion;
};

static_assert(sizeof(request_slot) == 128, "one line per writer");
static_assert(std::is_trivially_copyable_v<request_slot>, "lives in pinned memory both processors read");

/// The reader writes its request into its slot (plain stores: the ring's push releases them). Returns the
/// request's seq, to wait on.
XF_HOST_DEVICE inline std::uint64_t write_request(request_slot& slot, std::uint32_t file,
                                                  std::uint64_t offset, std::uint64_t bytes, std::uint32_t op,
                                                  std::uint64_t frame_offset) {
  const std::uint64_t seq = slot.request.seq + 1;
  slot.request.seq = seq;
  slot.request.offset = offset;
  slot.request.bytes = bytes;
  slot.request.frame_offset = frame_offset;
  slot.request.file = file;
  slot.request.op = op;
  return seq;
}

/// The I/O service answers: bytes and status first, then `done_seq` with release, so a reader that sees
/// its seq also sees the bytes in staging.
XF_HOST_DEVICE inline void complete_request(request_slot& slot, std::uint64_t seq, file_status status,
                                            std::uint64_t bytes) {
  system_atomic_ref<std::uint64_t>(slot.completion.bytes).store(bytes, mo::memory_order_relaxed);
  system_atomic_ref<std::int32_t>(slot.completion.status)
      .store(static_cast<std::int32_t>(status), mo::memory_order_relaxed);
  system_atomic_ref<std::uint64_t>(slot.completion.done_seq).store(seq, mo::memory_order_release);
}

struct request_outcome {
  file_status status;
  std::uint64_t bytes;
};

/// The reader polls: true once request `seq` is answered (acquire: the staged bytes are visible).
XF_HOST_DEVICE inline bool request_done(request_slot& slot, std::uint64_t seq, request_outcome* outcome) {
  if (system_atomic_ref<std::uint64_t>(slot.completion.done_seq).load(mo::memory_order_acquire) != seq) {
    return false;
  }
  outcome->bytes = system_atomic_ref<std::uint64_t>(slot.completion.bytes).load(mo::memory_order_relaxed);
  outcome->status = static_cast<file_status>(
      system_atomic_ref<std::int32_t>(slot.completion.status).load(mo::memory_order_relaxed));
  return true;
}

}  // namespace xf
