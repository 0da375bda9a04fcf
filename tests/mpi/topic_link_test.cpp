// A topic carried between two ranks (framework/mpi/topic_link.hpp): rank 0 writes topic A, read by a local
// group and by the link's sender; rank 1's link receiver publishes into topic B, read by two groups. Every
// group must see every offset once, in order, with the writer's bytes, fields and voids, and the end of
// stream. Capacity 1 on either side is the tightest case of the credit. Both ranks run each case.
#include <doctest/doctest.h>
#include <mpi.h>

#include <cstring>

#include "framework/mpi/topic_link.hpp"
#include "tests/support/topic_fixture.hpp"
#include "topics/topic_driver.hpp"

namespace {

using namespace xf;
using namespace xf::test;

constexpr std::uint64_t salt = 77;

bool void_at(std::uint64_t offset) {
  return offset % 11 == 5;
}
/// Valid bytes at `offset`: from 16 to the whole 4 KiB frame, now and then empty.
std::uint64_t bytes_at(std::uint64_t offset) {
  return offset % 13 == 6 ? 0 : 16 + pattern(offset, 3) % (4096 - 15) / 8 * 8;
}

void write_carried(std::byte* data, std::uint64_t offset, std::uint64_t bytes) {
  if (bytes == 0) return;
  const std::uint64_t p = pattern(offset, salt), q = ~p;
  std::memcpy(data, &offset, 8);
  std::memcpy(data + bytes - 8, &q, 8);
  if (bytes >= 24) std::memcpy(data + 8, &p, 8);
}
bool carried_intact(const std::byte* data, std::uint64_t offset, std::uint64_t bytes) {
  if (bytes == 0) return true;
  std::uint64_t first = 0, second = 0, last = 0;
  const std::uint64_t p = pattern(offset, salt);
  std::memcpy(&first, data, 8);
  std::memcpy(&last, data + bytes - 8, 8);
  if (bytes >= 24) std::memcpy(&second, data + 8, 8);
  return first == offset && last == ~p && (bytes < 24 || second == p);
}

/// Reads group `group` to the end, checking each offset; returns the offsets seen.
std::uint64_t read_in_order(const topic_view& view, std::uint32_t group, const std::string& who,
                            const std::atomic<bool>& abort, failure_log& failures) {
  for (std::uint64_t expected = 0;; ++expected) {
    const delivery d = next_frame(view, group, abort);
    if (d.ended) {
      if (d.offset != expected) failures.add(who + ": ended at " + std::to_string(d.offset));
      return expected;
    }
    const std::string at = who + ": offset " + std::to_string(d.offset);
    if (d.offset != expected) failures.add(at + ", expected " + std::to_string(expected));
    if (void_at(d.offset) != d.is_void()) failures.add(at + (d.is_void() ? " void" : " not void"));
    if (!d.is_void() &&
        (d.slot->bytes != bytes_at(d.offset) || d.slot->tag != d.offset + 5 ||
         d.slot->born_ns != d.offset * 2 || !carried_intact(d.data(view), d.offset, d.slot->bytes)))
      failures.add(at + " arrived changed");
    view.release(group, d.offset);
  }
}

/// One case on both ranks: `frames` offsets from rank 0's topic (capacity `writer`) to rank 1's (`reader`).
void carry(std::uint64_t frames, std::uint32_t writer, std::uint32_t reader) {
  CAPTURE(frames);
  CAPTURE(writer);
  CAPTURE(reader);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm comm = MPI_COMM_NULL;
  REQUIRE(MPI_Comm_dup(MPI_COMM_WORLD, &comm) == MPI_SUCCESS);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  host_topic_memory memory;
  std::atomic<bool> abort{false};
  failure_log failures;
  std::uint64_t seen[2] = {~0ull, ~0ull};
  mpi::link_counters counters;
  if (rank == 0) {
    topic a(test_topic("a", writer, 2, 1), memory);  // group 0 local, group 1 the link
    const topic_view& v = a.view();
    {
      worker_team team(abort, failures);
      team.spawn("writer", [&] {
        for (std::uint64_t o = 0; o < frames; ++o) {
          if (void_at(o)) {
            publish_void(v, reserve_void_at(v, o, abort));
            continue;
          }
          const publish_ticket t = reserve_at(v, "a", o, abort);
          write_carried(t.data, o, bytes_at(o));
          publish_frame(v, t, bytes_at(o), o + 5, o * 2);
        }
        v.close(frames);
      });
      team.spawn("a group 0", [&] { seen[0] = read_in_order(v, 0, "a group 0", abort, failures); });
      mpi::topic_link_sender link(v, 1, comm, 1);
      try {
        mpi::run_link(link, abort);
      } catch (const std::exception& e) {
        failures.add(std::string("rank 0 link: ") + e.what());
        abort.store(true);
      }
      counters = link.counters();
      team.join();
    }
    CHECK(seen[0] == frames);
  } else if (rank == 1) {
    topic b(test_topic("a (carried)", reader, 2, 1), memory);
    const topic_view& v = b.view();
    {
      worker_team team(abort, failures);
      team.spawn("b group 0", [&] { seen[0] = read_in_order(v, 0, "b group 0", abort, failures); });
      team.spawn("b group 1", [&] { seen[1] = read_in_order(v, 1, "b group 1", abort, failures); });
      mpi::topic_link_receiver link(v, "a (carried)", comm, 0);
      try {
        mpi::run_link(link, abort);
      } catch (const std::exception& e) {
        failures.add(std::string("rank 1 link: ") + e.what());
        abort.store(true);
      }
      counters = link.counters();
      team.join();
    }
    CHECK(seen[0] == frames);
    CHECK(seen[1] == frames);
    CHECK(v.end() == frames);
  }
  INFO(failures.str());
  CHECK(failures.count() == 0);
  CHECK(counters.frames == frames);
  MPI_Comm_free(&comm);
}

}  // namespace

TEST_CASE("topic_link.carries_a_topic_between_ranks_in_order_with_its_fields_and_the_end") {
  // 10^6 offsets in the long run (XF_LONG=1, tools/check.sh --long), 10^5 otherwise.
  carry(long_stress() ? 1'000'000 : 100'000, 16, 16);
}

TEST_CASE("topic_link.capacity_one_on_either_side") {
  const std::uint64_t frames = stress_frames(8'000);
  carry(frames, 1, 1);
  carry(frames, 1, 8);
  carry(frames, 8, 1);
}

TEST_CASE("topic_link.an_empty_stream_ends_on_both_ranks") {
  carry(0, 4, 4);
}
