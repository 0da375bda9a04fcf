// Checkpoint files (format, atomic write, refusals, resume offsets) and the thread that commits them.
#include "framework/runtime/checkpoint.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "framework/runtime/run_context.hpp"

namespace xf {
namespace {

constexpr const char* checkpoint_format_name = "xeflow-checkpoint";

std::string system_reason() {
  return std::strerror(errno);
}

/// Disjoint sets over the plan's topics: an operator joins its inputs' and outputs' streams (a 1:1 map
/// keeps offsets, so its input and output restart together).
struct topic_sets {
  std::vector<std::size_t> parent;
  explicit topic_sets(const plan& p) : parent(p.topics.size()) {
    std::iota(parent.begin(), parent.end(), std::size_t{0});
    for (const planned_operator& po : p.operators) {
      std::vector<std::size_t> touched = po.inputs;
      touched.insert(touched.end(), po.outputs.begin(), po.outputs.end());
      for (std::size_t k = 1; k < touched.size(); ++k) join(touched[0], touched[k]);
    }
  }
  std::size_t root(std::size_t t) {
    while (parent[t] != t) t = parent[t] = parent[parent[t]];
    return t;
  }
  void join(std::size_t a, std::size_t b) { parent[root(a)] = root(b); }
};

/// Each topic's first offset given each sink's committed offset (plan order of sink_operators).
std::vector<std::uint64_t> offsets_from(const plan& p, const std::vector<std::size_t>& sinks,
                                        const std::vector<std::uint64_t>& committed) {
  topic_sets sets(p);
  std::vector<std::uint64_t> lowest(p.topics.size(), ~std::uint64_t{0});
  for (std::size_t s = 0; s < sinks.size(); ++s)
    for (std::size_t t : p.operators[sinks[s]].inputs) {
      std::uint64_t& low = lowest[sets.root(t)];
      low = std::min(low, committed[s]);
    }
  std::vector<std::uint64_t> first(p.topics.size());
  for (std::size_t t = 0; t < p.topics.size(); ++t) {
    const std::uint64_t low = lowest[sets.root(t)];
    first[t] = low == ~std::uint64_t{0} ? 0 : low;
  }
  return first;
}

}  // namespace

std::string topology_hash(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64: offset basis and prime
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

std::string checkpoint_json(const checkpoint_state& state) {
  nlohmann::ordered_json doc;
  doc["format"] = checkpoint_format_name;
  doc["version"] = checkpoint_format_version;
  doc["topology"] = state.topology_name;
  doc["topology_hash"] = state.topology_hash;
  doc["complete"] = state.complete;
  doc["sources"] = nlohmann::ordered_json::array();
  for (const auto& s : state.sources)
    doc["sources"].push_back({{"name", s.name}, {"stream", s.stream}, {"restart_offset", s.restart_offset}});
  doc["sinks"] = nlohmann::ordered_json::array();
  for (const auto& s : state.sinks)
    doc["sinks"].push_back({{"name", s.name}, {"topic", s.topic}, {"committed", s.committed}});
  // Names may hold any bytes a topology allows: replace what is not UTF-8 rather than fail the commit.
  return doc.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

checkpoint_state parse_checkpoint(const std::string& text) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error("not a checkpoint: not JSON");
  }
  if (!doc.is_object() || doc.value("format", "") != checkpoint_format_name)
    throw std::runtime_error(std::string("not a checkpoint: no \"format\": \"") + checkpoint_format_name +
                             "\"");
  if (!doc.contains("version") || !doc["version"].is_number_unsigned() ||
      doc["version"].get<std::uint64_t>() != checkpoint_format_version)
    throw std::runtime_error("checkpoint format version " +
                             (doc.contains("version") ? doc["version"].dump() : "?") +
                             ", this xeflow-run reads version " + std::to_string(checkpoint_format_version));
  checkpoint_state state;
  try {
    state.topology_hash = doc.at("topology_hash").get<std::string>();
    state.topology_name = doc.at("topology").get<std::string>();
    state.complete = doc.at("complete").get<bool>();
    for (const auto& s : doc.at("sources"))
      state.sources.push_back({s.at("name").get<std::string>(), s.at("stream").get<std::string>(),
                               s.at("restart_offset").get<std::uint64_t>()});
    for (const auto& s : doc.at("sinks"))
      state.sinks.push_back({s.at("name").get<std::string>(), s.at("topic").get<std::string>(),
                             s.at("committed").get<std::uint64_t>()});
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("a field is missing or of the wrong type: ") + e.what());
  }
  return state;
}

