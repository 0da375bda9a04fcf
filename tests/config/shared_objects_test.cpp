// Shared objects in topologies: the YAML section and operators' bindings as the loader reads them (values,
// defaults, positions, shape problems), to_yaml and the builder, and every check validation makes of them,
// each at its line and column. Against the test-only classes with object slots (test_registry.hpp).
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "framework/core/units.hpp"
#include "framework/model/spec_validation.hpp"
#include "framework/model/spec_yaml.hpp"
#include "framework/model/topology_builder.hpp"
#include "framework/model/yaml_loader.hpp"
#include "tests/config/config_problems.hpp"
#include "tests/config/test_registry.hpp"
#include "tests/support/scratch_dir.hpp"

using namespace xf;
using test::first_load_problem;
using test::load_problems;
using test::validation_problems;

namespace {

/// random_source → lookup (gpu, reads centroids) → update (cpu, writes centroids) → null_sink.
const std::string kmeans = R"(topics:
  xyz: {element: f32}
  ids: {element: f32}
  out: {element: f32}
shared_objects:
  centroids: {element: f32, count: 96}
operators:
  source: {class: random_source, outputs: [xyz]}
  assign: {class: lookup, inputs: [xyz], outputs: [ids], shared: {centres: centroids}}
  update: {class: update, inputs: [ids], outputs: [out], shared: {centres: centroids}}
  sink: {class: null_sink, inputs: [out]}
)";

/// `text` with its first `from` replaced by `to` (which must be there: a test that edits nothing passes
/// for the wrong reason).
std::string edited(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, "'" << from << "' is not in the topology");
  return text.replace(at, from.size(), to);
}

/// The kmeans topology as the builder writes it.
topology_builder kmeans_builder() {
  topology_builder b;
  for (const char* t : {"xyz", "ids", "out"}) b.topic(t).element(element_type::f32);
  b.shared_object("centroids").count(96).element(element_type::f32);  // count before element: 96 f32
  b.link({}, op("source", "random_source"), {"xyz"});
  b.link({"xyz"}, op("assign", "lookup").on(placement::gpu).shared("centres", "centroids"), {"ids"});
  b.link({"ids"}, op("update", "update").shared("centres", "centroids"), {"out"});
  b.link({"out"}, op("sink", "null_sink"), {});
  return b;
}

void write_file(const std::string& path, std::size_t bytes) {
  std::ofstream out(path, std::ios::binary);
  const std::string content(bytes, 'x');
  out << content;
  REQUIRE(out.good());
}

}  // namespace

// ---- the loader -----------------------------------------------------------------------------------------

TEST_CASE("config.shared_objects_load_with_their_values_and_positions") {
  const topology_spec spec = load_topology_text(kmeans, "t.yaml", test::extended_registry());
  REQUIRE(spec.objects.size() == 1);
  const shared_object_spec& c = spec.objects[0];
  CHECK(c.name == "centroids");
  CHECK(c.element == element_type::f32);
  CHECK(c.bytes == 96 * 4);  // count is in elements
  CHECK(c.init.empty());
  CHECK(c.versions == 2);
  CHECK(c.protocol == shared::protocol::rolling);
  CHECK(c.block_bytes == 4096);
  CHECK(spec.find_object("centroids") == &c);
  CHECK(spec.find_operator("assign")->shared == std::map<std::string, std::string>{{"centres", "centroids"}});
  CHECK(spec.find_operator("source")->shared.empty());
  auto at = [&](const std::string& path) {
    const source_pos p = spec.position_of(path);
    return std::to_string(p.line) + ":" + std::to_string(p.column);
  };
  CHECK(at("shared_objects#key") == "5:1");
  CHECK(at("shared_objects.centroids#key") == "6:3");
  CHECK(at("shared_objects.centroids") == "6:14");
  CHECK(at("shared_objects.centroids.count#key") == "6:29");
  CHECK(at("shared_objects.centroids.count") == "6:36");
  CHECK(at("operators.assign.shared") == "9:66");
  CHECK(at("operators.assign.shared.centres#key") == "9:67");
  CHECK(at("operators.update.shared.centres") == "10:76");
}

