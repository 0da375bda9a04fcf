// Transaction-affinity generator and CPU reference. Pass 1 collects the cards seen at merchant A; they get
// dense ids in a card index partitioned by hash (built in parallel). Pass 2 appends a (merchant B, card id)
// key for every transaction of such a card at another merchant, per thread and partitioned by B; the
// partitions are then radix-sorted, deduplicated and counted per merchant in parallel.
#include "apps/affinity/affinity.hpp"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>

#include "apps/affinity/radix_sort.hpp"
#include "apps/affinity/u64_table.hpp"
#include "apps/dataset_support/block_generator.hpp"
#include "apps/dataset_support/dataset_file.hpp"
#include "apps/dataset_support/parallel.hpp"
#include "apps/dataset_support/seeded_random.hpp"
#include "apps/dataset_support/tool_cli.hpp"

namespace xf::apps::affinity {
namespace {

constexpr std::uint64_t records_stream = 1;
constexpr std::uint64_t generate_block_records = 65536;

// ---- partitions ----------------------------------------------------------------------------------------

/// Hash partitions of the card index and of the pair sets: a power of two, a few per thread for balance.
/// The result does not depend on it.
struct partitioning {
  unsigned count;
  int shift;  ///< partition = mix64(key) >> shift
  explicit partitioning(unsigned threads) {
    count = 4;
    while (count < 4 * threads) count *= 2;
    shift = 64 - std::countr_zero(count);
  }
  unsigned of(std::uint64_t key) const noexcept { return static_cast<unsigned>(mix64(key) >> shift); }
};

/// Cards seen at A: [thread][partition], duplicates included.
using card_lists = std::vector<std::vector<std::vector<std::uint64_t>>>;

card_lists make_card_lists(unsigned threads, const partitioning& parts) {
  return card_lists(threads, std::vector<std::vector<std::uint64_t>>(parts.count));
}

/// The distinct cards seen at A, each with a dense id in [0, size()). Read-only once built.
class card_index {
 public:
  static constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();

  card_index(const card_lists& lists, const partitioning& parts, unsigned threads)
      : parts_(parts), maps_(parts.count), base_(parts.count + 1, 0) {
    run_parallel(threads, [&](unsigned t) {
      const index_range mine = split_range(parts_.count, threads, t);
      for (auto p = static_cast<unsigned>(mine.begin); p < mine.end; ++p) {
        std::size_t expected = 0;
        for (const auto& per_thread : lists) expected += per_thread[p].size();
        u64_map<std::uint32_t> map(expected / 2);
        for (const auto& per_thread : lists)
          for (std::uint64_t card : per_thread[p])
            map.try_emplace(card, static_cast<std::uint32_t>(map.size()));
        maps_[p] = std::move(map);
      }
    });
    for (unsigned p = 0; p < parts_.count; ++p) base_[p + 1] = base_[p] + maps_[p].size();
    if (base_.back() >= none)
      throw std::length_error("affinity: more than 2^32 - 2 distinct cards at merchant A");
  }

  /// Fetches the slot of a card whose mix64 is `hash` into the cache.
  void prefetch(std::uint64_t hash) const noexcept { maps_[hash >> parts_.shift].prefetch(hash); }

  /// The card's id, or `none` when it was not seen at A (`hash` = mix64(card)).
  std::uint32_t find(std::uint64_t card, std::uint64_t hash) const noexcept {
    const auto p = static_cast<unsigned>(hash >> parts_.shift);
    const std::uint32_t* local = maps_[p].find(card, hash);
    return local == nullptr ? none : static_cast<std::uint32_t>(base_[p] + *local);
  }

  std::uint64_t size() const noexcept { return base_.back(); }

 private:
  partitioning parts_;
  std::vector<u64_map<std::uint32_t>> maps_;
  std::vector<std::uint64_t> base_;
};

/// Pass 2 of one thread: every (merchant B != A, card id) pair of a card seen at A, as the key
/// B << id_bits | id, appended to the partition of B. A partition is compacted (sorted, duplicates dropped)
/// whenever it has doubled since the last compaction, so memory follows the distinct pairs, not the matches.
/// Card lookups go in batches: each record's slot in the card index is prefetched when the record is read
/// and looked up `batch_records` records later, so the lookups' cache misses overlap.
class pair_collector {
 public:
  static constexpr unsigned batch_records = 16;

  pair_collector(const card_index& cards, const partitioning& parts, const query& q)
      : cards_(&cards),
        parts_(&parts),
        merchant_a_(q.merchant),
        id_bits_(std::max(1, static_cast<int>(std::bit_width(std::max<std::uint64_t>(cards.size(), 1) - 1)))),
        first_compaction_(std::max<std::size_t>(1, q.compaction_pairs)),
        keys_(parts.count),
        compact_at_(parts.count, first_compaction_) {}

