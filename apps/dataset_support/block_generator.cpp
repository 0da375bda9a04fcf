// write_generated_blocks: rounds of `threads` blocks, round r+1 filled while round r is written.
#include "apps/dataset_support/block_generator.hpp"

#include <algorithm>
#include <bit>
#include <exception>
#include <thread>

#include "apps/dataset_support/parallel.hpp"

namespace xf::apps {

static_assert(std::endian::native == std::endian::little, "the index file is written in host order");

generated_totals write_generated_blocks(std::uint64_t block_count, unsigned threads, const block_filler& fill,
                                        dataset_writer& data, dataset_writer* index) {
  threads = std::max(1u, threads);
  const std::uint64_t rounds = (block_count + threads - 1) / threads;
  std::vector<generated_block> sets[2] = {std::vector<generated_block>(threads),
                                          std::vector<generated_block>(threads)};
  auto blocks_in = [&](std::uint64_t round) {
    return static_cast<unsigned>(std::min<std::uint64_t>(threads, block_count - round * threads));
  };
  auto fill_round = [&](std::uint64_t round) {
    auto& set = sets[round % 2];
    run_parallel(blocks_in(round), [&](unsigned t) {
      set[t].data.clear();
      set[t].record_offsets.clear();
      fill(round * threads + t, set[t]);
    });
  };

  generated_totals totals;
  const std::uint64_t data_start = data.bytes_written();
  std::vector<std::uint64_t> index_entries;
  if (rounds > 0) fill_round(0);
  for (std::uint64_t round = 0; round < rounds; ++round) {
    std::exception_ptr fill_failure;
    std::jthread next;  // joined before this iteration ends, whatever the writer does
    if (round + 1 < rounds) {
      next = std::jthread([&, round] {
        try {
          fill_round(round + 1);
        } catch (...) {
          fill_failure = std::current_exception();
        }
      });
    }
    const auto& set = sets[round % 2];
    for (unsigned t = 0; t < blocks_in(round); ++t) {
      if (index != nullptr) {
        index_entries.resize(set[t].record_offsets.size());
        const std::uint64_t base = data.bytes_written();
        std::transform(set[t].record_offsets.begin(), set[t].record_offsets.end(), index_entries.begin(),
                       [base](std::uint64_t o) { return base + o; });
        index->write(std::as_bytes(std::span(index_entries)));
        totals.records += index_entries.size();
      }
      data.write(set[t].data);
    }
    if (next.joinable()) next.join();
    if (fill_failure) std::rethrow_exception(fill_failure);
  }
  totals.data_bytes = data.bytes_written() - data_start;
  return totals;
}

}  // namespace xf::apps
