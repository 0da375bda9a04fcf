// Chunks on the wire: nonblocking sends and receives of fixed-size pieces of the packed bytes.
#include "framework/mpi/wire.hpp"

#include <algorithm>
#include <climits>
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

void chunk_sender::start(const std::byte* packed, std::int64_t bytes, std::int64_t chunk_bytes) {
  header_ = {bytes, chunk_bytes};
  packed_ = packed;
  next_chunk_ = 0;
  requests_.clear();
  requests_.push_back(MPI_REQUEST_NULL);
  XF_MPI_TRY(MPI_Isend(&header_, 2, MPI_INT64_T, dest_, tag_, header_comm_, &requests_.back()), site_);
}

void chunk_sender::packed_until(std::int64_t prefix) {
  const std::int64_t chunk = header_.chunk_bytes, total = chunks();
  for (; next_chunk_ < total; ++next_chunk_) {
    const std::int64_t at = next_chunk_ * chunk, end = std::min(at + chunk, header_.bytes);
    if (end > prefix) break;
    requests_.push_back(MPI_REQUEST_NULL);
    XF_MPI_TRY(MPI_Isend(packed_ + at, static_cast<int>(end - at), MPI_BYTE, dest_, tag_, data_comm_,
                         &requests_.back()),
               site_);
  }
}

void chunk_sender::progress() {
  int done = 0;
  XF_MPI_TRY(MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE),
             site_);
}

void chunk_sender::finish() {
  XF_EXPECTS(next_chunk_ == chunks(), "chunk_sender::finish before every chunk was packed");
  XF_MPI_TRY(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE), site_);
  requests_.clear();
}

chunk_receiver::chunk_receiver(MPI_Comm data_comm, int source, int tag, const call_site& site,
                               std::vector<MPI_Request>& requests)
    : data_comm_(data_comm), source_(source), tag_(tag), site_(site), requests_(requests) {}

void chunk_receiver::post(std::byte* packed, const wire_header& header) {
  header_ = header;
  arrived_chunks_ = 0;
  const std::int64_t total = chunk_count(header.bytes, header.chunk_bytes);
  requests_.assign(static_cast<std::size_t>(total), MPI_REQUEST_NULL);
  for (std::int64_t j = 0; j < total; ++j) {
    const std::int64_t at = j * header.chunk_bytes, end = std::min(at + header.chunk_bytes, header.bytes);
    XF_MPI_TRY(MPI_Irecv(packed + at, static_cast<int>(end - at), MPI_BYTE, source_, tag_, data_comm_,
                         &requests_[static_cast<std::size_t>(j)]),
               site_);
  }
}

void chunk_receiver::wait_until(std::int64_t prefix) {
  const std::int64_t needed =
      std::min(chunk_count(prefix, header_.chunk_bytes), chunk_count(header_.bytes, header_.chunk_bytes));
  if (needed <= arrived_chunks_) return;
  // MPI_Waitall over the chunks not yet seen: chunks of one source and tag arrive in order anyway.
  XF_MPI_TRY(MPI_Waitall(static_cast<int>(needed - arrived_chunks_), requests_.data() + arrived_chunks_,
                         MPI_STATUSES_IGNORE),
             site_);
  arrived_chunks_ = needed;
}

void drain(MPI_Comm data_comm, int source, int tag, const call_site& site, const wire_header& header,
           std::vector<std::byte>& scratch) {
  if (scratch.size() < static_cast<std::size_t>(std::min(header.bytes, header.chunk_bytes)))
    scratch.resize(static_cast<std::size_t>(std::min(header.bytes, header.chunk_bytes)));
  for (std::int64_t at = 0; at < header.bytes; at += header.chunk_bytes) {
    const std::int64_t end = std::min(at + header.chunk_bytes, header.bytes);
    XF_MPI_TRY(MPI_Recv(scratch.data(), static_cast<int>(end - at), MPI_BYTE, source, tag, data_comm,
                        MPI_STATUS_IGNORE),
               site);
  }
}

void check_header(const wire_header& header, const call_site& site) {
  if (header.bytes >= 0 && header.chunk_bytes > 0 && header.chunk_bytes <= INT_MAX) return;
  throw mpi_error(MPI_ERR_OTHER, "a message header of " + std::to_string(header.bytes) +
                                     " bytes in chunks of " + std::to_string(header.chunk_bytes) + " (" +
                                     site.str() + "): not a message of this protocol");
}

}  // namespace xf::mpi::detail
