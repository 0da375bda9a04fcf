// The C++ topology builder.
#include "framework/model/topology_builder.hpp"

namespace xf {

op::op(std::string name, std::string class_name) {
  spec_.name = std::move(name);
  spec_.class_name = std::move(class_name);
}
op& op::on(placement where) {
  spec_.on = where;
  return *this;
}
op& op::threads(std::uint32_t count) {
  spec_.threads = count;
  return *this;
}
op& op::warps(std::uint32_t count) {
  spec_.warps = count;
  return *this;
}
op& op::param(const std::string& key, bool value) {
  spec_.params[key] = value;
  return *this;
}
op& op::param(const std::string& key, int value) {
  spec_.params[key] = std::int64_t{value};
  return *this;
}
op& op::param(const std::string& key, std::int64_t value) {
  spec_.params[key] = value;
  return *this;
}
op& op::param(const std::string& key, std::uint64_t value) {
  spec_.params[key] = static_cast<std::int64_t>(value);
  return *this;
}
op& op::param(const std::string& key, double value) {
  spec_.params[key] = value;
  return *this;
}
op& op::param(const std::string& key, const char* value) {
  spec_.params[key] = std::string(value);
  return *this;
}
op& op::param(const std::string& key, std::string value) {
  spec_.params[key] = std::move(value);
  return *this;
}

op& op::param(const std::string& key, const dt::datatype& value) {
  spec_.params[key] = value;
  return *this;
}

op& op::shared(const std::string& slot, const std::string& object) {
  spec_.shared[slot] = object;
  return *this;
}

op& op::rank(std::uint32_t number) {
  spec_.rank = number;
  spec_.rank_name.clear();
  return *this;
}
op& op::rank(std::string name) {
  spec_.rank = 0;  // validation resolves the name
  spec_.rank_name = std::move(name);
  return *this;
}
op& op::device(std::uint32_t ordinal) {
  spec_.device = ordinal;
  return *this;
}

topic_builder& topic_builder::frame_bytes(std::uint64_t bytes) {
  spec().frame_bytes = bytes;
  return *this;
}
topic_builder& topic_builder::capacity(std::uint32_t frames) {
  spec().capacity = frames;
  return *this;
}
topic_builder& topic_builder::element(element_type type) {
  spec().element = type;
  return *this;
}
topic_builder& topic_builder::layout(frame_layout l) {
  spec().layout = l;
  return *this;
}

topic_builder& topic_builder::rows_per_frame(std::uint32_t rows) {
  spec().rows_per_frame = rows;
  return *this;
}

topic_builder& topic_builder::column(std::string name, column_layout layout) {
  spec().columns.push_back({std::move(name), layout});
  return *this;
}

topic_builder& topic_builder::transfer(transfer_mode t) {
  spec().transfer = t;
  return *this;
}

shared_object_builder& shared_object_builder::element(element_type type) {
  spec().element = type;
  return *this;
}
shared_object_builder& shared_object_builder::bytes(std::uint64_t size) {
  spec().bytes = size;
  (*counts_)[index_] = 0;
  return *this;
}
shared_object_builder& shared_object_builder::count(std::uint64_t elements) {
  (*counts_)[index_] = elements;
  return *this;
}
shared_object_builder& shared_object_builder::init(std::string path) {
  spec().init = std::move(path);
  return *this;
}
shared_object_builder& shared_object_builder::versions(std::uint32_t buffers) {
  spec().versions = buffers;
  return *this;
}
shared_object_builder& shared_object_builder::protocol(shared::protocol p) {
  spec().protocol = p;
  return *this;
}
shared_object_builder& shared_object_builder::block_bytes(std::uint64_t size) {
  spec().block_bytes = size;
  return *this;
}

runtime_builder& runtime_builder::executor(executor_kind e) {
  spec_->executor = e;
  return *this;
}
runtime_builder& runtime_builder::blocks(std::uint32_t count) {
  spec_->blocks = count;
  return *this;
}
runtime_builder& runtime_builder::warps_per_block(std::uint32_t count) {
  spec_->warps_per_block = count;
  return *this;
}
runtime_builder& runtime_builder::partition(partition_policy p) {
  spec_->partition = p;
  return *this;
}
runtime_builder& runtime_builder::tuning(tuning_spec t) {
  spec_->tuning = t;
  return *this;
}
runtime_builder& runtime_builder::coherence(coherence_spec c) {
  spec_->coherence = c;
  return *this;
}
runtime_builder& runtime_builder::watchdog_ms(std::uint32_t ms) {
  spec_->watchdog_ms = ms;
  return *this;
}
runtime_builder& runtime_builder::spread_warps(bool on) {
  spec_->spread_warps = on;
  return *this;
}

runtime_builder& runtime_builder::index_rest(std::uint32_t frames) {
  spec_->index_rest = frames;
  return *this;
}

runtime_builder& runtime_builder::timer_slack_us(std::uint32_t us) {
  spec_->timer_slack_us = us;
  return *this;
}
runtime_builder& runtime_builder::max_sleep_us(std::uint32_t us) {
  spec_->max_sleep_us = us;
  return *this;
}
runtime_builder& runtime_builder::part_bytes(std::uint64_t bytes) {
  spec_->part_bytes = bytes;
  return *this;
}
runtime_builder& runtime_builder::rank_name(std::string name, std::uint32_t rank) {
  spec_->ranks[std::move(name)] = rank;
  return *this;
}

topology_builder::topology_builder(std::string name) {
  spec_.name = std::move(name);
  spec_.source_name = "<builder>";
}

topic_builder topology_builder::topic(const std::string& name) {
  // Looked up, not searched: a builder of many thousand topics stays linear.
  const auto [known, fresh] = topic_index_.try_emplace(name, spec_.topics.size());
  if (!fresh) return topic_builder(spec_.topics, known->second);
  spec_.topics.push_back(topic_spec{});
  spec_.topics.back().name = name;
  return topic_builder(spec_.topics, spec_.topics.size() - 1);
}

topology_builder& topology_builder::link(std::initializer_list<std::string> inputs, const op& operation,
                                         std::initializer_list<std::string> outputs) {
  return link(std::vector<std::string>(inputs), operation, std::vector<std::string>(outputs));
}

topology_builder& topology_builder::link(const std::vector<std::string>& inputs, const op& operation,
                                         const std::vector<std::string>& outputs) {
  operator_spec spec = operation.spec();
  spec.inputs = inputs;
  spec.outputs = outputs;
  spec_.operators.push_back(std::move(spec));
  return *this;
}

shared_object_builder topology_builder::shared_object(const std::string& name) {
  for (std::size_t i = 0; i < spec_.objects.size(); ++i)
    if (spec_.objects[i].name == name) return shared_object_builder(spec_.objects, object_counts_, i);
  spec_.objects.push_back(shared_object_spec{});
  spec_.objects.back().name = name;
  object_counts_.push_back(0);
  return shared_object_builder(spec_.objects, object_counts_, spec_.objects.size() - 1);
}

topology_builder& topology_builder::datatype(const std::string& name, const dt::datatype& type) {
  for (datatype_spec& d : spec_.datatypes)
    if (d.name == name) {
      d.type = type;
      return *this;
    }
  spec_.datatypes.push_back({name, type});
  return *this;
}

topology_spec topology_builder::build() const {
  topology_spec spec = spec_;
  for (std::size_t i = 0; i < spec.objects.size(); ++i)
    if (object_counts_[i] != 0) spec.objects[i].bytes = object_counts_[i] * size_of(spec.objects[i].element);
  return spec;
}

runtime_builder topology_builder::runtime() {
  return runtime_builder(spec_.runtime);
}

}  // namespace xf
