// Writing a TopologySpec as YAML. yaml-cpp's emitter does the quoting, so any name or string survives.
#include "framework/model/spec_yaml.hpp"

#include <yaml-cpp/yaml.h>

#include <array>
#include <charconv>
#include <cmath>
#include <span>

#include "framework/core/units.hpp"
#include "framework/model/operator_schema.hpp"

namespace xf {

std::string exact_bytes(std::uint64_t bytes) {
  constexpr std::array<std::pair<std::uint64_t, const char*>, 4> units{
      {{TiB, "TiB"}, {GiB, "GiB"}, {MiB, "MiB"}, {KiB, "KiB"}}};
  if (bytes != 0)
    for (auto [size, name] : units)
      if (bytes % size == 0) return std::to_string(bytes / size) + name;
  return std::to_string(bytes);
}

namespace {

/// A param value as the loader reads it back: the shortest text that parses to the same value.
std::string param_text(const param_value& value) {
  if (const double* real = std::get_if<double>(&value)) {
    if (std::isnan(*real)) return ".nan";
    if (std::isinf(*real)) return *real > 0 ? ".inf" : "-.inf";
    char buffer[64];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, *real);  // shortest round-trip form
    return ec == std::errc{} ? std::string(buffer, end) : to_string(value);
  }
  return to_string(value);
}

void emit_integers(YAML::Emitter& out, const char* key, std::span<const std::int64_t> values) {
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const std::int64_t v : values) out << v;
  out << YAML::EndSeq;
}

/// `t` in the grammar of datatype_yaml.hpp, in flow style. A node that is one of the spec's named
/// datatypes is written as its name — but the type being declared, named `self`, only by a name declared
/// before it, so that two names of one type never refer to each other.
void emit_datatype(YAML::Emitter& out, const dt::datatype& t, const std::vector<datatype_spec>& named,
                   std::size_t self) {
  for (std::size_t j = 0; j < named.size() && j < self; ++j)
    if (named[j].type.same_node(t)) {
      out << named[j].name;
      return;
    }
  if (t.kind() == dt::type_kind::primitive) {
    out << std::string(dt::name_of(t.element()));
    return;
  }
  const auto child = [&](const char* key, const dt::datatype& c) {
    out << YAML::Key << key << YAML::Value;
    emit_datatype(out, c, named, named.size());  // below the root any name will do
  };
  out << YAML::Flow << YAML::BeginMap << YAML::Key << std::string(dt::name_of(t.kind())) << YAML::Value
      << YAML::Flow << YAML::BeginMap;
  switch (t.kind()) {
    case dt::type_kind::contiguous:
      out << YAML::Key << "count" << YAML::Value << t.count();
      break;
    case dt::type_kind::vector:
    case dt::type_kind::hvector:
      out << YAML::Key << "count" << YAML::Value << t.count() << YAML::Key << "blocklength" << YAML::Value
          << t.blocklength() << YAML::Key << "stride" << YAML::Value << t.stride();
      break;
    case dt::type_kind::indexed:
    case dt::type_kind::hindexed:
      emit_integers(out, "blocklengths", t.blocklengths());
      emit_integers(out, "displacements", t.displacements());
      break;
    case dt::type_kind::indexed_block:
    case dt::type_kind::hindexed_block:
      out << YAML::Key << "blocklength" << YAML::Value << t.blocklength();
      emit_integers(out, "displacements", t.displacements());
      break;
    case dt::type_kind::struct_type:
      emit_integers(out, "blocklengths", t.blocklengths());
      emit_integers(out, "displacements", t.displacements());
      out << YAML::Key << "types" << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (const dt::datatype& member : t.children()) emit_datatype(out, member, named, named.size());
      out << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
      return;
    case dt::type_kind::subarray:
      emit_integers(out, "sizes", t.sizes());
      emit_integers(out, "subsizes", t.subsizes());
      emit_integers(out, "starts", t.starts());
      out << YAML::Key << "order" << YAML::Value << (t.order() == dt::array_order::c ? "c" : "fortran");
      break;
    case dt::type_kind::resized:
      out << YAML::Key << "lb" << YAML::Value << t.lb() << YAML::Key << "extent" << YAML::Value << t.extent();
      break;
    case dt::type_kind::primitive:
      break;
  }
  child("of", t.child());
  out << YAML::EndMap << YAML::EndMap;
}

