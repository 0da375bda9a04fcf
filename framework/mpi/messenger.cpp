// The messenger: the route of each call, the first part's exchange and the receive's rules (truncation, a
// message ending inside an element, overlapping receive types), and the host route; the device routes are
// device_transfer's.
#include "framework/mpi/messenger.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>

#include "framework/core/errors.hpp"
#include "framework/datatype/pack.hpp"
#include "framework/datatype/traversal.hpp"
#include "framework/mpi/mpi_error.hpp"
#include "framework/mpi/wire.hpp"
#if XF_HAVE_CUDA
#include "framework/mpi/device_transfer.hpp"
#endif

namespace xf::mpi {

namespace {
using i64 = std::int64_t;

/// Elements of one instance whose packed bytes are exactly `bytes`, or -1 where `bytes` ends inside an
/// element. Packed offsets grow with the element's index, so a binary search over locate() finds it.
i64 elements_in(const dt::committed_type& c, i64 bytes) {
  const dt::serialized_view v = c.view();
  const i64 elements = c.root().elements;
  i64 low = 0, high = elements;  // the first element whose offset is >= bytes is in [low, high]
  while (low < high) {
    const i64 mid = low + (high - low) / 2;
    if (dt::locate(v, 1, mid).out < bytes)
      low = mid + 1;
    else
      high = mid;
  }
  const i64 at = low == elements ? c.root().size : dt::locate(v, 1, low).out;
  return at == bytes ? low : -1;
}
}  // namespace

std::string_view name_of(route r) {
  switch (r) {
    case route::host:
      return "host";
    case route::staged:
      return "staged";
    case route::cuda_aware:
      return "cuda_aware";
  }
  return "?";
}

std::string transfer_report::describe() const {
  std::string s = std::string(name_of(taken)) + ", " + std::to_string(bytes) + " B in " +
                  std::to_string(chunks) + (chunks == 1 ? " chunk" : " chunks");
  if (!packing.empty()) s += ", " + packing;
  if (partial) s += ", ends inside an instance";
  return s;
}

messenger::messenger(MPI_Comm comm, messenger_options options) : options_(options) {
  XF_EXPECTS(
      options_.chunk_bytes == 0 ||
          (options_.chunk_bytes >= 16 && options_.chunk_bytes <= INT_MAX - detail::header_bytes),
      "chunk_bytes is " + std::to_string(options_.chunk_bytes) + ": 0 (automatic) or 16 to 2^31 - 17 bytes");
  const call_site site{};
  XF_MPI_TRY(MPI_Comm_dup(comm, &header_comm_), site);
  XF_MPI_TRY(MPI_Comm_dup(comm, &data_comm_), site);
  // Errors come back as codes, which XF_MPI_TRY turns into exceptions, instead of aborting the job.
  XF_MPI_TRY(MPI_Comm_set_errhandler(header_comm_, MPI_ERRORS_RETURN), site);
  XF_MPI_TRY(MPI_Comm_set_errhandler(data_comm_, MPI_ERRORS_RETURN), site);
  XF_MPI_TRY(MPI_Comm_rank(data_comm_, &rank_), site);
  XF_MPI_TRY(MPI_Comm_size(data_comm_, &size_), site);
  awareness_ = detect_cuda_awareness();
}

messenger::~messenger() {
  int finalized = 0;
  if (MPI_Finalized(&finalized) != MPI_SUCCESS || finalized) return;
  if (header_comm_ != MPI_COMM_NULL) (void)MPI_Comm_free(&header_comm_);
  if (data_comm_ != MPI_COMM_NULL) (void)MPI_Comm_free(&data_comm_);
}

i64 messenger::chunk_for(i64 bytes) const {
  return options_.chunk_bytes > 0 ? options_.chunk_bytes : detail::automatic_chunk_bytes(bytes);
}

route messenger::route_for(const message_type& t, i64 count, const void* buf) const {
#if XF_HAVE_CUDA
  if (detail::on_device(t, count, buf)) {
    switch (options_.device) {
      case device_route::automatic:
        return awareness_.aware ? route::cuda_aware : route::staged;
      case device_route::staged:
        return route::staged;
      case device_route::cuda_aware:
        XF_EXPECTS(awareness_.aware,
                   "the CUDA-aware route was forced, but the MPI library is " + awareness_.reason);
        return route::cuda_aware;
    }
  }
#else
  (void)t, (void)count, (void)buf;
#endif
  return route::host;
}

transfer_report messenger::send(const message_type& t, i64 count, const void* buf, int dest, int tag) {
  const call_site site{rank_, dest, tag};
  const dt::committed_type& c = t.committed();
  transfer_report r;
  r.bytes = dt::packed_bytes(c, count);  // checks the count
  XF_EXPECTS(r.bytes == 0 || buf != nullptr, "send: a null buffer for " + std::to_string(r.bytes) + " bytes");
  r.elements = count * c.root().elements;
  r.instances = count;
  r.peer = dest;
  r.tag = tag;
  r.taken = route_for(t, count, buf);
  detail::chunk_sender out(header_comm_, data_comm_, dest, tag, site, requests_);
  if (r.taken == route::host) {
    if (host_staging_.size() < static_cast<std::size_t>(detail::header_bytes + r.bytes))
      host_staging_.resize(static_cast<std::size_t>(detail::header_bytes + r.bytes));
    const detail::wire_header header{r.bytes, chunk_for(r.bytes)};
    std::memcpy(host_staging_.data(), &header, sizeof header);
    // One thread packs and drives MPI's progress alike, so packing first and then sending overlaps nothing
    // less than interleaving would.
    if (r.bytes > 0) dt::pack(c, t.plan(), count, buf, host_staging_.data() + detail::header_bytes);
    out.start(host_staging_.data(), header);
    out.packed_until(r.bytes);
  } else {
#if XF_HAVE_CUDA
    if (!device_) device_ = std::make_shared<detail::device_transfer>();
    r.packing = device_->send(t, count, buf, r.taken, chunk_for(r.bytes), out);
#endif
  }
  out.finish();
  r.chunks = out.chunks();
  return r;
}

transfer_report messenger::recv(const message_type& t, i64 count, void* buf, int source, int tag) {
  call_site site{rank_, source, tag};
  const dt::committed_type& c = t.committed();
  const i64 capacity = dt::packed_bytes(c, count);
  XF_EXPECTS(capacity == 0 || buf != nullptr,
             "recv: a null buffer for " + std::to_string(capacity) + " bytes");
  if (const std::optional<i64> at = t.overlap(count))
    throw precondition_error("recv: " + std::to_string(count) + " instances of " + dt::describe(t.type()) +
                             " write the byte at displacement " + std::to_string(*at) +
                             " twice; MPI calls a receive into such a type erroneous (nothing was received)");
  transfer_report r;
  r.taken = route_for(t, count, buf);

  detail::first_part first = detail::match_first(header_comm_, source, tag, site);
  // The rest comes from the sender and with the tag that the first part matched (MPI_ANY_SOURCE,
  // MPI_ANY_TAG).
  site.peer = r.peer = first.source;
  site.tag = r.tag = first.tag;
  std::byte* message = nullptr;
  if (r.taken == route::host) {
    const i64 room = std::max(first.bytes, detail::header_bytes + capacity);
    if (host_staging_.size() < static_cast<std::size_t>(room))
      host_staging_.resize(static_cast<std::size_t>(room));
    message = host_staging_.data();
  } else {
#if XF_HAVE_CUDA
    if (!device_) device_ = std::make_shared<detail::device_transfer>();
    message = device_->first_buffer(r.taken, first.bytes, capacity);
#endif
  }
  const detail::wire_header header = detail::receive_first(first, message, site);
  r.bytes = header.bytes;
  r.chunks = detail::chunk_count(header.bytes, header.chunk_bytes);

  const auto refuse = [&](int error_class, const std::string& why) {
    detail::drain(data_comm_, r.peer, r.tag, site, header, host_staging_);
    throw mpi_error(error_class, "recv (" + site.str() + "): a message of " + std::to_string(header.bytes) +
                                     " bytes " + why + " (received and dropped)");
  };
  if (header.bytes > capacity)
    refuse(MPI_ERR_TRUNCATE, "is longer than the receive's " + std::to_string(capacity) + " bytes (" +
                                 std::to_string(count) + " × " + std::to_string(c.root().size) +
                                 "-byte instances of " + dt::describe(t.type()) + "): truncated");
  const i64 size = c.root().size;
  const i64 full = size > 0 ? header.bytes / size : 0;
  const i64 tail_elements = size > 0 ? elements_in(c, header.bytes - full * size) : 0;
  if (tail_elements < 0)
    refuse(MPI_ERR_TYPE, "ends inside an element of " + dt::describe(t.type()) + " (" +
                             std::to_string(header.bytes - full * size) + " bytes into instance " +
                             std::to_string(full) + ")");
  r.instances = full;
  r.partial = tail_elements > 0;
  r.elements = full * c.root().elements + tail_elements;

  detail::chunk_receiver in(data_comm_, r.peer, r.tag, site, requests_);
  if (r.taken == route::host) {
    std::byte* const packed = message + detail::header_bytes;
    in.post(packed, header);
    in.finish();
    // Unpacks the elements that arrived: whole instances by the plan, then the first elements of one more
    // by the traversal's runs.
    auto* user = static_cast<std::byte*>(buf);
    if (full > 0) dt::unpack(c, t.plan(), full, packed, user);
    const bool whole = !r.partial || dt::for_each_run(c.view(), full + 1, full * c.root().elements,
                                                      r.elements, [&](i64 in_at, i64 out_at, i64 bytes) {
                                                        std::memcpy(user + in_at, packed + out_at,
                                                                    static_cast<std::size_t>(bytes));
                                                      });
    XF_EXPECTS(whole, "recv: the committed type's runs do not cover the elements received");
  } else {
#if XF_HAVE_CUDA
    r.packing = device_->recv(t, full, tail_elements, buf, r.taken, options_.unpack, header, in);
#endif
  }
  return r;
}

}  // namespace xf::mpi