TEST_CASE("config.shared_objects_read_every_key_and_default_the_rest") {
  // Read without validation: key.bin need not exist to be read as written.
  const std::string yaml = R"(shared_objects:
  key: {element: u32, bytes: 8KiB, init: data/key.bin, versions: 3, protocol: batch, block_size: 64KiB}
  plain: {bytes: 4KiB}
  counted: {count: 10, element: f64}
  bare:
)";
  topology_spec spec;
  const auto problems = read_topology(parse_yaml(yaml, "t.yaml"), "t.yaml", test::extended_registry(), spec);
  CHECK(problems.empty());
  REQUIRE(spec.objects.size() == 4);
  const shared_object_spec& key = spec.objects[0];
  CHECK(key.element == element_type::u32);
  CHECK(key.bytes == 8 * KiB);
  CHECK(key.init == "data/key.bin");  // as written: paths in a topology are not resolved
  CHECK(key.versions == 3);
  CHECK(key.protocol == shared::protocol::batch);
  CHECK(key.block_bytes == 64 * KiB);
  shared_object_spec plain;  // every default but its size
  plain.name = "plain";
  plain.bytes = 4 * KiB;
  CHECK(spec.objects[1] == plain);
  CHECK(spec.objects[2].bytes == 80);  // count before element, in elements of the element
  shared_object_spec bare;             // every default: validation would refuse its size, the loader does not
  bare.name = "bare";
  CHECK(spec.objects[3] == bare);
  topology_spec lazy;
  CHECK(read_topology(parse_yaml(edited(yaml, "batch", "lazy"), "t.yaml"), "t.yaml",
                      test::extended_registry(), lazy)
            .empty());
  CHECK(lazy.objects[0].protocol == shared::protocol::lazy);
}

TEST_CASE("config.shared_objects_shape_problems") {
  CHECK(first_load_problem(edited(kmeans, "count: 96", "cout: 96"), test::extended_registry()) ==
        "t.yaml:6:29: error: unknown key 'cout' in shared object 'centroids' (did you mean 'count'?)");
  CHECK(first_load_problem(edited(kmeans, "count: 96", "count: 96, bytes: 384"), test::extended_registry()) ==
        "t.yaml:6:29: error: shared object 'centroids': give bytes or count, not both (bytes at 6:40)");
  CHECK(first_load_problem(edited(kmeans, "{element: f32, count: 96}", "{bytes: 384, count: 96}"),
                           test::extended_registry()) ==
        "t.yaml:6:27: error: shared object 'centroids': give bytes or count, not both (bytes at 6:15)");
  CHECK(first_load_problem(edited(kmeans, "count: 96", "count: 0"), test::extended_registry()) ==
        "t.yaml:6:36: error: shared object 'centroids': count must be at least 1, not 0");
  CHECK(
      first_load_problem(edited(kmeans, "count: 96", "count: 96, versions: 65"), test::extended_registry()) ==
      "t.yaml:6:50: error: shared object 'centroids': versions must be between 1 and 64, not 65");
  CHECK(first_load_problem(edited(kmeans, "count: 96", "count: 96, protocol: roling"),
                           test::extended_registry()) ==
        "t.yaml:6:50: error: shared object 'centroids': protocol must be one of batch, lazy, rolling, not "
        "'roling' (did you mean 'rolling'?)");
  CHECK(first_load_problem(edited(kmeans, "element: f32, count", "element: f23, count"),
                           test::extended_registry()) ==
        "t.yaml:6:24: error: shared object 'centroids': element must be one of u8, i8, u16, i16, u32, i32, "
        "u64, "
        "i64, f32, f64, not 'f23' (did you mean 'f32'?)");
  CHECK(first_load_problem(edited(kmeans, "count: 96}", "count: 96, block_size: lots}"),
                           test::extended_registry())
            .find("t.yaml:6:52: error: shared object 'centroids': block_size: ") == 0);
  CHECK(
      first_load_problem(edited(kmeans, "{element: f32, count: 96}", "384"), test::extended_registry()) ==
      "t.yaml:6:14: error: shared object 'centroids' must be a map of settings (element, bytes, count, init, "
      "versions, protocol, block_size), not '384'");
  CHECK(first_load_problem(edited(kmeans, "  centroids: {element: f32, count: 96}", "  - centroids"),
                           test::extended_registry()) ==
        "t.yaml:6:3: error: shared_objects must be a map from object name to settings, not a list");
  CHECK(first_load_problem(edited(kmeans, "count: 96}\n", "count: 96}\n  centroids: {count: 4}\n"),
                           test::extended_registry()) ==
        "t.yaml:7:3: error: duplicate shared object 'centroids' (first at 6:3)");
  CHECK(first_load_problem(
            edited(kmeans, "shared: {centres: centroids}}\n  update", "shared: [centroids]}\n  update"),
            test::extended_registry()) ==
        "t.yaml:9:66: error: operator 'assign': shared must be a map from object slot to shared object name, "
        "not a list");
  CHECK(first_load_problem(edited(kmeans, "{centres: centroids}}\n  update", "{centres: }}\n  update"),
                           test::extended_registry()) ==
        "t.yaml:9:76: error: operator 'assign': slot 'centres' must be a shared object's name, not empty");
  CHECK(first_load_problem(
            edited(kmeans, "{centres: centroids}}\n  update", "{centres: centroids, centres: c}}\n  update"),
            test::extended_registry()) == "t.yaml:9:87: error: duplicate slot 'centres' (first at 9:67)");
  CHECK(first_load_problem(edited(kmeans, "shared_objects:", "shared_object:"), test::extended_registry())
            .find("t.yaml:5:1: error: unknown key 'shared_object' at the top level (did you mean "
                  "'shared_objects'?)") == 0);
}