void emit_names(YAML::Emitter& out, const char* key, const std::vector<std::string>& names) {
  if (names.empty()) return;
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const auto& n : names) out << n;
  out << YAML::EndSeq;
}

}  // namespace

std::string to_yaml(const topology_spec& spec) {
  YAML::Emitter out;
  out.SetIndent(2);
  out << YAML::BeginMap;
  if (!spec.name.empty()) out << YAML::Key << "name" << YAML::Value << spec.name;

  out << YAML::Key << "topics" << YAML::Value << YAML::BeginMap;
  for (const auto& t : spec.topics) {
    out << YAML::Key << t.name << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "frame_size" << YAML::Value << exact_bytes(t.frame_bytes);
    out << YAML::Key << "capacity" << YAML::Value << t.capacity;
    if (t.layout == frame_layout::row)  // a columnar topic's columns carry their own types
      out << YAML::Key << "element" << YAML::Value << std::string(name_of(t.element));
    out << YAML::Key << "layout" << YAML::Value << std::string(name_of(t.layout));
    if (t.layout == frame_layout::columnar) {
      out << YAML::Key << "rows_per_frame" << YAML::Value << t.rows_per_frame;
      out << YAML::Key << "columns" << YAML::Value << YAML::BeginSeq;
      for (const column_spec& c : t.columns) {
        out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << c.name << YAML::Key << "type"
            << YAML::Value
            << (c.layout.chars != 0 ? "char(" + std::to_string(c.layout.chars) + ")"
                                    : std::string(name_of(c.layout.element)));
        if (c.layout.bloom_bits != 0)
          out << YAML::Key << "bloom_bits" << YAML::Value << c.layout.bloom_bits << YAML::Key
              << "bloom_hashes" << YAML::Value << c.layout.bloom_hashes;
        out << YAML::EndMap;
      }
      out << YAML::EndSeq;
    }
    out << YAML::Key << "transfer" << YAML::Value << std::string(name_of(t.transfer));
    out << YAML::EndMap;
  }
  out << YAML::EndMap;

  if (!spec.datatypes.empty()) {  // left out when empty, so topologies without datatypes read as before
    out << YAML::Key << "datatypes" << YAML::Value << YAML::BeginMap;
    for (std::size_t k = 0; k < spec.datatypes.size(); ++k) {
      out << YAML::Key << spec.datatypes[k].name << YAML::Value;
      emit_datatype(out, spec.datatypes[k].type, spec.datatypes, k);
    }
    out << YAML::EndMap;
  }

  if (!spec.objects.empty()) {  // left out when empty, so topologies without objects read as before
    out << YAML::Key << "shared_objects" << YAML::Value << YAML::BeginMap;
    for (const shared_object_spec& o : spec.objects) {
      out << YAML::Key << o.name << YAML::Value << YAML::Flow << YAML::BeginMap;
      out << YAML::Key << "element" << YAML::Value << std::string(name_of(o.element));
      out << YAML::Key << "bytes" << YAML::Value << exact_bytes(o.bytes);
      if (!o.init.empty()) out << YAML::Key << "init" << YAML::Value << o.init;
      out << YAML::Key << "versions" << YAML::Value << o.versions;
      out << YAML::Key << "protocol" << YAML::Value << std::string(name_of(o.protocol));
      out << YAML::Key << "block_size" << YAML::Value << exact_bytes(o.block_bytes);
      out << YAML::EndMap;
    }
    out << YAML::EndMap;
  }

  out << YAML::Key << "operators" << YAML::Value << YAML::BeginMap;
  for (const auto& o : spec.operators) {
    out << YAML::Key << o.name << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "class" << YAML::Value << o.class_name;
    out << YAML::Key << "on" << YAML::Value << std::string(name_of(o.on));
    emit_names(out, "inputs", o.inputs);
    emit_names(out, "outputs", o.outputs);
    // threads belongs to CPU operators and warps = 0 means "not given": writing either elsewhere would
    // turn a valid spec into an invalid file.
    if (o.on == placement::cpu || o.threads != 1) out << YAML::Key << "threads" << YAML::Value << o.threads;
    if (o.warps != 0) out << YAML::Key << "warps" << YAML::Value << o.warps;
    if (!o.params.empty()) {
      out << YAML::Key << "params" << YAML::Value << YAML::Flow << YAML::BeginMap;
      for (const auto& [key, value] : o.params) {
        out << YAML::Key << key << YAML::Value;
        if (const auto* type = std::get_if<dt::datatype>(&value))
          emit_datatype(out, *type, spec.datatypes, spec.datatypes.size());  // by name where it has one
        else
          out << param_text(value);
      }
      out << YAML::EndMap;
    }
    if (!o.shared.empty()) {
      out << YAML::Key << "shared" << YAML::Value << YAML::Flow << YAML::BeginMap;
      for (const auto& [slot, object] : o.shared) out << YAML::Key << slot << YAML::Value << object;
      out << YAML::EndMap;
    }
    // A rank named in runtime.ranks is written by its name, as it was given: the name outlives a change
    // of the number it stands for.
    if (!o.rank_name.empty())
      out << YAML::Key << "rank" << YAML::Value << o.rank_name;
    else if (o.rank != 0)
      out << YAML::Key << "rank" << YAML::Value << o.rank;
    if (o.device) out << YAML::Key << "device" << YAML::Value << *o.device;
    out << YAML::EndMap;
  }
  out << YAML::EndMap;

  out << YAML::Key << "runtime" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "executor" << YAML::Value << std::string(name_of(spec.runtime.executor));
  out << YAML::Key << "blocks" << YAML::Value << spec.runtime.blocks;
  out << YAML::Key << "warps_per_block" << YAML::Value << spec.runtime.warps_per_block;
  out << YAML::Key << "partition" << YAML::Value << std::string(name_of(spec.runtime.partition));
  if (is_tuned(spec.runtime.partition)) {
    out << YAML::Key << "tuning" << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "samples" << YAML::Value << spec.runtime.tuning.samples;
    out << YAML::Key << "retune_spread_percent" << YAML::Value << spec.runtime.tuning.retune_spread_percent;
    out << YAML::Key << "retune_hold_ms" << YAML::Value << spec.runtime.tuning.retune_hold_ms;
    out << YAML::EndMap;
  }
  out << YAML::Key << "coherence" << YAML::Value << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "catalog" << YAML::Value << std::string(name_of(spec.runtime.coherence.catalog));
  out << YAML::Key << "index" << YAML::Value << std::string(name_of(spec.runtime.coherence.index));
  out << YAML::Key << "frames" << YAML::Value << std::string(name_of(spec.runtime.coherence.frames));
  out << YAML::EndMap;
  out << YAML::Key << "watchdog_ms" << YAML::Value << spec.runtime.watchdog_ms;
  out << YAML::Key << "timer_slack_us" << YAML::Value << spec.runtime.timer_slack_us;
  if (spec.runtime.max_sleep_us != runtime_spec{}.max_sleep_us)
    out << YAML::Key << "max_sleep_us" << YAML::Value << spec.runtime.max_sleep_us;
  if (spec.runtime.index_rest != 0)
    out << YAML::Key << "index_rest" << YAML::Value << spec.runtime.index_rest;
  if (spec.runtime.spread_warps) out << YAML::Key << "spread_warps" << YAML::Value << "on";
  if (spec.runtime.part_bytes != 0)
    out << YAML::Key << "part_size" << YAML::Value << exact_bytes(spec.runtime.part_bytes);
  if (const auto& c = spec.runtime.file_cache) {
    out << YAML::Key << "file_cache" << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "size" << YAML::Value << exact_bytes(c->size);
    out << YAML::Key << "page_size" << YAML::Value << exact_bytes(c->page_bytes);
    out << YAML::Key << "readahead" << YAML::Value << exact_bytes(c->readahead);
    out << YAML::Key << "readahead_mode" << YAML::Value << std::string(name_of(c->readahead_policy));
    out << YAML::Key << "replacement" << YAML::Value << std::string(name_of(c->replacement));
    out << YAML::Key << "io_threads" << YAML::Value << c->io_threads;
    out << YAML::Key << "io_slots_per_block" << YAML::Value << c->io_slots_per_block;
    out << YAML::Key << "max_request" << YAML::Value << exact_bytes(c->max_request);
    out << YAML::Key << "io_chunk" << YAML::Value << exact_bytes(c->io_chunk);
    out << YAML::Key << "direct" << YAML::Value << std::string(name_of(c->direct));
    out << YAML::EndMap;
  }
  if (!spec.runtime.ranks.empty()) {  // left out when empty, so topologies of one rank read as before
    out << YAML::Key << "ranks" << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const auto& [name, rank] : spec.runtime.ranks) out << YAML::Key << name << YAML::Value << rank;
    out << YAML::EndMap;
  }
  out << YAML::EndMap;

  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace xf
