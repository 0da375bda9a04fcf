// A topic carried between two ranks (framework/mpi/topic_link.hpp): rank 0 writes topic A, read by a local
// group and by the link's sender; rank 1's link receiver publishes into topic B, read by two groups. Every
// group must see every offset once, in order, with the writer's bytes, fields and voids, and the end of
// stream. Capacity 1 on either side is the tightest case of the credit. Both ranks run each case.
#include <doctest/doctest.h>
#include <mpi.h>

#include "framework/mpi/topic_link.hpp"
#include "tests/support/carried_stream.hpp"

namespace {

using namespace xf;
using namespace xf::test;

const carried_stream stream{77};

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
      team.spawn("writer", [&] { stream.publish(v, "a", frames, abort); });
      team.spawn("a group 0", [&] { seen[0] = stream.read(v, 0, "a group 0", abort, failures); });
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
      team.spawn("b group 0", [&] { seen[0] = stream.read(v, 0, "b group 0", abort, failures); });
      team.spawn("b group 1", [&] { seen[1] = stream.read(v, 1, "b group 1", abort, failures); });
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
