// apps/dataset_support/parallel.hpp: the even split, run_parallel and worker_team (the baselines' staging
// team): every part runs once per run, runs do not overlap, and a failure comes back from the lowest part.
#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/dataset_support/parallel.hpp"

namespace xf::apps {

TEST_CASE("split_range tiles [0, n) in parts whose sizes differ by at most one") {
  for (const std::uint64_t n : {0ull, 1ull, 7ull, 64ull, 1001ull})
    for (const std::uint64_t parts : {1ull, 2ull, 3ull, 8ull, 13ull}) {
      std::uint64_t next = 0, smallest = n, largest = 0;
      for (std::uint64_t p = 0; p < parts; ++p) {
        const index_range r = split_range(n, parts, p);
        CHECK(r.begin == next);
        next = r.end;
        smallest = std::min(smallest, r.size());
        largest = std::max(largest, r.size());
      }
      CHECK(next == n);
      CHECK(largest - smallest <= 1);
    }
}

TEST_CASE("worker_team runs every part once per run, over many runs, and joins before returning") {
  for (const unsigned threads : {1u, 2u, 5u}) {
    worker_team team(threads);
    REQUIRE(team.size() == threads);
    std::vector<std::uint64_t> hits(threads, 0);  // each part writes its own entry: no race
    std::atomic<unsigned> inside{0};
    for (int run = 0; run < 2000; ++run) {
      team.run([&](unsigned t) {
        CHECK(inside.fetch_add(1) < threads);
        ++hits[t];
        inside.fetch_sub(1);
      });
      REQUIRE(inside.load() == 0);  // every part of the run finished
    }
    for (const std::uint64_t h : hits) CHECK(h == 2000);
  }
}

TEST_CASE("worker_team and run_parallel rethrow the lowest failing part's exception, and the team goes on") {
  worker_team team(4);
  const auto failing = [](unsigned t) {
    if (t >= 2) throw std::runtime_error("part " + std::to_string(t));
  };
  for (int k = 0; k < 3; ++k) CHECK_THROWS_WITH(team.run(failing), "part 2");
  std::atomic<unsigned> ran{0};
  team.run([&](unsigned) { ran.fetch_add(1); });
  CHECK(ran.load() == 4);
  CHECK_THROWS_WITH(run_parallel(4, failing), "part 2");
}

}  // namespace xf::apps
