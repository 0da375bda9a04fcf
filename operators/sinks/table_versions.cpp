// A table that changes mid-stream: its writer and its checker.
#include "operators/sinks/table_versions.hpp"

#include "framework/core/errors.hpp"

namespace xf {
namespace {

void describe_common(operator_schema<table_versions_params>& s) {
  using params = table_versions_params;
  s.param(&params::every, "every", "frames between two versions: version v is for frames from v · every on",
          params{}.every, 1);
  s.param(&params::entries, "entries", "table entries each version holds (at most 65536)", params{}.entries,
          1, 65536);
}

std::string table_problem(const table_versions_params& p, std::uint64_t bytes) {
  if (bytes < std::uint64_t{p.entries} * sizeof(std::uint32_t))
    return "the shared object holds " + std::to_string(bytes / sizeof(std::uint32_t)) +
           " u32 entries, fewer than entries (" + std::to_string(p.entries) + ")";
  return {};
}

}  // namespace

void table_writer::describe(operator_schema<params>& s) {
  s.describe(
       "publishes version v of a u32 table (entry j = v · 65536 + j) at offset v · every, one thread: "
       "the writer of the table a table_lookup reads")
      .not_replayable();
  describe_common(s);
  s.param(&params::promise, "promise", "promise each next version's offset in advance", params{}.promise);
  s.shared("table", object_access::write, "the table it publishes", element_set{element_type::u32})
      .check_object(table_problem);
}

void table_writer::on_start(const operator_setup& setup) {
  if (setup.threads != 1)
    throw std::invalid_argument("publishes versions in offset order: give it one thread, not " +
                                std::to_string(setup.threads));
  table_ = setup.objects.at(0);
  if (params_.promise) table_->promise(static_cast<std::uint64_t>(params_.every));
}

void table_writer::on_frame(std::uint64_t offset, const frame_in&) {
  const auto every = static_cast<std::uint64_t>(params_.every);
  if ((offset + 1) % every != 0) return;
  const std::uint64_t v = (offset + 1) / every;
  const std::span<std::uint32_t> table = table_->edit_as<std::uint32_t>();
  for (std::uint32_t j = 0; j < params_.entries; ++j) table[j] = table_version_entry(v, j);
  table_->publish(offset + 1);
  versions_.fetch_add(1, std::memory_order_relaxed);
  if (params_.promise) table_->promise(offset + 1 + every);
}

operator_counters table_writer::counters() const {
  return {{"versions", versions_.load(std::memory_order_relaxed)}};
}

void table_check::describe(operator_schema<params>& s) {
  s.describe(
      "checks that frame o of a table_lookup's output holds entries of version o / every only, and "
      "that the table read as of offset o is that version");
  describe_common(s);
  s.shared("table", object_access::read, "the table the lookup used", element_set{element_type::u32})
      .check_object(table_problem);
}

void table_check::on_start(const operator_setup& setup) {
  name_ = setup.name;
  table_ = setup.objects.at(0);
}

void table_check::on_frame(std::uint64_t offset, const frame_in& in) {
  const std::uint64_t expected = offset / static_cast<std::uint64_t>(params_.every);
  const object_version version = table_->read(offset);
  std::string wrong;
  if (version.number != expected)
    wrong = "the table as of offset " + std::to_string(offset) + " is version " +
            std::to_string(version.number) + ", not " + std::to_string(expected);
  const std::span<const std::uint32_t> values = in.as<std::uint32_t>();
  for (std::size_t i = 0; i < values.size() && wrong.empty(); ++i)
    if (values[i] >> 16 != (expected & 0xffffu) || (values[i] & 0xffffu) >= params_.entries)
      wrong = "frame " + std::to_string(offset) + " element " + std::to_string(i) + " is " +
              std::to_string(values[i]) + ", not an entry of version " + std::to_string(expected);
  frames_.fetch_add(1, std::memory_order_relaxed);
  std::uint64_t last = last_version_.load(std::memory_order_relaxed);
  while (version.number > last && !last_version_.compare_exchange_weak(last, version.number)) {
  }
  if (wrong.empty()) return;
  wrong_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(first_wrong_mutex_);
  if (first_wrong_.empty()) first_wrong_ = wrong;
}

void table_check::on_stop() {
  if (wrong_.load() != 0)
    throw std::runtime_error(std::to_string(wrong_.load()) +
                             " frames used the wrong version; first: " + first_wrong_);
}

operator_counters table_check::counters() const {
  return {
      {"frames", frames_.load()}, {"wrong_frames", wrong_.load()}, {"last_version", last_version_.load()}};
}

}  // namespace xf