checkpoint_state read_checkpoint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read '" + path + "': " + system_reason());
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return parse_checkpoint(text.str());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("'" + path + "': " + e.what());
  }
}

void write_checkpoint(const std::string& path, const checkpoint_state& state) {
  const std::string text = checkpoint_json(state) + "\n";
  const std::string temporary = path + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot write '" + temporary + "': " + system_reason());
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t put = ::write(fd, text.data() + done, text.size() - done);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) {
      const std::string why = system_reason();
      ::close(fd);
      throw std::runtime_error("cannot write '" + temporary + "': " + why);
    }
    done += static_cast<std::size_t>(put);
  }
  // The bytes before the name: a rename that reached the disk never names a file whose contents did not.
  if (::fsync(fd) != 0) {
    const std::string why = system_reason();
    ::close(fd);
    throw std::runtime_error("fsync of '" + temporary + "' failed: " + why);
  }
  if (::close(fd) != 0) throw std::runtime_error("close of '" + temporary + "' failed: " + system_reason());
  if (::rename(temporary.c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot rename '" + temporary + "' onto '" + path + "': " + system_reason());
  const std::size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) throw std::runtime_error("cannot open the directory of '" + path + "': " + system_reason());
  const bool synced = ::fsync(dir_fd) == 0;
  const std::string why = synced ? "" : system_reason();
  ::close(dir_fd);
  if (!synced) throw std::runtime_error("fsync of the directory of '" + path + "' failed: " + why);
}

std::vector<std::size_t> sink_operators(const plan& p) {
  std::vector<std::size_t> sinks;
  for (std::size_t i = 0; i < p.operators.size(); ++i)
    if (p.operators[i].entry->info.role == operator_role::sink) sinks.push_back(i);
  return sinks;
}

std::optional<std::string> checkpoint_refusal(const plan& p) {
  std::vector<std::string> reasons;
  if (p.ranks > 1)
    reasons.push_back("a run over several ranks is not checkpointed (its bridges start at offset 0)");
  if (!p.objects.empty()) {
    std::string names;
    for (const planned_object& o : p.objects) names += (names.empty() ? "'" : ", '") + o.spec->name + "'";
    reasons.push_back(
        "shared object" + std::string(p.objects.size() > 1 ? "s " : " ") + names +
        ": their versions follow the stream from its start, and a checkpoint does not hold them");
  }
  for (std::size_t i : sink_operators(p)) {
    const planned_operator& po = p.operators[i];
    const operator_info& info = po.entry->info;
    const std::string who = "operator '" + po.spec->name + "' (" + info.class_name + ")";
    if (info.gpu)
      reasons.push_back(who +
                        " folds the stream into an accumulator that every block updates with atomics, in any "
                        "order of offsets: no state of it belongs to a committed offset, so it cannot be "
                        "checkpointed");
    else if (!info.resumable)
      reasons.push_back(
          who +
          " is a sink that does not say it can be restarted from a committed offset: it may keep "
          "state (a count, a sum, a table) that a restart would lose or count twice");
  }
  if (reasons.empty()) return std::nullopt;
  std::string text = "--checkpoint and --resume refuse this topology: ";
  for (std::size_t k = 0; k < reasons.size(); ++k) text += (k ? "; " : "") + reasons[k];
  return text;
}

std::vector<std::uint64_t> resume_offsets(const plan& p, const checkpoint_state& state) {
  const std::vector<std::size_t> sinks = sink_operators(p);
  std::vector<std::uint64_t> committed(sinks.size());
  for (std::size_t s = 0; s < sinks.size(); ++s) {
    const std::string& name = p.operators[sinks[s]].spec->name;
    const auto found = std::find_if(state.sinks.begin(), state.sinks.end(),
                                    [&](const checkpoint_state::sink_entry& e) { return e.name == name; });
    if (found == state.sinks.end())
      throw std::runtime_error("the checkpoint has no entry for sink '" + name + "'");
    committed[s] = found->committed;
  }
  if (state.sinks.size() != sinks.size())
    throw std::runtime_error("the checkpoint names " + std::to_string(state.sinks.size()) +
                             " sinks, the topology has " + std::to_string(sinks.size()));
  return offsets_from(p, sinks, committed);
}