TEST_CASE("config.shared_objects_take_overrides") {
  const topology_spec spec = load_topology_text(
      kmeans, "t.yaml", test::extended_registry(),
      {"shared_objects.centroids.versions=4", "operators.assign.shared.centres=centroids"});
  CHECK(spec.objects[0].versions == 4);
  try {
    load_topology_text(kmeans, "t.yaml", test::extended_registry(), {"shared_objects.centroids.versions=0"});
    FAIL("loaded with versions 0");
  } catch (const config_error& e) {
    CHECK(
        e.first().str() ==
        "--set shared_objects.centroids.versions=0:1:35: error: shared object 'centroids': versions must be "
        "between 1 and 64, not 0");
  }
}

// ---- to_yaml and the builder ----------------------------------------------------------------------------

TEST_CASE("config.shared_objects_round_trip_through_to_yaml") {
  const test::scratch_dir dir;
  const std::string init = dir.file("centroids.bin");
  write_file(init, 384);
  const std::string yaml =
      edited(kmeans, "{element: f32, count: 96}",
             "{element: f32, init: '" + init + "', versions: 3, protocol: lazy, block_size: 8KiB}");
  const topology_spec spec = load_topology_text(yaml, "t.yaml", test::extended_registry());
  CHECK(spec.objects[0].bytes == 384);  // the init file's size
  const std::string text = to_yaml(spec);
  CHECK(text.find("shared_objects:\n  centroids: {element: f32, bytes: 384, init: " + init +
                  ", versions: 3, protocol: lazy, block_size: 8KiB}\noperators:\n") != std::string::npos);
  CHECK(text.find("    shared: {centres: centroids}\n") != std::string::npos);
  const topology_spec again = load_topology_text(text, "again.yaml", test::extended_registry());
  CHECK(again == spec);
  CHECK(to_yaml(again) == text);
  // A topology without objects writes no section: its canonical text is what it was.
  topology_spec none = spec;
  none.objects.clear();
  CHECK(to_yaml(none).find("shared_objects") == std::string::npos);
  // Objects are part of a spec's equality, and so are bindings.
  topology_spec other = spec;
  other.objects[0].versions = 2;
  CHECK_FALSE(other == spec);
  other = spec;
  other.operators[1].shared.clear();
  CHECK_FALSE(other == spec);
}

TEST_CASE("config.shared_objects_builder_matches_yaml") {
  topology_spec built = kmeans_builder().build();
  REQUIRE(validation_problems(built, test::extended_registry()) == "ok");
  validate_topology(built, test::extended_registry());
  const topology_spec loaded = load_topology_text(kmeans, "t.yaml", test::extended_registry());
  INFO("built:\n" << to_yaml(built) << "loaded:\n" << to_yaml(loaded));
  CHECK(built == loaded);

  topology_builder b = kmeans_builder();
  b.shared_object("centroids")
      .bytes(8 * KiB)  // bytes after count: the size is bytes
      .init("c.bin")
      .versions(5)
      .protocol(shared::protocol::batch)
      .block_bytes(16 * KiB);
  b.shared_object("spare").element(element_type::u16).count(8).bytes(64).count(4);  // the last says
  const topology_spec spec = b.build();
  REQUIRE(spec.objects.size() == 2);  // declaring a name twice gives the same object
  CHECK(spec.objects[0] == shared_object_spec{"centroids", element_type::f32, 8 * KiB, "c.bin", 5,
                                              shared::protocol::batch, 16 * KiB});
  CHECK(spec.objects[1].bytes == 8);
  CHECK(spec.positions.empty());
}

