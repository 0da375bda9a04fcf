// Fault injection: parsing XEFLOW_INJECT and claiming an armed fault when its event comes.
#include "framework/core/fault_injection.hpp"

#include <array>
#include <charconv>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace xf::inject {

std::atomic<std::uint32_t> armed_sites{0};

namespace {

constexpr std::array<std::string_view, static_cast<std::size_t>(site::count)> site_names{
    "cache_read", "sink_write", "cpu_frame", "gpu_frame", "worker", "topic_alloc", "thread_create"};
constexpr std::array<std::string_view, 9> kind_names{"eio",  "enospc", "short", "hang", "throw",
                                                     "fail", "kill",   "nomem", "again"};

constexpr std::uint32_t bit(kind k) {
  return 1u << static_cast<unsigned>(k);
}
/// The kinds each site can do, a bit per kind (indexed like `site`).
constexpr std::array<std::uint32_t, static_cast<std::size_t>(site::count)> site_kinds{
    bit(kind::eio) | bit(kind::short_) | bit(kind::hang),
    bit(kind::eio) | bit(kind::enospc),
    bit(kind::throw_),
    bit(kind::fail),
    bit(kind::kill),
    bit(kind::nomem),
    bit(kind::again)};

struct fault {
  site where;
  kind what;
  std::uint64_t at;
  std::string op;  ///< empty: any operator
  std::atomic<bool> fired{false};
};

// Armed before the run's threads start and kept until the process ends: a thread may still be inside
// fires() when a test arms again, so a replaced list is not freed but kept in `retired`.
std::atomic<std::vector<std::unique_ptr<fault>>*> faults{nullptr};
std::mutex retired_mutex;
std::vector<std::unique_ptr<std::vector<std::unique_ptr<fault>>>> retired;

std::string allowed_list() {
  std::string text;
  for (std::size_t s = 0; s < site_names.size(); ++s) {
    text += (text.empty() ? "" : "; ") + std::string(site_names[s]) + ":";
    bool first = true;
    for (std::size_t k = 0; k < kind_names.size(); ++k) {
      if ((site_kinds[s] & bit(static_cast<kind>(k))) == 0) continue;
      text += (first ? "" : "|") + std::string(kind_names[k]);
      first = false;
    }
  }
  return text;
}

[[noreturn]] void malformed(std::string_view part, const std::string& why) {
  throw std::invalid_argument("XEFLOW_INJECT: '" + std::string(part) + "': " + why +
                              " (expected SITE[/OPERATOR]:KIND@N[,...] with " + allowed_list() + ")");
}

std::unique_ptr<fault> parse_one(std::string_view part) {
  const std::size_t colon = part.find(':');
  const std::size_t at = part.rfind('@');
  if (colon == std::string_view::npos || at == std::string_view::npos || at < colon)
    malformed(part, "no SITE:KIND@N");
  std::string_view where = part.substr(0, colon);
  std::string op;
  if (const std::size_t slash = where.find('/'); slash != std::string_view::npos) {
    op = where.substr(slash + 1);
    where = where.substr(0, slash);
    if (op.empty()) malformed(part, "an empty operator name after '/'");
  }
  auto f = std::make_unique<fault>();
  f->op = std::move(op);
  std::size_t s = 0;
  while (s < site_names.size() && site_names[s] != where) ++s;
  if (s == site_names.size()) malformed(part, "unknown site '" + std::string(where) + "'");
  f->where = static_cast<site>(s);
  const std::string_view what = part.substr(colon + 1, at - colon - 1);
  std::size_t k = 0;
  while (k < kind_names.size() && kind_names[k] != what) ++k;
  if (k == kind_names.size()) malformed(part, "unknown kind '" + std::string(what) + "'");
  f->what = static_cast<kind>(k);
  if ((site_kinds[s] & bit(f->what)) == 0)
    malformed(part, "site " + std::string(where) + " cannot do " + std::string(what));
  const std::string_view number = part.substr(at + 1);
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), f->at);
  if (number.empty() || ec != std::errc{} || end != number.data() + number.size())
    malformed(part, "N must be a non-negative integer, not '" + std::string(number) + "'");
  return f;
}

}  // namespace

std::optional<fired> fires(site s, std::uint64_t first, std::uint64_t end, std::string_view op) {
  const auto* list = faults.load(std::memory_order_acquire);
  if (list == nullptr) return std::nullopt;
  for (const auto& f : *list) {
    if (f->where != s || f->at < first || f->at >= end) continue;
    if (!f->op.empty() && f->op != op) continue;
    if (f->fired.exchange(true, std::memory_order_relaxed)) continue;
    return fired{f->what, f->at};
  }
  return std::nullopt;
}

std::optional<std::uint64_t> armed_at(site s, std::string_view op) {
  const auto* list = faults.load(std::memory_order_acquire);
  if (list == nullptr) return std::nullopt;
  for (const auto& f : *list)
    if (f->where == s && (f->op.empty() || f->op == op)) return f->at;
  return std::nullopt;
}

void arm(std::string_view spec) {
  auto list = std::make_unique<std::vector<std::unique_ptr<fault>>>();
  std::uint32_t sites = 0;
  while (!spec.empty()) {
    const std::size_t comma = spec.find(',');
    const std::string_view part = spec.substr(0, comma);
    if (part.empty()) malformed(spec, "an empty fault between commas");
    list->push_back(parse_one(part));
    sites |= 1u << static_cast<unsigned>(list->back()->where);
    spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
  }
  // The list before the bits: a site that sees its bit finds its faults (acquire in fires()).
  std::vector<std::unique_ptr<fault>>* replaced = faults.exchange(list.release(), std::memory_order_acq_rel);
  armed_sites.store(sites, std::memory_order_relaxed);
  if (replaced != nullptr) {
    const std::lock_guard lock(retired_mutex);
    retired.emplace_back(replaced);
  }
}

std::string arm_from_environment() {
  const char* spec = std::getenv("XEFLOW_INJECT");
  if (spec == nullptr) return "";
  arm(spec);
  return spec;
}

std::string describe(site s, kind k, std::uint64_t at) {
  return std::string(site_names[static_cast<std::size_t>(s)]) + ":" +
         std::string(kind_names[static_cast<std::size_t>(k)]) + "@" + std::to_string(at);
}

}  // namespace xf::inject