  void note(std::uint64_t card, std::uint32_t merchant) {
    if (merchant == merchant_a_) return;
    const std::uint64_t hash = mix64(card);
    cards_->prefetch(hash);
    batch_[pending_++] = {card, hash, merchant};
    if (pending_ == batch_records) flush();
  }

  /// Looks up what is still batched; call once the records are done.
  void flush() {
    for (unsigned i = 0; i < pending_; ++i) {
      const std::uint32_t id = cards_->find(batch_[i].card, batch_[i].hash);
      if (id == card_index::none) continue;
      const unsigned p = parts_->of(batch_[i].merchant);
      std::vector<std::uint64_t>& keys = keys_[p];
      keys.push_back(std::uint64_t{batch_[i].merchant} << id_bits_ | id);
      if (keys.size() >= compact_at_[p]) {
        sort_unique(keys, scratch_);
        compact_at_[p] = std::max(first_compaction_, 2 * keys.size());
      }
    }
    pending_ = 0;
  }

  int id_bits() const noexcept { return id_bits_; }
  /// Partition p's keys (not necessarily sorted or distinct).
  const std::vector<std::uint64_t>& keys(unsigned p) const noexcept { return keys_[p]; }

 private:
  struct pending_record {
    std::uint64_t card, hash;
    std::uint32_t merchant;
  };