// ---- validation: each object ----------------------------------------------------------------------------

TEST_CASE("config.shared_object_needs_a_size") {
  CHECK(
      first_load_problem(edited(kmeans, "{element: f32, count: 96}", "{element: f32}"),
                         test::extended_registry()) ==
      "t.yaml:6:3: error: shared object 'centroids' has no size: give bytes, count (elements of its element "
      "type) or an init file holding version 0");
  CHECK(
      first_load_problem(edited(kmeans, "{element: f32, count: 96}", "{element: f32, bytes: 0}"),
                         test::extended_registry()) ==
      "t.yaml:6:3: error: shared object 'centroids' has no size: give bytes, count (elements of its element "
      "type) or an init file holding version 0");
  topology_builder b = kmeans_builder();
  b.shared_object("centroids").bytes(0);
  CHECK(validation_problems(b.build(), test::extended_registry()) ==
        "<builder>: error: shared object 'centroids' has no size: give bytes, count (elements of its element "
        "type) or an init file holding version 0");
}

TEST_CASE("config.shared_object_bytes_must_be_whole_elements") {
  CHECK(first_load_problem(edited(kmeans, "count: 96", "bytes: 386"), test::extended_registry()) ==
        "t.yaml:6:36: error: shared object 'centroids': 386 bytes is not a whole number of f32 elements (4 "
        "bytes "
        "each): give a multiple of 4 bytes");
  CHECK(first_load_problem(edited(kmeans, "count: 96", "bytes: 384"), test::extended_registry()) == "ok");
}

TEST_CASE("config.shared_object_block_size_is_whole_pages") {
  CHECK(
      first_load_problem(edited(kmeans, "count: 96", "count: 96, block_size: 6KiB"),
                         test::extended_registry()) ==
      "t.yaml:6:52: error: shared object 'centroids': block_size must be a positive multiple of 4 KiB (4096 "
      "bytes), not 6144 bytes");
  CHECK(
      first_load_problem(edited(kmeans, "count: 96", "count: 96, block_size: 0"),
                         test::extended_registry()) ==
      "t.yaml:6:52: error: shared object 'centroids': block_size must be a positive multiple of 4 KiB (4096 "
      "bytes), not 0 bytes");
  CHECK(first_load_problem(edited(kmeans, "count: 96", "count: 96, block_size: 1MiB"),
                           test::extended_registry()) == "ok");
}

TEST_CASE("config.shared_object_versions_are_1_to_64") {
  // The loader refuses what YAML writes; validation what the builder does, in the same words.
  topology_builder b = kmeans_builder();
  b.shared_object("centroids").versions(0);
  CHECK(validation_problems(b.build(), test::extended_registry()) ==
        "<builder>: error: shared object 'centroids': versions must be between 1 and 64, not 0");
  b.shared_object("centroids").versions(65);
  CHECK(validation_problems(b.build(), test::extended_registry()) ==
        "<builder>: error: shared object 'centroids': versions must be between 1 and 64, not 65");
  b.shared_object("centroids").versions(64);
  CHECK(validation_problems(b.build(), test::extended_registry()) == "ok");
}

TEST_CASE("config.shared_object_names_are_valid_and_unique") {
  topology_spec spec = kmeans_builder().build();
  spec.objects.push_back(spec.objects[0]);
  spec.objects.push_back(spec.objects[0]);
  spec.objects.back().name = "a.b";
  CHECK(
      validation_problems(spec, test::extended_registry()) ==
      "<builder>: error: duplicate shared object 'centroids'\n"
      "<builder>: error: shared object name 'a.b' is not a valid name (use letters, digits, '_' and '-', "
      "starting with a letter or '_')\n"
      "<builder>: error: shared object 'a.b' is not read by any operator (bind it to a read slot, or remove "
      "it)");
  // An object may share its name with a topic: they live in different sections.
  std::string named_ids = kmeans;
  for (std::size_t at = named_ids.find("centroids"); at != std::string::npos;
       at = named_ids.find("centroids"))
    named_ids.replace(at, 9, "ids");
  CHECK(first_load_problem(named_ids, test::extended_registry()) == "ok");
}