checkpointer::checkpointer(run_context& run, const checkpoint_options& options,
                           std::vector<std::uint64_t> first_offsets)
    : run_(run), options_(options), first_offsets_(std::move(first_offsets)) {
  const plan& p = run_.plan_of();
  if (first_offsets_.empty()) first_offsets_.assign(p.topics.size(), 0);
  sinks_ = sink_operators(p);
  for (std::size_t s = 0; s < sinks_.size(); ++s) {
    const std::uint64_t first = first_offsets_[p.operators[sinks_[s]].inputs[0]];
    released_.push_back(first);
    committed_.push_back(
        std::max(first, s < options_.committed_before.size() ? options_.committed_before[s] : 0));
  }
}

checkpointer::~checkpointer() {
  stop();
}

void checkpointer::start() {
  // A first commit at once: a checkpoint left by an earlier run at this path (say a completed one) never
  // stands for this run, which may be killed before its first interval.
  commit(false);
  thread_ = std::thread([this] { loop(); });
}

void checkpointer::stop() noexcept {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void checkpointer::loop() {
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, options_.interval, [&] { return stopping_; })) {
    lock.unlock();
    if (run_.control().aborting()) return;  // a failed run: its last commit stands
    commit(false);
    lock.lock();
  }
}

void checkpointer::advance() {
  const plan& p = run_.plan_of();
  for (std::size_t s = 0; s < sinks_.size(); ++s) {
    const planned_operator& po = p.operators[sinks_[s]];
    const topic_view& v = run_.view(po.inputs[0]);
    // released_or_later holds for `o` exactly when the group released o: a later occupant of o's slot is
    // published only after every group released o. Acquire: the sink's work on o happened before.
    std::uint64_t o = released_[s];
    while (v.released_or_later(po.input_groups[0], o)) ++o;
    released_[s] = o;
  }
}

checkpoint_state checkpointer::state_of(bool complete) const {
  const plan& p = run_.plan_of();
  checkpoint_state state;
  state.topology_hash = options_.topology_hash;
  state.topology_name = options_.topology_name;
  state.complete = complete;
  const std::vector<std::uint64_t> first = offsets_from(p, sinks_, committed_);
  for (std::size_t i = 0; i < p.operators.size(); ++i) {
    const planned_operator& po = p.operators[i];
    if (po.entry->info.role != operator_role::source) continue;
    state.sources.push_back({po.spec->name, p.topics[po.outputs[0]].spec->name, first[po.outputs[0]]});
  }
  for (std::size_t s = 0; s < sinks_.size(); ++s) {
    const planned_operator& po = p.operators[sinks_[s]];
    state.sinks.push_back({po.spec->name, p.topics[po.inputs[0]].spec->name, committed_[s]});
  }
  return state;
}

bool checkpointer::commit(bool complete) {
  const plan& p = run_.plan_of();
  advance();
  std::vector<std::uint64_t> durable = released_;
  // Make durable what is about to be committed: every offset below released_ went through its sink's
  // on_frame before this call, so make_durable covers it.
  for (std::size_t s = 0; s < sinks_.size(); ++s) {
    const std::size_t i = sinks_[s];
    auto* sink = dynamic_cast<cpu_sink*>(run_.instances()[i].cpu.get());
    if (sink == nullptr) continue;
    try {
      sink->make_durable();
    } catch (...) {
      if (!run_.control().failure())
        run_.control().fail(run_.current_error(i, p.operators[i].inputs[0], std::nullopt));
      return false;
    }
  }
  const std::vector<std::uint64_t> before = committed_;
  for (std::size_t s = 0; s < sinks_.size(); ++s) committed_[s] = std::max(committed_[s], durable[s]);
  if (written_ && committed_ == before && !complete) return true;  // nothing new to say
  try {
    write_checkpoint(options_.path, state_of(complete));
    written_ = true;
  } catch (const std::exception& e) {
    committed_ = before;
    if (!run_.control().failure())
      run_.control().fail(run_error(fault_site{}, std::string("checkpoint: ") + e.what()));
    return false;
  }
  spdlog::debug("checkpoint {}: committed{}", options_.path, complete ? " (complete)" : "");
  return true;
}

}  // namespace xf
