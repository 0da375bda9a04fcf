// Tests of the affinity sinks on the host: pass 1's cards and pass 2's shared merchants equal a brute-force
// count whatever the virtual threads, the digest is the reference's format, pass 2 starts from pass 1's
// file, and bad frames, full sets and bad card files are named.
#include <doctest/doctest.h>

#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "operators/sinks/affinity.hpp"

using namespace xf;

namespace {

struct purchase {
  std::uint64_t card;
  std::uint32_t merchant;
};

std::vector<purchase> purchases(std::size_t n) {
  std::vector<purchase> v;
  std::uint64_t x = 99;
  for (std::size_t i = 0; i < n; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    v.push_back({4000'0000'0000'0000ull + (x >> 40) % 300, static_cast<std::uint32_t>((x >> 20) % 40)});
  }
  return v;
}

/// The frames a prefetch_varlen_source gathers with fields '4:12': per frame, card lows, highs, merchants.
std::vector<std::vector<std::uint32_t>> frames_of(const std::vector<purchase>& all, std::size_t per_frame) {
  std::vector<std::vector<std::uint32_t>> frames;
  for (std::size_t first = 0; first < all.size(); first += per_frame) {
    const std::size_t n = std::min(per_frame, all.size() - first);
    std::vector<std::uint32_t> f(3 * n);
    for (std::size_t r = 0; r < n; ++r) {
      f[r] = static_cast<std::uint32_t>(all[first + r].card);
      f[n + r] = static_cast<std::uint32_t>(all[first + r].card >> 32);
      f[2 * n + r] = all[first + r].merchant;
    }
    frames.push_back(std::move(f));
  }
  return frames;
}

/// Runs Op over `frames` with `threads` virtual threads from a prepared accumulator; the failure code or 0.
template <class Op>
std::uint32_t fold(const typename Op::params& p, const std::vector<std::vector<std::uint32_t>>& frames,
                   std::uint32_t threads, std::vector<std::uint64_t>& state) {
  state.assign(Op::state_bytes(p) / 8, 0);
  const std::span<std::byte> bytes{reinterpret_cast<std::byte*>(state.data()), Op::state_bytes(p)};
  if constexpr (requires { Op::prepare(p, bytes); }) Op::prepare(p, bytes);
  std::uint64_t failure = 0;
  for (const auto& f : frames) {
    frame_task<std::uint32_t> task;
    task.in = f.data();
    task.count = f.size();
    task.thread_count = threads;
    task.state = bytes.data();
    task.failure = &failure;
    for (std::uint32_t t = 0; t < threads; ++t) {
      task.thread_id = t;
      Op::compute(p, task);
    }
  }
  return static_cast<std::uint32_t>(failure);
}

std::span<const std::byte> state_bytes(const std::vector<std::uint64_t>& state) {
  return {reinterpret_cast<const std::byte*>(state.data()), state.size() * 8};
}

std::filesystem::path affinity_temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("xeflow-affinity-" + std::to_string(::getpid()) + "-" + name);
}

}  // namespace

TEST_CASE("affinity.two_passes_equal_a_brute_force_count") {
  const auto all = purchases(5000);
  constexpr std::uint32_t a = 3;
  std::set<std::uint64_t> cards_at_a;
  for (const auto& p : all)
    if (p.merchant == a) cards_at_a.insert(p.card);
  std::map<std::uint32_t, std::set<std::uint64_t>> shared;
  for (const auto& p : all)
    if (p.merchant != a && cards_at_a.count(p.card)) shared[p.merchant].insert(p.card);
  std::vector<std::byte> entries;
  std::string lines;
  for (const auto& [m, cards] : shared) {
    const std::uint64_t n = cards.size();
    entries.insert(entries.end(), reinterpret_cast<const std::byte*>(&m),
                   reinterpret_cast<const std::byte*>(&m) + 4);
    entries.insert(entries.end(), reinterpret_cast<const std::byte*>(&n),
                   reinterpret_cast<const std::byte*>(&n) + 8);
    lines += std::to_string(m) + " " + std::to_string(n) + "\n";
  }
  const auto digest = crc32_z(0, reinterpret_cast<const Bytef*>(entries.data()), entries.size());

  const auto cards_file = affinity_temp_path("cards"), shared_file = affinity_temp_path("shared");
  for (const std::uint32_t threads : {1u, 32u, 100u}) {
    CAPTURE(threads);
    const auto frames = frames_of(all, threads == 1 ? 5000 : 333);
    affinity_cards_op::params one;
    one.merchant = a;
    one.card_slots = 1024;
    REQUIRE(std::string(parse_path_text(cards_file.string(), one.result)).empty());
    std::vector<std::uint64_t> state;
    REQUIRE(fold<affinity_cards_op>(one, frames, threads, state) == 0);
    CHECK(affinity_cards_op::finish(one, state_bytes(state)).at("cards_at_merchant") == cards_at_a.size());
    CHECK(std::filesystem::file_size(cards_file) == cards_at_a.size() * 8);

    affinity_shared_op::params two;
    two.merchant = a;
    two.card_slots = 1024;
    two.pair_slots = 4096;
    REQUIRE(std::string(parse_path_text(cards_file.string(), two.cards)).empty());
    REQUIRE(std::string(parse_path_text(shared_file.string(), two.result)).empty());
    REQUIRE(fold<affinity_shared_op>(two, frames, threads, state) == 0);
    const operator_counters c = affinity_shared_op::finish(two, state_bytes(state));
    CHECK(c.at("cards_at_merchant") == cards_at_a.size());
    CHECK(c.at("shared_merchants") == shared.size());
    CHECK(c.at("digest") == digest);
    std::ifstream in(shared_file);
    CHECK(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()) == lines);
  }
  std::filesystem::remove(cards_file);
  std::filesystem::remove(shared_file);
}

