// The operator harness (operator_harness.hpp): a topology built around one operator, its inputs fed from
// memory and its outputs kept in memory, run on the host executor.
#include "framework/launch/operator_harness.hpp"

#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"
#include "framework/model/spec_validation.hpp"
#include "framework/plan/plan.hpp"
#include "framework/runtime/executor.hpp"
#include "framework/runtime/run_control.hpp"

namespace xf {

namespace {

constexpr const char* source_class = "xeflow_harness_source";
constexpr const char* sink_class = "xeflow_harness_sink";

using captured = std::map<std::uint64_t, frame_bytes_t>;

/// What the harness's own operators reach by handle (their params are numbers, as a topology's are):
/// the frames a source feeds, the map a sink fills. Entries live for one run() of one harness.
struct handles {
  std::mutex lock;
  std::int64_t next = 1;
  std::map<std::int64_t, const std::vector<frame_bytes_t>*> feeds;
  std::map<std::int64_t, std::pair<std::mutex*, captured*>> takes;

  static handles& instance() {
    static handles h;
    return h;
  }
};

/// Registers `value` under a fresh handle for one run and removes it after.
template <class Map, class Value>
class handle_lease {
 public:
  handle_lease(Map handles::*table, Value value) : table_(table) {
    handles& h = handles::instance();
    std::lock_guard guard(h.lock);
    id_ = h.next++;
    (h.*table_)[id_] = value;
  }
  ~handle_lease() {
    handles& h = handles::instance();
    std::lock_guard guard(h.lock);
    (h.*table_).erase(id_);
  }
  handle_lease(const handle_lease&) = delete;
  handle_lease& operator=(const handle_lease&) = delete;
  std::int64_t id() const { return id_; }

 private:
  Map handles::*table_;
  std::int64_t id_ = 0;
};

template <class Map>
auto lookup(Map handles::*table, std::int64_t id) {
  handles& h = handles::instance();
  std::lock_guard guard(h.lock);
  const auto it = (h.*table).find(id);
  if (it == (h.*table).end())
    throw std::invalid_argument("no operator harness has handle " + std::to_string(id) +
                                " (its classes run only inside operator_harness::run)");
  return it->second;
}

/// Publishes the frames given to the harness, frame o at offset o (a function of the offset, as a source
/// must be).
class harness_source final : public cpu_source {
 public:
  struct params {
    std::int64_t feed = 0;
  };
  static void describe(operator_schema<params>& s) {
    s.describe("the operator harness's input: frames given in memory (operator_harness.hpp)");
    s.param(&params::feed, "feed", "the harness's handle of the frames", std::int64_t{0}, 0);
  }
  explicit harness_source(const params& p) : frames_(lookup(&handles::feeds, p.feed)) {}
  bool produce(std::uint64_t offset, frame_out& out) override {
    if (offset >= frames_->size()) return false;
    const frame_bytes_t& f = (*frames_)[offset];
    std::memcpy(out.data, f.data(), f.size());
    out.bytes = f.size();
    return true;
  }

 private:
  const std::vector<frame_bytes_t>* frames_;
};

/// Keeps a copy of every frame it receives, by offset.
class harness_sink final : public cpu_sink {
 public:
  struct params {
    std::int64_t into = 0;
  };
  static void describe(operator_schema<params>& s) {
    s.describe("the operator harness's output: keeps every frame in memory (operator_harness.hpp)");
    s.param(&params::into, "into", "the harness's handle of the frames kept", std::int64_t{0}, 0);
  }
  explicit harness_sink(const params& p) { std::tie(lock_, frames_) = lookup(&handles::takes, p.into); }
  void on_frame(std::uint64_t offset, const frame_in& in) override {
    frame_bytes_t bytes(in.data, in.data + in.bytes);
    std::lock_guard guard(*lock_);
    (*frames_)[offset] = std::move(bytes);
  }