TEST_CASE("config.shared_object_init_file_gives_version_0_and_its_size") {
  const test::scratch_dir dir;
  const std::string full = dir.file("full.bin"), odd = dir.file("odd.bin"), empty = dir.file("empty.bin");
  write_file(full, 384);
  write_file(odd, 385);
  write_file(empty, 0);
  auto with_init = [&](const std::string& settings) {
    return edited(kmeans, "{element: f32, count: 96}", "{element: f32, " + settings + "}");
  };
  // Without bytes or count the file's size is the object's, filled in by validation.
  CHECK(load_topology_text(with_init("init: '" + full + "'"), "t.yaml", test::extended_registry())
            .objects[0]
            .bytes == 384);
  CHECK(first_load_problem(with_init("count: 96, init: '" + full + "'"), test::extended_registry()) == "ok");
  CHECK(first_load_problem(with_init("count: 95, init: '" + full + "'"), test::extended_registry()) ==
        "t.yaml:6:46: error: shared object 'centroids': init file '" + full +
            "' holds 384 bytes, but the object is 380 bytes: give a file of 380 bytes, or leave bytes and "
            "count "
            "out to take the file's size");
  CHECK(first_load_problem(with_init("init: '" + odd + "'"), test::extended_registry()) ==
        "t.yaml:6:35: error: shared object 'centroids': 385 bytes is not a whole number of f32 elements (4 "
        "bytes "
        "each): give a multiple of 4 bytes");
  CHECK(first_load_problem(with_init("init: '" + empty + "'"), test::extended_registry()) ==
        "t.yaml:6:35: error: shared object 'centroids': init file '" + empty +
            "' is empty: put version 0's bytes in it, or give the object's size with bytes or count");
  CHECK(first_load_problem(with_init("init: '" + dir.file("missing.bin") + "'"), test::extended_registry()) ==
        "t.yaml:6:35: error: shared object 'centroids': cannot read init file '" + dir.file("missing.bin") +
            "': No such file or directory");
  CHECK(first_load_problem(with_init("init: '" + dir.file("") + "'"), test::extended_registry()) ==
        "t.yaml:6:35: error: shared object 'centroids': cannot read init file '" + dir.file("") +
            "': Is a directory");
  CHECK(
      first_load_problem(with_init("init: /dev/zero"), test::extended_registry()) ==
      "t.yaml:6:35: error: shared object 'centroids': cannot read init file '/dev/zero': not a regular file");
}

// ---- validation: bindings -------------------------------------------------------------------------------

TEST_CASE("config.shared_object_valid_topology_passes") {
  // The control for every check below: the unedited topology has no problem.
  CHECK(load_problems(kmeans, test::extended_registry()) == "ok");
}

TEST_CASE("config.shared_slot_must_be_one_of_its_class") {
  // Only the misnamed key is reported: not also the slot it leaves unbound, nor the object it leaves unread.
  CHECK(load_problems(edited(kmeans, "{centres: centroids}}\n  update", "{centers: centroids}}\n  update"),
                      test::extended_registry()) ==
        "t.yaml:9:67: error: operator 'assign': class 'lookup' has no object slot 'centers' (did you mean "
        "'centres'?)");
  CHECK(load_problems(edited(kmeans, "{centres: centroids}}\n  update", "{table: centroids}}\n  update"),
                      test::extended_registry()) ==
        "t.yaml:9:67: error: operator 'assign': class 'lookup' has no object slot 'table' (its slots: "
        "'centres')");
  CHECK(load_problems(edited(kmeans, "outputs: [xyz]}", "outputs: [xyz], shared: {seed: centroids}}"),
                      test::extended_registry()) ==
        "t.yaml:8:59: error: operator 'source': class 'random_source' takes no shared objects (leave out "
        "shared)");
}

TEST_CASE("config.shared_slot_names_a_declared_object") {
  // The object the binding meant is not also reported as unread.
  CHECK(load_problems(edited(kmeans, "{centres: centroids}}\n  update", "{centres: centroid}}\n  update"),
                      test::extended_registry()) ==
        "t.yaml:9:76: error: operator 'assign': slot 'centres' names 'centroid', which is not a declared "
        "shared "
        "object (did you mean 'centroids'?)");
  CHECK(
      load_problems(edited(kmeans, "{centres: centroids}}\n  update", "{centres: weights}}\n  update"),
                    test::extended_registry()) ==
      "t.yaml:9:76: error: operator 'assign': slot 'centres' names 'weights', which is not a declared shared "
      "object (declare it under shared_objects)");
}