TEST_CASE("affinity.bad_frames_full_sets_and_bad_card_files_are_named") {
  affinity_cards_op::params one;
  one.merchant = 0;
  one.card_slots = 16;  // room for 12 cards
  std::vector<std::uint64_t> state;
  CHECK(fold<affinity_cards_op>(one, {std::vector<std::uint32_t>(7)}, 4, state) == affinity_frame::bad_frame);
  std::vector<purchase> many;
  for (std::uint64_t c = 0; c < 13; ++c) many.push_back({c + 1, 0});
  CHECK(fold<affinity_cards_op>(one, frames_of(many, 13), 4, state) == affinity_frame::table_full);
  many.pop_back();
  CHECK(fold<affinity_cards_op>(one, frames_of(many, 13), 4, state) == 0);
  CHECK(fold<affinity_cards_op>(one, frames_of({{~std::uint64_t{0}, 0}}, 1), 1, state) ==
        affinity_frame::bad_card);

  affinity_shared_op::params two;
  two.card_slots = 16;
  const auto odd = affinity_temp_path("odd");
  std::ofstream(odd, std::ios::binary) << "12345";
  REQUIRE(std::string(parse_path_text(odd.string(), two.cards)).empty());
  std::vector<std::uint64_t> accumulator(affinity_shared_op::state_bytes(two) / 8);
  const std::span<std::byte> bytes{reinterpret_cast<std::byte*>(accumulator.data()), accumulator.size() * 8};
  CHECK_THROWS_WITH_AS(affinity_shared_op::prepare(two, bytes), doctest::Contains("not whole u64 cards"),
                       std::runtime_error);
  {
    std::ofstream big(odd, std::ios::binary);
    for (std::uint64_t c = 1; c <= 13; ++c) big.write(reinterpret_cast<const char*>(&c), 8);
  }
  CHECK_THROWS_WITH_AS(affinity_shared_op::prepare(two, bytes),
                       doctest::Contains("need card_slots of at least 18"), std::runtime_error);
  REQUIRE(std::string(parse_path_text(affinity_temp_path("missing").string(), two.cards)).empty());
  CHECK_THROWS_WITH_AS(affinity_shared_op::prepare(two, bytes), doctest::Contains("cannot open"),
                       std::runtime_error);
  std::filesystem::remove(odd);
}
