// What the address stage's tests share: running a prefetch_addresses operator's host compute through the
// registry (parameters as a topology gives them), reading an address frame back lane by lane, and the
// closed form of the record generators' lane order.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "framework/model/registry.hpp"
#include "operators/builtin.hpp"
#include "operators/sources/prefetch/address_frame.hpp"
#include "operators/sources/prefetch/address_stream.hpp"
#include "operators/sources/prefetch/range_frame.hpp"

namespace xf::testing {

/// An address frame and the code it failed with (0: it did not).
struct address_run {
  std::vector<std::uint64_t> words;
  std::uint32_t failure = 0;
};

/// Runs operator class `cls` of the built-in registry (params `values`, normalized as the loader would)
/// over the input frame `in` at `offset`, with `threads` virtual threads.
inline address_run run_address_stage(const std::string& cls, param_map values,
                                     const std::vector<std::uint64_t>& in, std::uint64_t offset,
                                     std::uint32_t threads = 32) {
  operator_registry registry;
  register_builtin_operators(registry);
  const operator_entry* entry = registry.find(cls);
  REQUIRE(entry);
  std::string problems;
  for (const auto& p : normalize_params(entry->info, values)) problems += p.key + ": " + p.message + "\n";
  INFO(problems);
  REQUIRE(problems.empty());
  const auto kernel = entry->make_host_kernel(values, {});
  address_run run;
  // Stale words, so that a word the operator leaves unwritten shows.
  run.words.assign(in.size(), 0xdead'beef'dead'beefull);
  const frame_in fi{reinterpret_cast<const std::byte*>(in.data()), in.size() * 8, element_type::u64};
  frame_out fo{reinterpret_cast<std::byte*>(run.words.data()), in.size() * 8, in.size() * 8,
               element_type::u64};
  try {
    kernel->run_frame(fi, &fo, offset, nullptr, threads);
  } catch (const frame_failed& f) {
    run.failure = f.code;
  }
  return run;
}

/// A prefetch_ranges frame of `words` u64 naming records (or bytes) [first, first + count).
inline std::vector<std::uint64_t> range_frame(std::uint64_t first, std::uint64_t count, std::uint64_t words) {
  std::vector<std::uint64_t> in(words, 0);
  in[0] = prefetch::range_frame_magic;
  in[1] = first;
  in[2] = count;
  return in;
}

/// Each lane's addresses in an address frame (the format must hold: magic, regions inside the frame).
inline std::vector<std::vector<std::uint64_t>> lane_addresses(const std::vector<std::uint64_t>& words) {
  REQUIRE(words.size() >= prefetch::address_frame_header_words);
  REQUIRE(words[0] == prefetch::address_frame_magic);
  const prefetch::address_frame_shape shape{words[1], words[2]};
  REQUIRE(shape.words() <= words.size());
  std::vector<std::vector<std::uint64_t>> lanes(shape.lanes);
  for (std::uint64_t l = 0; l < shape.lanes; ++l) {
    const std::uint64_t used = words[shape.used_index(l)];
    REQUIRE(used <= shape.words_per_lane);
    REQUIRE(prefetch::decode_addresses(words.data() + shape.region_index(l), static_cast<std::uint32_t>(used),
                                       [&](std::uint64_t a) { lanes[l].push_back(a); }));
  }
  return lanes;
}

/// Words the lanes' streams use in all.
inline std::uint64_t used_words(const std::vector<std::uint64_t>& words) {
  std::uint64_t used = 0;
  for (std::uint64_t l = 0; l < words[1]; ++l) used += words[prefetch::address_frame_header_words + l];
  return used;
}

/// The record generators' lane order in closed form: lane l reads the frame's item positions q ≡ l (mod
/// L), q = i·n + j, item i (at `item_offsets[i]`) of record `record_of(j)`.
template <class RecordOf>
std::vector<std::vector<std::uint64_t>> expected_record_lanes(std::uint32_t lanes, std::uint64_t n,
                                                              std::uint64_t record_bytes,
                                                              const std::vector<std::uint64_t>& item_offsets,
                                                              RecordOf record_of) {
  std::vector<std::vector<std::uint64_t>> out(lanes);
  for (std::uint64_t q = 0; q < item_offsets.size() * n; ++q)
    out[q % lanes].push_back(record_of(q % n) * record_bytes + item_offsets[q / n]);
  return out;
}

/// The fields of K-means particles (64-byte records, x y z at 0, 4, 8) for a records generator.
inline param_map kmeans_fields(std::int64_t lanes, bool patterns) {
  return {{"record_bytes", std::int64_t{64}},
          {"fields", std::string("0:12")},
          {"lanes", lanes},
          {"patterns", patterns}};
}

}  // namespace xf::testing