TEST_CASE("config.shared_slot_of_the_class_must_be_bound") {
  // assign was centroids' only reader, so the object is unread too.
  const std::string unread =
      "t.yaml:6:3: error: shared object 'centroids' is not read by any operator (bind it to a read slot, or "
      "remove it)\n";
  CHECK(load_problems(edited(kmeans, ", shared: {centres: centroids}}\n  update", "}\n  update"),
                      test::extended_registry()) ==
        unread +
            "t.yaml:9:3: error: operator 'assign': class 'lookup' takes a shared object in slot 'centres' "
            "(read), "
            "but none is bound: add shared: {centres: <object>}");
  CHECK(load_problems(edited(kmeans, "shared: {centres: centroids}}\n  update", "shared: {}}\n  update"),
                      test::extended_registry()) ==
        unread +
            "t.yaml:9:66: error: operator 'assign': class 'lookup' takes a shared object in slot 'centres' "
            "(read), but none is bound: add shared: {centres: <object>}");
}

TEST_CASE("config.shared_slot_optional_may_be_left_unbound") {
  // accumulate's totals slot is optional: on cpu, unbound, it is valid; lookup's centres slot is not.
  const std::string yaml =
      edited(kmeans, "{class: update, inputs: [ids], outputs: [out], shared: {centres: centroids}}",
             "{class: accumulate, on: cpu, inputs: [ids], outputs: [out]}");
  CHECK(load_problems(yaml, test::extended_registry()) == "ok");
  CHECK(test::extended_registry().find("accumulate")->info.objects.at(0).optional);
  CHECK_FALSE(test::extended_registry().find("lookup")->info.objects.at(0).optional);
}

TEST_CASE("config.shared_slot_check_of_its_class") {
  // lookup checks that the object holds the `entries` its parameter names (96 f32 values here).
  const std::string yaml = edited(kmeans, "shared: {centres: centroids}}\n  update",
                                  "shared: {centres: centroids}, params: {entries: 97}}\n  update");
  CHECK(
      load_problems(yaml, test::extended_registry()) ==
      "t.yaml:9:76: error: operator 'assign': slot 'centres': the object holds 384 bytes, fewer than entries "
      "(97) f32 values");
  CHECK(load_problems(edited(yaml, "entries: 97", "entries: 96"), test::extended_registry()) == "ok");
  // It runs on valid parameters only, and on objects of a valid size only: each problem is reported once.
  CHECK(load_problems(edited(yaml, "entries: 97", "entries: -1"), test::extended_registry())
            .find("slot 'centres'") == std::string::npos);
  CHECK(load_problems(edited(yaml, "count: 96", "bytes: 383"), test::extended_registry()) ==
        "t.yaml:6:36: error: shared object 'centroids': 383 bytes is not a whole number of f32 elements (4 "
        "bytes "
        "each): give a multiple of 4 bytes");
}

TEST_CASE("config.shared_object_written_only_by_a_cpu_operator") {
  const std::string yaml = edited(kmeans, "{class: update,", "{class: accumulate,");
  CHECK(first_load_problem(
            edited(yaml, "shared: {centres: centroids}}\n  sink", "shared: {totals: centroids}}\n  sink"),
            test::extended_registry()) ==
        "t.yaml:10:79: error: operator 'update' runs on the GPU, but slot 'totals' writes shared object "
        "'centroids': only CPU operators publish versions (place it on cpu)");
  CHECK(first_load_problem(edited(yaml, "shared: {centres: centroids}}\n  sink",
                                  "on: cpu, shared: {totals: centroids}}\n  sink"),
                           test::extended_registry()) == "ok");
}

TEST_CASE("config.shared_object_has_one_writer") {
  // update → out → update2 → out2 → sink: two writers of centroids, reported at the second's binding.
  const std::string yaml =
      edited(edited(kmeans, "  out: {element: f32}\n", "  out: {element: f32}\n  out2: {element: f32}\n"),
             "sink: {class: null_sink, inputs: [out]}",
             "update2: {class: update, inputs: [out], outputs: [out2], shared: {centres: centroids}}\n"
             "  sink: {class: null_sink, inputs: [out2]}");
  CHECK(load_problems(yaml, test::extended_registry()) ==
        "t.yaml:12:78: error: shared object 'centroids' has a second writer, 'update2' (slot 'centres'), "
        "besides "
        "'update': versions have one order, so one operator writes an object");
  CHECK(first_load_problem(
            edited(yaml, "{class: update, inputs: [out], outputs: [out2], shared: {centres: centroids}}",
                   "{class: pass_through, on: cpu, inputs: [out], outputs: [out2]}"),
            test::extended_registry()) == "ok");
}