  const card_index* cards_;
  const partitioning* parts_;
  std::uint32_t merchant_a_;
  int id_bits_;
  std::size_t first_compaction_;
  std::vector<std::vector<std::uint64_t>> keys_;
  std::vector<std::size_t> compact_at_;
  std::vector<std::uint64_t> scratch_;
  pending_record batch_[batch_records];
  unsigned pending_ = 0;
};

/// Pass 2's per-thread pairs merged per partition (sorted, distinct) and counted per merchant, then the
/// result's lists and digest.
result finish(const std::vector<pair_collector>& pairs, const partitioning& parts, unsigned threads,
              std::uint32_t merchant_a, std::uint64_t cards_at_a, std::uint64_t records) {
  std::vector<std::vector<merchant_cards>> per_partition(parts.count);
  run_parallel(threads, [&](unsigned t) {
    const index_range mine = split_range(parts.count, threads, t);
    std::vector<std::uint64_t> keys, scratch;
    for (auto p = static_cast<unsigned>(mine.begin); p < mine.end; ++p) {
      keys.clear();
      for (const auto& c : pairs) keys.insert(keys.end(), c.keys(p).begin(), c.keys(p).end());
      sort_unique(keys, scratch);
      const int id_bits = pairs.front().id_bits();
      auto& out = per_partition[p];
      for (std::size_t i = 0; i < keys.size();) {  // sorted by merchant, then card: count each run
        const std::uint64_t merchant = keys[i] >> id_bits;
        std::size_t j = i + 1;
        while (j < keys.size() && keys[j] >> id_bits == merchant) ++j;
        out.push_back({static_cast<std::uint32_t>(merchant), j - i});
        i = j;
      }
    }
  });

  result r;
  r.merchant = merchant_a;
  r.records = records;
  r.cards_at_merchant = cards_at_a;
  r.threads = threads;
  for (const auto& part : per_partition) r.shared.insert(r.shared.end(), part.begin(), part.end());
  std::sort(r.shared.begin(), r.shared.end(),
            [](const merchant_cards& a, const merchant_cards& b) { return a.merchant < b.merchant; });

  std::vector<std::byte> bytes(r.shared.size() * 12);
  for (std::size_t i = 0; i < r.shared.size(); ++i) {
    std::memcpy(&bytes[i * 12], &r.shared[i].merchant, 4);
    std::memcpy(&bytes[i * 12 + 4], &r.shared[i].cards, 8);
  }
  r.digest =
      static_cast<std::uint32_t>(crc32_z(0, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));

  r.top = r.shared;
  const std::size_t top = std::min<std::size_t>(10, r.top.size());
  std::partial_sort(r.top.begin(), r.top.begin() + static_cast<std::ptrdiff_t>(top), r.top.end(),
                    [](const merchant_cards& a, const merchant_cards& b) {
                      return a.cards != b.cards ? a.cards > b.cards : a.merchant < b.merchant;
                    });
  r.top.resize(top);
  return r;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

// ---- generator -----------------------------------------------------------------------------------------

std::uint64_t card_number(std::uint64_t i) noexcept {
  // i -> i × p mod 10^15 is a bijection of [0, 10^15) for p coprime to 10 (p = 982451653, a prime): card
  // numbers look scattered but never collide.
  constexpr std::uint64_t range = 1'000'000'000'000'000ull;
  return 4 * range + static_cast<std::uint64_t>((static_cast<unsigned __int128>(i) * 982'451'653u) % range);
}

generated_files generate_files(const std::string& data_path, const std::string& index_path,
                               const generate_config& cfg) {
  if (cfg.cards == 0 || cfg.cards > 1'000'000'000'000'000ull) throw usage_error("--cards must be 1 .. 10^15");
  if (cfg.merchants == 0) throw usage_error("--merchants must be at least 1");
  if (!(cfg.zipf >= 0)) throw usage_error("--zipf must be >= 0");
  const alias_table merchants = alias_table::zipf(cfg.merchants, cfg.zipf);
  const std::uint64_t blocks = (cfg.records + generate_block_records - 1) / generate_block_records;
  const bool with_index = !index_path.empty();
  dataset_writer data(data_path);
  std::optional<dataset_writer> index;
  if (with_index) index.emplace(index_path);

  const generated_totals totals = write_generated_blocks(
      blocks, cfg.threads,
      [&](std::uint64_t block, generated_block& b) {
        seeded_random rng(block_seed(cfg.seed, records_stream, block));
        const std::uint64_t count =
            std::min(generate_block_records, cfg.records - block * generate_block_records);
        b.data.reserve(count * (record_header_bytes + item_bytes * max_items));
        for (std::uint64_t i = 0; i < count; ++i) {
          const auto items = static_cast<std::uint16_t>(rng.below(max_items + 1));
          const record_header h{static_cast<std::uint32_t>(record_header_bytes + item_bytes * items),
                                card_number(rng.below(cfg.cards)),
                                merchants.sample(rng),
                                static_cast<std::uint32_t>(100 + rng.below(100'000)),
                                items,
                                0};
          const std::size_t at = b.data.size();
          if (with_index) b.record_offsets.push_back(at);
          b.data.resize(at + h.record_bytes);
          std::memcpy(b.data.data() + at, &h, sizeof h);
          for (std::uint16_t k = 0; k < items; ++k) {
            const auto code = static_cast<std::uint32_t>(rng.below(1'000'000));
            std::memcpy(b.data.data() + at + record_header_bytes + item_bytes * k, &code, 4);
          }
        }
      },
      data, with_index ? &*index : nullptr);
  data.close();
  if (index) index->close();
  return {totals.data_bytes, cfg.records};
}

// ---- reference -----------------------------------------------------------------------------------------

result run_scan(std::span<const std::byte> data, const query& q, const std::string& data_name) {
  const auto start = std::chrono::steady_clock::now();
  if (q.threads == 0) throw std::invalid_argument("affinity: threads must be >= 1");
  const unsigned threads = q.threads;
  const partitioning parts(threads);
  const std::uint64_t size = data.size();

  // Pass 1, one thread: record boundaries are known only by walking the lengths.
  card_lists at_a = make_card_lists(1, parts);
  std::vector<std::uint64_t> splits(threads + 1, size);
  splits[0] = 0;
  std::uint64_t records = 0;
  unsigned next_split = 1;
  for (std::uint64_t off = 0; off < size;) {
    if (size - off < record_header_bytes)
      throw dataset_error(data_name, off,
                          "truncated record header: " + std::to_string(size - off) + " of " +
                              std::to_string(record_header_bytes) + " bytes");
    const std::byte* rec = data.data() + off;
    const std::uint32_t record_bytes = load_u32(rec + record_bytes_offset);
    if (record_bytes < record_header_bytes)
      throw dataset_error(data_name, off,
                          "record_bytes " + std::to_string(record_bytes) + " is smaller than the " +
                              std::to_string(record_header_bytes) + "-byte record header");
    if (record_bytes > size - off)
      throw dataset_error(data_name, off,
                          "record_bytes " + std::to_string(record_bytes) +
                              " runs past the end of the file (" + std::to_string(size - off) +
                              " bytes left)");
    if (load_u32(rec + merchant_offset) == q.merchant) {
      const std::uint64_t card = load_u64(rec + card_offset);
      at_a[0][parts.of(card)].push_back(card);
    }
    off += record_bytes;
    ++records;
    while (next_split < threads && off >= split_range(size, threads, next_split).begin)
      splits[next_split++] = off;
  }
  const card_index cards(at_a, parts, threads);
  at_a = {};

  // Pass 2, every thread from a record start the walk found.
  std::vector<pair_collector> pairs(threads, pair_collector(cards, parts, q));
  run_parallel(threads, [&](unsigned t) {
    pair_collector& mine = pairs[t];
    for (std::uint64_t off = splits[t]; off < splits[t + 1];) {
      const std::byte* rec = data.data() + off;
      mine.note(load_u64(rec + card_offset), load_u32(rec + merchant_offset));
      off += load_u32(rec + record_bytes_offset);  // checked by the walk
    }
    mine.flush();
  });

  result r = finish(pairs, parts, threads, q.merchant, cards.size(), records);
  r.path = access_path::scan;
  r.dataset_bytes = size;
  r.seconds = seconds_since(start);
  return r;
}

result run_indexed(std::span<const std::byte> data, std::span<const std::byte> index, const query& q,
                   const std::string& data_name, const std::string& index_name) {
  const auto start = std::chrono::steady_clock::now();
  if (q.threads == 0) throw std::invalid_argument("affinity: threads must be >= 1");
  const unsigned threads = q.threads;
  const partitioning parts(threads);
  const std::uint64_t size = data.size();
  if (index.size() % index_entry_bytes != 0)
    throw dataset_error(index_name, index.size() - index.size() % index_entry_bytes,
                        "truncated index entry: " + std::to_string(index.size() % index_entry_bytes) +
                            " of " + std::to_string(index_entry_bytes) + " bytes");
  const std::uint64_t records = index.size() / index_entry_bytes;
  auto record_at = [&](std::uint64_t r) { return load_u64(index.data() + r * index_entry_bytes); };

  // Pass 1: cards at A, and every index entry checked.
  card_lists at_a = make_card_lists(threads, parts);
  run_parallel(threads, [&](unsigned t) {
    const index_range mine = split_range(records, threads, t);
    auto& lists = at_a[t];
    for (std::uint64_t r = mine.begin; r < mine.end; ++r) {
      const std::uint64_t off = record_at(r);
      if (off > size || size - off < record_header_bytes)
        throw dataset_error(index_name, r * index_entry_bytes,
                            "record offset " + std::to_string(off) + " is out of range: " + data_name +
                                " has " + std::to_string(size) + " bytes and a record needs a " +
                                std::to_string(record_header_bytes) + "-byte header");
      const std::byte* rec = data.data() + off;
      if (load_u32(rec + merchant_offset) == q.merchant) {
        const std::uint64_t card = load_u64(rec + card_offset);
        lists[parts.of(card)].push_back(card);
      }
    }
  });
  const card_index cards(at_a, parts, threads);
  at_a = {};

  // Pass 2.
  std::vector<pair_collector> pairs(threads, pair_collector(cards, parts, q));
  run_parallel(threads, [&](unsigned t) {
    const index_range mine = split_range(records, threads, t);
    pair_collector& collector = pairs[t];
    for (std::uint64_t r = mine.begin; r < mine.end; ++r) {
      const std::byte* rec = data.data() + record_at(r);  // checked in pass 1
      collector.note(load_u64(rec + card_offset), load_u32(rec + merchant_offset));
    }
    collector.flush();
  });

  result r = finish(pairs, parts, threads, q.merchant, cards.size(), records);
  r.path = access_path::index;
  r.dataset_bytes = size;
  r.index_bytes = index.size();
  r.seconds = seconds_since(start);
  return r;
}

result run_scan_file(const std::string& data_path, const query& q, unsigned repeats) {
  const auto start = std::chrono::steady_clock::now();
  const mapped_file data = mapped_file::open(data_path);
  result r = run_scan(data.bytes(), q, data_path);
  r.seconds = seconds_since(start);
  for (unsigned i = 1; i < repeats; ++i)
    r.warm_seconds.push_back(run_scan(data.bytes(), q, data_path).seconds);
  return r;
}

result run_indexed_file(const std::string& data_path, const std::string& index_path, const query& q,
                        unsigned repeats) {
  const auto start = std::chrono::steady_clock::now();
  const mapped_file data = mapped_file::open(data_path);
  const mapped_file index = mapped_file::open(index_path);
  result r = run_indexed(data.bytes(), index.bytes(), q, data_path, index_path);
  r.seconds = seconds_since(start);
  for (unsigned i = 1; i < repeats; ++i)
    r.warm_seconds.push_back(run_indexed(data.bytes(), index.bytes(), q, data_path, index_path).seconds);
  return r;
}

nlohmann::json to_json(const result& r) {
  nlohmann::json top = nlohmann::json::array();
  for (const merchant_cards& m : r.top) top.push_back({{"merchant", m.merchant}, {"cards", m.cards}});
  nlohmann::json j = {{"app", "affinity"},
                      {"path", r.path == access_path::scan ? "scan" : "index"},
                      {"merchant", r.merchant},
                      {"records", r.records},
                      {"cards_at_merchant", r.cards_at_merchant},
                      {"shared_merchants", r.shared.size()},
                      {"top", top},
                      {"digest", hex32(r.digest)},
                      {"threads", r.threads},
                      {"dataset_bytes", r.dataset_bytes},
                      {"index_bytes", r.index_bytes},
                      {"passes", 2}};
  add_timing(j, 2.0 * static_cast<double>(r.dataset_bytes), r.seconds, r.warm_seconds);
  return j;
}

}  // namespace xf::apps::affinity
