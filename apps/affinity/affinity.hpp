// Transaction affinity (BigKernel §V "MasterCard Affinity"): the dataset generator and the multi-threaded
// CPU reference of the query, both by scanning the data file and through the index file. The reference is
// both the expected result and the CPU baseline of the prefetch-source benchmark.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "apps/affinity/affinity_format.hpp"

namespace xf::apps::affinity {

struct generate_config {
  std::uint64_t records = 1'000'000;  ///< N transactions
  std::uint64_t cards = 100'000;      ///< C cards, each transaction's card uniform among them
  std::uint32_t merchants = 10'000;   ///< M merchants, ids 0..M-1; id r has weight 1 / (r + 1)^zipf
  double zipf = 1.0;
  std::uint64_t seed = 1;
  unsigned threads = 1;  ///< does not change the files
};

/// The card number of card i (0 <= i < 10^15): 16 digits starting with 4, distinct for distinct i.
std::uint64_t card_number(std::uint64_t i) noexcept;

struct generated_files {
  std::uint64_t data_bytes = 0;
  std::uint64_t records = 0;
};

/// Writes N records (affinity_format.hpp) to `data_path` and, unless `index_path` is empty, their offsets to
/// `index_path`. The same seed gives the same files for any thread count.
generated_files generate_files(const std::string& data_path, const std::string& index_path,
                               const generate_config& cfg);

struct query {
  std::uint32_t merchant = 0;  ///< A
  unsigned threads = 1;
  /// Pass 2 buffers the (merchant, card) pairs it finds and drops duplicates (sorting) when a buffer reaches
  /// this many pairs, then whenever it has doubled since: memory follows the distinct pairs. A tuning knob;
  /// the result does not depend on it.
  std::size_t compaction_pairs = std::size_t{1} << 20;
};

struct merchant_cards {
  std::uint32_t merchant = 0;
  std::uint64_t cards = 0;  ///< distinct cards that transacted at both A and this merchant
  friend bool operator==(const merchant_cards&, const merchant_cards&) = default;
};

enum class access_path { scan, index };

struct result {
  std::uint32_t merchant = 0;
  std::uint64_t records = 0;
  std::uint64_t cards_at_merchant = 0;  ///< distinct cards that transacted at A
  /// Every merchant B != A sharing at least one card with A, by merchant id.
  std::vector<merchant_cards> shared;
  /// The 10 largest of `shared` (fewer if fewer): cards descending, then merchant ascending.
  std::vector<merchant_cards> top;
  /// CRC-32 (zlib) of `shared` as 12-byte entries: merchant (u32 LE) then cards (u64 LE).
  std::uint32_t digest = 0;
  // Not part of the result proper:
  access_path path = access_path::scan;
  unsigned threads = 0;
  std::uint64_t dataset_bytes = 0;  ///< the data file's size (the index file's not included)
  std::uint64_t index_bytes = 0;
  double seconds = 0;                ///< the first run, mapping included (the *_file functions)
  std::vector<double> warm_seconds;  ///< the repeated runs on the same mappings (with repeats)
};

/// The query by scanning `data`: one thread walks the record lengths (validating them, collecting the
/// cards seen at A and cutting the data into per-thread ranges at record starts), then `threads` threads
/// make the second pass. dataset_error naming `data_name` and the offset of a record whose record_bytes is
/// below 24 or runs past the end, or of a truncated header.
result run_scan(std::span<const std::byte> data, const query& q, const std::string& data_name = "<data>");

/// The query through an index: records split evenly across threads by index entries, both passes parallel.
/// dataset_error naming `index_name` and the byte offset of the first bad entry (an offset that leaves no
/// whole header inside `data`), or of a truncated last entry.
result run_indexed(std::span<const std::byte> data, std::span<const std::byte> index, const query& q,
                   const std::string& data_name = "<data>", const std::string& index_name = "<index>");

/// run_scan / run_indexed over files mapped read-only; `seconds` includes the mapping. With repeats > 1,
/// the query runs that many times on the same mappings and warm_seconds holds the later runs' times.
result run_scan_file(const std::string& data_path, const query& q, unsigned repeats = 1);
result run_indexed_file(const std::string& data_path, const std::string& index_path, const query& q,
                        unsigned repeats = 1);

/// {"app":"affinity", path: "scan"|"index", merchant, records, cards_at_merchant, shared_merchants,
///  top: [{merchant, cards}], digest, threads, dataset_bytes, index_bytes, passes (2), seconds, gb_per_s
///  (data-file bytes × passes / seconds / 10^9, whatever part of them the path reads), and with repeats
///  warm_seconds, warm_gb_per_s (add_timing)}.
nlohmann::json to_json(const result& r);

}  // namespace xf::apps::affinity