TEST_CASE("config.shared_object_is_read") {
  const std::string unread = edited(edited(kmeans, "{class: lookup,", "{class: scale,"),
                                    ", shared: {centres: centroids}}\n  update", "}\n  update");
  CHECK(
      first_load_problem(unread, test::extended_registry()) ==
      "t.yaml:6:3: error: shared object 'centroids' is not read by any operator (bind it to a read slot, or "
      "remove it)");
  // A binding whose class or slot is unknown may be the reader: only its own problem is reported.
  CHECK(load_problems(edited(kmeans, "{class: lookup,", "{class: lokup,"), test::extended_registry())
            .find("not read") == std::string::npos);
}

TEST_CASE("config.shared_object_written_needs_two_versions") {
  CHECK(
      first_load_problem(edited(kmeans, "count: 96", "count: 96, versions: 1"), test::extended_registry()) ==
      "t.yaml:6:50: error: shared object 'centroids': versions must be at least 2, since 'update' writes it: "
      "readers keep their frame's version while the writer fills the next");
  // Read only, one version is enough.
  const std::string read_only =
      edited(edited(kmeans, "count: 96", "count: 96, versions: 1"),
             "{class: update, inputs: [ids], outputs: [out], shared: {centres: centroids}}",
             "{class: pass_through, on: cpu, inputs: [ids], outputs: [out]}");
  CHECK(first_load_problem(read_only, test::extended_registry()) == "ok");
}

TEST_CASE("config.shared_object_lives_on_its_writers_rank") {
  // The writer moved to another rank: the problem is at its rank, the later of the two operators'.
  CHECK(load_problems(edited(kmeans, "{class: update,", "{class: update, rank: 1,"),
                      test::extended_registry()) ==
        "t.yaml:10:33: error: shared object 'centroids' is written by 'update' on rank 1 and read by "
        "'assign' on "
        "rank 0; a shared object lives on one rank: its readers resolve versions in the writer's memory");
  // The reader moved instead: the writer, later and with no rank written, is reported at its binding.
  const std::string reader_moved = edited(kmeans, "{class: lookup,", "{class: lookup, rank: gpu_side,") +
                                   "runtime: {ranks: {gpu_side: 1}}\n";
  CHECK(
      load_problems(reader_moved, test::extended_registry()) ==
      "t.yaml:10:76: error: shared object 'centroids' is written by 'update' on rank 0 and read by 'assign' "
      "on "
      "rank 'gpu_side' (1); a shared object lives on one rank: its readers resolve versions in the writer's "
      "memory");
  CHECK(load_problems(edited(reader_moved, "{class: update,", "{class: update, rank: 1,"),
                      test::extended_registry()) == "ok");
  // An object nobody writes holds version 0 alone, the same on any rank: its readers may be anywhere.
  const std::string read_only =
      edited(edited(kmeans, "{class: update, inputs: [ids], outputs: [out], shared: {centres: centroids}}",
                    "{class: lookup, rank: 2, inputs: [ids], outputs: [out], shared: {centres: centroids}}"),
             "{class: lookup,", "{class: lookup, rank: 1,");
  CHECK(load_problems(read_only, test::extended_registry()) == "ok");
}

TEST_CASE("config.shared_object_element_must_suit_the_slot") {
  CHECK(first_load_problem(edited(kmeans, "{element: f32, count: 96}", "{element: u32, count: 96}"),
                           test::extended_registry()) ==
        "t.yaml:9:76: error: operator 'assign': slot 'centres' takes f32 objects, but shared object "
        "'centroids' is "
        "u32");
}

TEST_CASE("config.shared_object_is_not_read_by_a_source") {
  const std::string yaml = edited(kmeans, "{class: random_source, outputs: [xyz]}",
                                  "{class: seeded_source, outputs: [xyz], shared: {seed: centroids}}");
  CHECK(first_load_problem(yaml, test::extended_registry()) ==
        "t.yaml:8:65: error: operator 'source': a source cannot read shared objects (slot 'seed'): a reader "
        "sees "
        "the version of its input frame's offset, and a source has no input");
}
