// The C++ front end of TopologySpec: the XeFlow paper's Link(prev_topic, op, next_topic), in modern C++.
//
//   xf::topology_builder b{"pingpong"};
//   b.topic("in").frame_bytes(64 * xf::KiB).capacity(64);
//   b.topic("out").frame_bytes(64 * xf::KiB).capacity(64);
//   b.link({}, xf::op("source", "sequence_source").threads(2).param("total_bytes", "1GiB"), {"in"});
//   b.link({"in"}, xf::op("scale", "scale").on(xf::placement::gpu).param("factor", 2.0), {"out"});
//   b.link({"out"}, xf::op("verify", "verify_sink"), {});
//   xf::topology_spec spec = b.build();
//
// Shared objects are declared beside the topics and bound to an operator's object slots by name:
//
//   b.shared_object("centroids").element(xf::element_type::f32).count(96).versions(2);
//   b.link({"xyz"}, xf::op("assign", "kmeans_assign").on(xf::placement::gpu).shared("centres", "centroids"),
//          {"ids"});
//
// Datatypes are declared by name (YAML: datatypes) and given to an operator's datatype parameter by name,
// or directly (written back inline, or by name when it is the declared one):
//
//   namespace dt = xf::dt;
//   const dt::datatype face =
//       dt::subarray({32, 32, 32}, {32, 32, 1}, {0, 0, 7}, dt::array_order::c, dt::primitive::f64);
//   b.datatype("face", face);
//   b.link({"arrays"}, xf::op("pack", "pack").param("type", face), {"faces"});  // or "face", its name
//
// Operators are placed on MPI ranks by number or by a name the runtime gives a rank, and a GPU operator
// may name its rank's GPU:
//
//   b.runtime().rank_name("reader", 1);
//   b.link({"c2g"}, xf::op("scale", "scale").on(xf::placement::gpu).rank("reader").device(0), {"g2c"});
//
// build() returns the spec as written; validate_topology() checks it exactly as it checks a YAML file.
#pragma once

#include <initializer_list>
#include <string>
#include <unordered_map>
#include <vector>

#include "framework/model/topology_spec.hpp"

namespace xf {

/// Fluent description of one operator, handed to topology_builder::link.
class op {
 public:
  op(std::string name, std::string class_name);
  op& on(placement where);
  op& threads(std::uint32_t count);
  op& warps(std::uint32_t count);
  op& param(const std::string& key, bool value);
  op& param(const std::string& key, int value);
  op& param(const std::string& key, std::int64_t value);
  op& param(const std::string& key, std::uint64_t value);
  op& param(const std::string& key, double value);
  op& param(const std::string& key, const char* value);
  op& param(const std::string& key, std::string value);
  /// A datatype parameter given as the type itself (a name of the topology's datatypes goes as a string).
  op& param(const std::string& key, const dt::datatype& value);
  /// Binds the class's object slot `slot` to the topology's shared object `object` (YAML: shared).
  op& shared(const std::string& slot, const std::string& object);
  /// The MPI rank it runs on (YAML: rank), by number, or by a name of runtime.ranks (runtime_builder::
  /// rank_name), which validate_topology resolves into the number. The later call wins.
  op& rank(std::uint32_t number);
  op& rank(std::string name);
  /// A GPU operator's GPU ordinal on its rank's node (YAML: device).
  op& device(std::uint32_t ordinal);
  const operator_spec& spec() const { return spec_; }

 private:
  operator_spec spec_;
};

/// Fluent description of one topic, owned by its builder.
class topic_builder {
 public:
  topic_builder(std::vector<topic_spec>& topics, std::size_t index) : topics_(&topics), index_(index) {}
  topic_builder& frame_bytes(std::uint64_t bytes);
  topic_builder& capacity(std::uint32_t frames);
  topic_builder& element(element_type type);
  topic_builder& layout(frame_layout l);
  topic_builder& transfer(transfer_mode t);
  /// A columnar topic's rows a frame holds, and its columns in page order (YAML: rows_per_frame, columns).
  topic_builder& rows_per_frame(std::uint32_t rows);
  topic_builder& column(std::string name, column_layout layout);

 private:
  topic_spec& spec() { return (*topics_)[index_]; }
  std::vector<topic_spec>* topics_;
  std::size_t index_;
};

/// Fluent description of one shared object, owned by its builder. Its size is bytes(), or count() elements
/// of its element type (whichever element() gives, before or after); neither: its init file's size.
class shared_object_builder {
 public:
  shared_object_builder(std::vector<shared_object_spec>& objects, std::vector<std::uint64_t>& counts,
                        std::size_t index)
      : objects_(&objects), counts_(&counts), index_(index) {}
  shared_object_builder& element(element_type type);
  shared_object_builder& bytes(std::uint64_t size);
  shared_object_builder& count(std::uint64_t elements);
  shared_object_builder& init(std::string path);
  shared_object_builder& versions(std::uint32_t buffers);
  shared_object_builder& protocol(shared::protocol p);
  /// Rolling update's block (YAML: block_size).
  shared_object_builder& block_bytes(std::uint64_t size);

 private:
  shared_object_spec& spec() { return (*objects_)[index_]; }
  std::vector<shared_object_spec>* objects_;
  std::vector<std::uint64_t>* counts_;  // per object: elements given with count(), 0 for none
  std::size_t index_;
};

class runtime_builder {
 public:
  explicit runtime_builder(runtime_spec& spec) : spec_(&spec) {}
  runtime_builder& executor(executor_kind e);
  runtime_builder& blocks(std::uint32_t count);
  runtime_builder& warps_per_block(std::uint32_t count);
  runtime_builder& partition(partition_policy p);
  runtime_builder& tuning(tuning_spec t);
  runtime_builder& coherence(coherence_spec c);
  runtime_builder& watchdog_ms(std::uint32_t ms);
  runtime_builder& timer_slack_us(std::uint32_t us);
  runtime_builder& max_sleep_us(std::uint32_t us);
  runtime_builder& index_rest(std::uint32_t frames);
  runtime_builder& spread_warps(bool on);
  runtime_builder& part_bytes(std::uint64_t bytes);
  /// Names rank `rank` `name` for operators' rank(name) (YAML: runtime.ranks); naming it again renumbers it.
  runtime_builder& rank_name(std::string name, std::uint32_t rank);

 private:
  runtime_spec* spec_;
};

class topology_builder {
 public:
  explicit topology_builder(std::string name = {});
  /// Declares a topic (defaults as in YAML); declaring a name twice returns the same topic.
  topic_builder topic(const std::string& name);
  /// Declares a shared object (defaults as in YAML); declaring a name twice returns the same object.
  shared_object_builder shared_object(const std::string& name);
  /// Declares a named datatype (YAML: datatypes), for operators' datatype parameters; declaring a name
  /// again replaces its type.
  topology_builder& datatype(const std::string& name, const dt::datatype& type);
  /// Adds `operation`, subscribed to `inputs` and publishing to `outputs` (either may be empty).
  topology_builder& link(std::initializer_list<std::string> inputs, const op& operation,
                         std::initializer_list<std::string> outputs);
  /// The same with the topics' names computed (a loop building a fan-out, say).
  topology_builder& link(const std::vector<std::string>& inputs, const op& operation,
                         const std::vector<std::string>& outputs);
  runtime_builder runtime();
  topology_spec build() const;

 private:
  topology_spec spec_;
  std::vector<std::uint64_t> object_counts_;  // per shared object: count() elements, 0 for none
  std::unordered_map<std::string, std::size_t> topic_index_;  // topic name → its place in spec_.topics
};

}  // namespace xf