 private:
  std::mutex* lock_ = nullptr;
  captured* frames_ = nullptr;
};

}  // namespace

operator_harness::operator_harness(operator_registry& registry, op under_test)
    : registry_(&registry), under_test_(std::move(under_test)) {
  if (registry.find(source_class) == nullptr) registry.add<harness_source>(source_class);
  if (registry.find(sink_class) == nullptr) registry.add<harness_sink>(sink_class);
}

operator_harness& operator_harness::frame_bytes(std::uint64_t bytes) {
  frame_bytes_ = bytes;
  return *this;
}
operator_harness& operator_harness::capacity(std::uint32_t frames) {
  capacity_ = frames;
  return *this;
}
operator_harness& operator_harness::element(element_type type) {
  element_ = type;
  return *this;
}
operator_harness& operator_harness::outputs(std::uint32_t topics) {
  outputs_ = topics;
  return *this;
}
operator_harness& operator_harness::input(std::vector<frame_bytes_t> frames) {
  inputs_.push_back(std::move(frames));
  return *this;
}

harness_result operator_harness::run() const {
  const std::string& name = under_test_.spec().name;
  for (std::size_t i = 0; i < inputs_.size(); ++i)
    for (std::size_t o = 0; o < inputs_[i].size(); ++o)
      if (inputs_[i][o].size() > frame_bytes_)
        throw std::invalid_argument("operator_harness: input " + std::to_string(i) + "'s frame at offset " +
                                    std::to_string(o) + " holds " + std::to_string(inputs_[i][o].size()) +
                                    " bytes, more than the topics' frame size of " +
                                    std::to_string(frame_bytes_) + " (frame_bytes)");
  const operator_entry* entry = registry_->find(under_test_.spec().class_name);
  const std::uint32_t outputs =
      outputs_.value_or(entry != nullptr && entry->info.role == operator_role::sink ? 0u : 1u);

  topology_builder b{"harness_" + name};
  const auto add_topic = [&](const std::string& topic) {
    b.topic(topic).frame_bytes(frame_bytes_).capacity(capacity_).element(element_);
  };
  // Leases of the handles the harness's operators find their frames by, for this run.
  std::vector<std::unique_ptr<handle_lease<decltype(handles::feeds), const std::vector<frame_bytes_t>*>>>
      feeds;
  std::vector<std::unique_ptr<handle_lease<decltype(handles::takes), std::pair<std::mutex*, captured*>>>>
      takes;
  std::vector<std::string> in_topics, out_topics;
  for (std::size_t i = 0; i < inputs_.size(); ++i) {
    const std::string topic = "in" + std::to_string(i);
    add_topic(topic);
    in_topics.push_back(topic);
    feeds.push_back(
        std::make_unique<handle_lease<decltype(handles::feeds), const std::vector<frame_bytes_t>*>>(
            &handles::feeds, &inputs_[i]));
    b.link({}, op("harness_feed" + std::to_string(i), source_class).param("feed", feeds.back()->id()),
           {topic});
  }
  std::vector<captured> kept(outputs);
  std::vector<std::mutex> locks(outputs);
  for (std::uint32_t j = 0; j < outputs; ++j) {
    const std::string topic = "out" + std::to_string(j);
    add_topic(topic);
    out_topics.push_back(topic);
    takes.push_back(
        std::make_unique<handle_lease<decltype(handles::takes), std::pair<std::mutex*, captured*>>>(
            &handles::takes, std::pair{&locks[j], &kept[j]}));
    b.link({topic}, op("harness_take" + std::to_string(j), sink_class).param("into", takes.back()->id()), {});
  }
  b.link(in_topics, under_test_, out_topics);
  topology_spec spec = b.build();
  validate_topology(spec, *registry_);
  plan_options options;
  options.force_host = true;
  const plan p = make_plan(spec, *registry_, options);
  run_control control;
  harness_result result;
  result.stats = run_topology(p, spec, control);
  if (result.stats.status == run_status::failed) result.error = result.stats.error;
  for (const operator_stats& o : result.stats.operators)
    if (o.name == name) result.counters = o.counters;
  result.outputs = std::move(kept);
  return result;
}

}  // namespace xf
