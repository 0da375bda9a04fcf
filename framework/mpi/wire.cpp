// Parts on the wire: the first message (header and chunk 0) matched by MPI_Mprobe, the rest nonblocking.
#include "framework/mpi/wire.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>

#include "framework/core/errors.hpp"

namespace xf::mpi::detail {

chunk_sender::chunk_sender(MPI_Comm header_comm, MPI_Comm data_comm, int dest, int tag, const call_site& site,
                           std::vector<MPI_Request>& requests)
    : header_comm_(header_comm),
      data_comm_(data_comm),
      dest_(dest),
      tag_(tag),
      site_(site),
      requests_(requests) {}

void chunk_sender::send(const std::byte* at, std::int64_t bytes, MPI_Comm comm) {
  requests_.push_back(MPI_REQUEST_NULL);
  XF_MPI_TRY(MPI_Isend(at, static_cast<int>(bytes), MPI_BYTE, dest_, tag_, comm, &requests_.back()), site_);
}

void chunk_sender::start(const std::byte* message, const wire_header& header) {
  header_ = header;
  message_ = message;
  next_chunk_ = 0;
  requests_.clear();
  if (header.bytes == 0) {
    send(message_, header_bytes, header_comm_);
    next_chunk_ = 1;
  }
}

void chunk_sender::packed_until(std::int64_t prefix) {
  const std::int64_t chunk = header_.chunk_bytes, total = std::max<std::int64_t>(1, chunks());
  for (; next_chunk_ < total; ++next_chunk_) {
    const std::int64_t at = next_chunk_ * chunk, end = std::min(at + chunk, header_.bytes);
    if (end > prefix) break;
    if (next_chunk_ == 0)
      send(message_, header_bytes + end, header_comm_);
    else
      send(message_ + header_bytes + at, end - at, data_comm_);
  }
}

void chunk_sender::progress() {
  int done = 0;
  XF_MPI_TRY(MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE),
             site_);
}

void chunk_sender::finish() {
  XF_EXPECTS(next_chunk_ == std::max<std::int64_t>(1, chunks()),
             "chunk_sender::finish before every chunk was packed");
  XF_MPI_TRY(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE), site_);
  requests_.clear();
}

first_part match_first(MPI_Comm header_comm, int source, int tag, const call_site& site) {
  first_part f;
  MPI_Status status{};
  XF_MPI_TRY(MPI_Mprobe(source, tag, header_comm, &f.handle, &status), site);
  MPI_Count count = 0;
  XF_MPI_TRY(MPI_Get_elements_x(&status, MPI_BYTE, &count), site);
  f.bytes = count;
  f.source = status.MPI_SOURCE;
  f.tag = status.MPI_TAG;
  return f;
}

wire_header receive_first(first_part& first, std::byte* into, const call_site& site) {
  XF_MPI_TRY(MPI_Mrecv(into, static_cast<int>(first.bytes), MPI_BYTE, &first.handle, MPI_STATUS_IGNORE),
             site);
  wire_header h;
  if (first.bytes >= header_bytes) std::memcpy(&h, into, sizeof h);
  if (first.bytes >= header_bytes && h.bytes >= 0 && h.chunk_bytes > 0 &&
      h.chunk_bytes <= INT_MAX - header_bytes && first_message_bytes(h) == first.bytes)
    return h;
  throw mpi_error(MPI_ERR_OTHER, "a first message of " + std::to_string(first.bytes) + " bytes announcing " +
                                     std::to_string(h.bytes) + " bytes in chunks of " +
                                     std::to_string(h.chunk_bytes) + " (" + site.str() +
                                     "): not a message of this protocol");
}

chunk_receiver::chunk_receiver(MPI_Comm data_comm, int source, int tag, const call_site& site,
                               std::vector<MPI_Request>& requests)
    : data_comm_(data_comm), source_(source), tag_(tag), site_(site), requests_(requests) {}

void chunk_receiver::post(std::byte* packed, const wire_header& header) {
  header_ = header;
  const std::int64_t total = chunk_count(header.bytes, header.chunk_bytes);
  arrived_chunks_ = std::min<std::int64_t>(1, total);
  requests_.assign(static_cast<std::size_t>(std::max<std::int64_t>(0, total - 1)), MPI_REQUEST_NULL);
  for (std::int64_t j = 1; j < total; ++j) {
    const std::int64_t at = j * header.chunk_bytes, end = std::min(at + header.chunk_bytes, header.bytes);
    XF_MPI_TRY(MPI_Irecv(packed + at, static_cast<int>(end - at), MPI_BYTE, source_, tag_, data_comm_,
                         &requests_[static_cast<std::size_t>(j - 1)]),
               site_);
  }
}

void chunk_receiver::wait_until(std::int64_t prefix) {
  const std::int64_t needed =
      std::min(chunk_count(prefix, header_.chunk_bytes), chunk_count(header_.bytes, header_.chunk_bytes));
  if (needed <= arrived_chunks_) return;
  // MPI_Waitall over the chunks not yet seen: chunks of one source and tag arrive in order anyway.
  XF_MPI_TRY(MPI_Waitall(static_cast<int>(needed - arrived_chunks_), requests_.data() + arrived_chunks_ - 1,
                         MPI_STATUSES_IGNORE),
             site_);
  arrived_chunks_ = needed;
}

void drain(MPI_Comm data_comm, int source, int tag, const call_site& site, const wire_header& header,
           std::vector<std::byte>& scratch) {
  if (scratch.size() < static_cast<std::size_t>(std::min(header.bytes, header.chunk_bytes)))
    scratch.resize(static_cast<std::size_t>(std::min(header.bytes, header.chunk_bytes)));
  for (std::int64_t at = header.chunk_bytes; at < header.bytes; at += header.chunk_bytes) {
    const std::int64_t end = std::min(at + header.chunk_bytes, header.bytes);
    XF_MPI_TRY(MPI_Recv(scratch.data(), static_cast<int>(end - at), MPI_BYTE, source, tag, data_comm,
                        MPI_STATUS_IGNORE),
               site);
  }
}

}  // namespace xf::mpi::detail
