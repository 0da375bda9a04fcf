// Word-count generator and CPU reference. Counting: 64-byte blocks classified into letter/separator bit
// masks, words found at the masks' edges, per-thread word_tables fed in prefetched batches; then a parallel
// merge by the words' first two letters (702 buckets in word order), so merged groups come out sorted.
#include "apps/wordcount/wordcount.hpp"

#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <charconv>
#include <chrono>
#include <cstring>
#include <unordered_set>

#include "apps/dataset_support/block_generator.hpp"
#include "apps/dataset_support/dataset_file.hpp"
#include "apps/dataset_support/parallel.hpp"
#include "apps/dataset_support/seeded_random.hpp"
#include "apps/dataset_support/tool_cli.hpp"
#include "apps/wordcount/text_scan.hpp"
#include "apps/wordcount/word_table.hpp"
#include "apps/wordcount/wordcount_format.hpp"

namespace xf::apps::wordcount {
namespace {

constexpr std::uint64_t vocabulary_stream = 0;
constexpr std::uint64_t text_stream = 1;
constexpr std::uint64_t generate_block_bytes = MiB;

void check_generate_config(const generate_config& cfg) {
  if (cfg.vocabulary == 0) throw usage_error("--vocabulary must be at least 1");
  if (cfg.max_words_per_line == 0) throw usage_error("--max-words-per-line must be at least 1");
  if (!(cfg.zipf >= 0)) throw usage_error("--zipf must be >= 0");
}

// ---- counting ----------------------------------------------------------------------------------------

/// The first position >= p that starts a word or a separator run (p itself when the byte before it is not
/// a letter): a thread's range starts and ends there, so no word is split between two threads.
std::uint64_t word_boundary(std::string_view text, std::uint64_t p) {
  while (p > 0 && p < text.size() && is_letter(static_cast<unsigned char>(text[p - 1]))) ++p;
  return p;
}

[[noreturn]] void bad_byte(const std::string& name, std::string_view text, std::uint64_t pos) {
  static constexpr char hex[] = "0123456789abcdef";
  const auto c = static_cast<unsigned char>(text[pos]);
  throw dataset_error(
      name, pos,
      std::string("byte 0x") + hex[c >> 4] + hex[c & 15] + " is not a lowercase letter, space or newline");
}

/// Words found by the scan, waiting to be added: their table slots are prefetched when a word is found and
/// read `batch_words` words later, so the cache misses on a large table overlap instead of queueing.
struct pending_word {
  const char* text;
  std::uint64_t length;
  word_key key;
};
constexpr unsigned batch_words = 16;

/// Counts the words that start in [begin, end) (both word boundaries, or end == size) into `table`.
/// Blocks of 64 bytes become bit masks of letters and separators; word starts and ends are the mask's
/// 0→1 and 1→0 edges, taken in order, so finding a word costs no branch per byte and no load chain.
void count_range(std::string_view text, std::uint64_t begin, std::uint64_t end, word_table& table,
                 const std::string& name) {
  const char* data = text.data();
  const std::uint64_t size = text.size();
  pending_word batch[batch_words];
  unsigned pending = 0;
  auto emit = [&](std::uint64_t word_begin, std::uint64_t word_end) __attribute__((always_inline)) {
    const std::uint64_t length = word_end - word_begin;
    const word_key key = word_key_at(data, size, word_begin, length);
    table.prefetch(key);
    batch[pending++] = {data + word_begin, length, key};
    if (pending == batch_words) {
      for (unsigned i = 0; i < pending; ++i) table.add(batch[i].text, batch[i].length, batch[i].key);
      pending = 0;
    }
  };

  std::uint64_t open_word = 0;  // start of a word running past the current block
  bool word_open = false;
  std::uint64_t previous_letter = 0;  // bit 0: the byte before the block is a letter (never at `begin`)
  for (std::uint64_t block = begin; block < end; block += 64) {
    const std::uint64_t valid = end - block;
    block_masks m;
    if (size - block >= 64) {
      m = classify_block(data + block);
    } else {
      char tail[64] = {};  // zero bytes: neither letter nor separator, cut off by `valid` below
      std::memcpy(tail, data + block, size - block);
      m = classify_block(tail);
    }
    if (valid < 64) {
      const std::uint64_t keep = (std::uint64_t{1} << valid) - 1;
      m.letters &= keep;
      m.separators |= ~keep;
    }
    if (const std::uint64_t bad = ~(m.letters | m.separators); bad != 0)
      bad_byte(name, text, block + static_cast<unsigned>(std::countr_zero(bad)));

    const std::uint64_t before = (m.letters << 1) | previous_letter;
    std::uint64_t starts = m.letters & ~before;
    std::uint64_t ends = ~m.letters & before;  // the first non-letter after each word
    previous_letter = m.letters >> 63;
    if (word_open && ends != 0) {
      emit(open_word, block + static_cast<unsigned>(std::countr_zero(ends)));
      ends &= ends - 1;
      word_open = false;
    }
    while (starts != 0) {  // starts and ends alternate: the k-th start pairs with the k-th end left
      const std::uint64_t word_begin = block + static_cast<unsigned>(std::countr_zero(starts));
      starts &= starts - 1;
      if (ends == 0) {
        open_word = word_begin;
        word_open = true;
        break;
      }
      emit(word_begin, block + static_cast<unsigned>(std::countr_zero(ends)));
      ends &= ends - 1;
    }
  }
  if (word_open) emit(open_word, end);  // a word ending at the end of the text
  for (unsigned i = 0; i < pending; ++i) table.add(batch[i].text, batch[i].length, batch[i].key);
}

// ---- merging -----------------------------------------------------------------------------------------

/// Words by their first two letters, in word order: "a" < "aa" < … < "az" < "b" < …
constexpr unsigned prefix_buckets = 26 * 27;
unsigned prefix_bucket(const word_table::entry& e) noexcept {
  const unsigned first = static_cast<unsigned>(e.text[0] - 'a');
  const unsigned second = e.length > 1 ? static_cast<unsigned>(e.text[1] - 'a') + 1 : 0;
  return first * 27 + second;
}

/// One thread's table entries ordered by prefix bucket: bucket b is [begin[b], begin[b + 1]).
struct bucketed_entries {
  std::vector<word_table::entry> entries;
  std::vector<std::size_t> begin = std::vector<std::size_t>(prefix_buckets + 1);
};

bucketed_entries bucket_entries(const word_table& table) {
  bucketed_entries out;
  std::vector<std::size_t> next(prefix_buckets, 0);
  for (const auto& e : table.slots())
    if (e.text != nullptr) ++next[prefix_bucket(e)];
  std::size_t sum = 0;
  for (unsigned b = 0; b < prefix_buckets; ++b) out.begin[b] = sum, sum += next[b], next[b] = out.begin[b];
  out.begin[prefix_buckets] = sum;
  out.entries.resize(sum);
  for (const auto& e : table.slots())
    if (e.text != nullptr) out.entries[next[prefix_bucket(e)]++] = e;
  return out;
}

using word_view = std::pair<std::string_view, std::uint64_t>;

/// Every thread's entries of buckets [first, last), merged and sorted by word.
std::vector<word_view> merge_buckets(const std::vector<bucketed_entries>& parts, unsigned first,
                                     unsigned last) {
  std::size_t total = 0;
  for (const auto& p : parts) total += p.begin[last] - p.begin[first];
  word_table merged(total);
  for (const auto& p : parts)
    for (std::size_t i = p.begin[first]; i < p.begin[last]; ++i)
      merged.add(p.entries[i].text, p.entries[i].length, p.entries[i].key, p.entries[i].count);
  std::vector<word_view> out;
  out.reserve(merged.size());
  for (const auto& e : merged.slots())
    if (e.text != nullptr) out.emplace_back(std::string_view(e.text, e.length), e.count);
  std::sort(out.begin(), out.end(), [](const word_view& a, const word_view& b) { return a.first < b.first; });
  return out;
}

}  // namespace

// ---- generator -----------------------------------------------------------------------------------------

std::vector<std::string> vocabulary(const generate_config& cfg) {
  check_generate_config(cfg);
  seeded_random rng(block_seed(cfg.seed, vocabulary_stream, 0));
  std::vector<std::string> words;
  words.reserve(cfg.vocabulary);
  std::unordered_set<std::string> seen;
  seen.reserve(cfg.vocabulary);
  while (words.size() < cfg.vocabulary) {
    const auto length = static_cast<std::size_t>(1 + rng.below(3) + rng.below(4) + rng.below(5));  // 1..10
    std::string w(length, 'a');
    for (char& c : w) c = static_cast<char>('a' + rng.below(26));
    if (seen.insert(w).second) words.push_back(std::move(w));
  }
  return words;
}

std::uint64_t generate_file(const std::string& path, const generate_config& cfg) {
  check_generate_config(cfg);
  const std::vector<std::string> words = vocabulary(cfg);
  const alias_table ranks = alias_table::zipf(cfg.vocabulary, cfg.zipf);
  const std::uint64_t blocks = (cfg.bytes + generate_block_bytes - 1) / generate_block_bytes;
  dataset_writer out(path);
  write_generated_blocks(
      blocks, cfg.threads,
      [&](std::uint64_t block, generated_block& b) {
        seeded_random rng(block_seed(cfg.seed, text_stream, block));
        const std::uint64_t target = std::min(generate_block_bytes, cfg.bytes - block * generate_block_bytes);
        b.data.reserve(target + 4096);
        std::size_t size = 0;
        while (size < target) {
          const std::uint64_t line_words = 1 + rng.below(cfg.max_words_per_line);
          for (std::uint64_t w = 0; w < line_words; ++w) {
            const std::string& word = words[ranks.sample(rng)];
            b.data.resize(size + word.size() + 1);
            std::memcpy(b.data.data() + size, word.data(), word.size());
            size += word.size();
            b.data[size++] = std::byte(w + 1 == line_words ? '\n' : ' ');
          }
        }
      },
      out);
  out.close();
  return out.bytes_written();
}

// ---- reference -----------------------------------------------------------------------------------------

result run(std::string_view text, const options& opt, const std::string& name) {
  const auto start = std::chrono::steady_clock::now();
  if (opt.threads == 0) throw std::invalid_argument("wordcount: threads must be >= 1");
  const unsigned threads = opt.threads;

  std::vector<word_table> tables(threads);
  std::vector<bucketed_entries> parts(threads);
  run_parallel(threads, [&](unsigned t) {
    const std::uint64_t begin = word_boundary(text, split_range(text.size(), threads, t).begin);
    const std::uint64_t end = word_boundary(text, split_range(text.size(), threads, t).end);
    count_range(text, begin, end, tables[t], name);
    parts[t] = bucket_entries(tables[t]);
  });

  // Groups of consecutive buckets of about equal entry counts, taken by threads as they finish.
  std::vector<std::size_t> bucket_total(prefix_buckets, 0);
  std::size_t all_entries = 0;
  for (const auto& p : parts)
    for (unsigned b = 0; b < prefix_buckets; ++b) bucket_total[b] += p.begin[b + 1] - p.begin[b];
  for (std::size_t n : bucket_total) all_entries += n;
  const std::size_t group_target = std::max<std::size_t>(1, all_entries / (8 * threads));
  std::vector<unsigned> group_start{0};
  std::size_t in_group = 0;
  for (unsigned b = 0; b < prefix_buckets; ++b) {
    in_group += bucket_total[b];
    if (in_group >= group_target && b + 1 < prefix_buckets) group_start.push_back(b + 1), in_group = 0;
  }
  group_start.push_back(prefix_buckets);
  const std::size_t groups = group_start.size() - 1;
  std::vector<std::vector<word_view>> merged(groups);
  std::atomic<std::size_t> next_group{0};
  run_parallel(threads, [&](unsigned) {
    for (std::size_t g; (g = next_group.fetch_add(1, std::memory_order_relaxed)) < groups;)
      merged[g] = merge_buckets(parts, group_start[g], group_start[g + 1]);
  });

  result r;
  r.threads = threads;
  r.dataset_bytes = text.size();
  std::size_t distinct = 0;
  for (const auto& group : merged) distinct += group.size();
  r.counts.reserve(distinct);
  std::string lines;  // "WORD COUNT\n" for the digest, hashed in pieces
  uLong crc = 0;
  for (const auto& group : merged) {
    for (const auto& [word, count] : group) {
      r.words += count;
      r.counts.emplace_back(std::string(word), count);
      lines.append(word);
      lines.push_back(' ');
      char digits[24];
      lines.append(digits, std::to_chars(digits, digits + sizeof digits, count).ptr);
      lines.push_back('\n');
    }
    crc = crc32_z(crc, reinterpret_cast<const Bytef*>(lines.data()), lines.size());
    lines.clear();
  }
  r.distinct_words = r.counts.size();
  r.digest = static_cast<std::uint32_t>(crc);

  std::vector<std::size_t> order(r.counts.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const std::size_t top = std::min<std::size_t>(10, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top), order.end(),
                    [&](std::size_t a, std::size_t b) {
                      return r.counts[a].second != r.counts[b].second
                                 ? r.counts[a].second > r.counts[b].second
                                 : a < b;  // counts is sorted by word
                    });
  for (std::size_t i = 0; i < top; ++i) r.top.push_back(r.counts[order[i]]);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

result run_file(const std::string& path, const options& opt, unsigned repeats) {
  const auto start = std::chrono::steady_clock::now();
  const mapped_file file = mapped_file::open(path);
  const auto bytes = file.bytes();
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  result r = run(text, opt, path);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (unsigned i = 1; i < repeats; ++i) r.warm_seconds.push_back(run(text, opt, path).seconds);
  return r;
}

nlohmann::json to_json(const result& r) {
  nlohmann::json top = nlohmann::json::array();
  for (const auto& [word, count] : r.top) top.push_back({{"word", word}, {"count", count}});
  nlohmann::json j = {{"app", "wordcount"},
                      {"words", r.words},
                      {"distinct_words", r.distinct_words},
                      {"top", top},
                      {"digest", hex32(r.digest)},
                      {"threads", r.threads},
                      {"dataset_bytes", r.dataset_bytes},
                      {"passes", 1}};
  add_timing(j, static_cast<double>(r.dataset_bytes), r.seconds, r.warm_seconds);
  return j;
}

}  // namespace xf::apps::wordcount
