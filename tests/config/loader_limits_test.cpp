// The loader against inputs a user (or an attacker) could hand it: paths that are not regular files, text
// yaml-cpp would read wrongly, documents past yaml_limits (nesting, nodes, aliases), and topologies of many
// thousand operators or of sizes no machine holds. Each must be refused with a positioned problem, quickly
// and in bounded memory; none may crash or hang.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "framework/core/units.hpp"
#include "framework/model/spec_validation.hpp"
#include "framework/model/topology_builder.hpp"
#include "framework/model/yaml_loader.hpp"
#include "tests/config/config_problems.hpp"
#include "tests/config/test_registry.hpp"
#include "tests/support/scratch_dir.hpp"

using namespace xf;
using test::first_load_problem;

namespace {

/// The first problem of loading the file at `path`, or "ok".
std::string first_file_problem(const std::string& path) {
  try {
    load_topology_file(path, test::config_registry());
  } catch (const config_error& e) {
    return e.first().str();
  }
  return "ok";
}

/// The first problem of loading `yaml` with `overrides`, or "ok".
std::string first_override_problem(const std::string& yaml, const std::vector<std::string>& overrides) {
  try {
    load_topology_text(yaml, "t.yaml", test::config_registry(), overrides);
  } catch (const config_error& e) {
    return e.first().str();
  }
  return "ok";
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

/// A pingpong topology that validates, for cases that spoil one thing in it.
const std::string pingpong =
    "name: pingpong\n"
    "topics:\n"
    "  c2g: {frame_size: 64KiB, capacity: 64}\n"
    "  g2c: {frame_size: 64KiB, capacity: 64}\n"
    "operators:\n"
    "  source: {class: sequence_source, outputs: [c2g]}\n"
    "  scale: {class: scale, inputs: [c2g], outputs: [g2c]}\n"
    "  verify: {class: verify_sink, inputs: [g2c]}\n";

/// A chain of `length` CPU operators: a source, pass_through maps, a null sink.
std::string chain_yaml(int length) {
  std::string text = "name: chain\ntopics:\n";
  for (int t = 0; t + 1 < length; ++t) text += "  t" + std::to_string(t) + ": {}\n";
  text += "operators:\n  o0: {class: sequence_source, outputs: t0}\n";
  for (int o = 1; o + 1 < length; ++o)
    text += "  o" + std::to_string(o) + ": {class: pass_through, on: cpu, inputs: t" + std::to_string(o - 1) +
            ", outputs: t" + std::to_string(o) + "}\n";
  text += "  o" + std::to_string(length - 1) + ": {class: null_sink, inputs: t" + std::to_string(length - 2) +
          "}\n";
  return text;
}

using clock = std::chrono::steady_clock;

/// XF_LONG=1: the full-size cases, which take seconds in a debug build.
bool long_run() {
  const char* mode = std::getenv("XF_LONG");
  return mode != nullptr && std::string(mode) == "1";
}

/// Runs `body` on a thread with a stack of `bytes`, and waits for it: a walk that recursed once per
/// operator would overflow it (and end the test program) on a chain far shorter than the main thread's
/// stack needs.
void on_small_stack(std::size_t bytes, void (*body)(void*), void* argument) {
  struct call {
    void (*body)(void*);
    void* argument;
  } c{body, argument};
  pthread_attr_t attributes;
  REQUIRE(pthread_attr_init(&attributes) == 0);
  REQUIRE(pthread_attr_setstacksize(&attributes, bytes) == 0);
  pthread_t thread;
  REQUIRE(pthread_create(
              &thread, &attributes,
              [](void* p) -> void* {
                auto* c = static_cast<call*>(p);
                c->body(c->argument);
                return nullptr;
              },
              &c) == 0);
  pthread_attr_destroy(&attributes);
  REQUIRE(pthread_join(thread, nullptr) == 0);
}

/// A chain of `length` operators as a spec: a source, CPU pass_through maps, a null sink.
topology_spec chain_spec(int length) {
  topology_builder b("chain");
  for (int t = 0; t + 1 < length; ++t) b.topic("t" + std::to_string(t));
  b.link({}, op("o0", "sequence_source"), {"t0"});
  for (int o = 1; o + 1 < length; ++o)
    b.link({"t" + std::to_string(o - 1)}, op("o" + std::to_string(o), "pass_through").on(placement::cpu),
           {"t" + std::to_string(o)});
  b.link({"t" + std::to_string(length - 2)}, op("o" + std::to_string(length - 1), "null_sink"), {});
  return b.build();
}

/// Every problem of `spec`, one a line, or "ok".
std::string problems_of(topology_spec& spec) {
  std::vector<diagnostic> found = topology_problems(spec, test::config_registry());
  if (found.empty()) return "ok";
  return config_error(std::move(found)).what();
}

}  // namespace

TEST_CASE("config.loader_reads_regular_files_only") {
  const test::scratch_dir dir;
  CHECK(first_file_problem(dir.file("")) == dir.file("") + ": error: cannot read topology: Is a directory");
  const std::string fifo = dir.file("fifo.yaml");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // No writer ever opens it: the loader must neither wait for one nor read it.
  CHECK(first_file_problem(fifo) == fifo + ": error: cannot read topology: it is a FIFO, not a regular file");
  CHECK(first_file_problem("/dev/zero") ==
        "/dev/zero: error: cannot read topology: it is a character device, not a regular file");
  // Past the size bound: refused from its size, without reading it (a sparse file: no disk used).
  const std::string large = dir.file("large.yaml");
  { std::ofstream(large) << "name: x\n"; }
  std::filesystem::resize_file(large, yaml_limits::max_bytes + 1);
  CHECK(first_file_problem(large) == large + ": error: cannot read topology: the file is " +
                                         std::to_string(yaml_limits::max_bytes + 1) +
                                         " bytes, more than a topology may be (16 MiB)");
  const std::string locked = dir.file("locked.yaml");
  { std::ofstream(locked) << pingpong; }
  REQUIRE(::chmod(locked.c_str(), 0) == 0);
  if (::geteuid() == 0) {
    MESSAGE("skipped the unreadable file: running as root, which reads it anyway");
  } else {
    CHECK(first_file_problem(locked) == locked + ": error: cannot read topology: Permission denied");
  }
}

TEST_CASE("config.loader_refuses_text_yaml_cpp_misreads") {
  // A NUL: yaml-cpp ends a quoted scalar there, or reads it as an escape in a plain one.
  CHECK(first_load_problem(std::string("name: \"ab\0cd\"\n", 14)) ==
        "t.yaml:1:10: error: YAML text cannot hold control characters, but here is a NUL byte (0x00)");
  CHECK(first_load_problem(std::string("name: ab\0cd\n", 12)) ==
        "t.yaml:1:9: error: YAML text cannot hold control characters, but here is a NUL byte (0x00)");
  // Other control characters yaml-cpp drops without a word.
  CHECK(first_load_problem("name: a\x01z\n") ==
        "t.yaml:1:8: error: YAML text cannot hold control characters, but here is the control character "
        "0x01");
  CHECK(first_load_problem("name: \xc3\xa9t\xc3\xa9\n\tx: \x7f") ==
        "t.yaml:2:5: error: YAML text cannot hold control characters, but here is the control character "
        "0x7F");
  // Not UTF-8: a stray byte, an overlong form, a cut sequence; and a UTF-16 byte order mark, which
  // yaml-cpp follows into decoding the rest as UTF-16.
  CHECK(first_load_problem("name: caf\xe9\n") ==
        "t.yaml:1:10: error: the byte 0xE9 is not UTF-8 text; a topology is UTF-8");
  CHECK(first_load_problem("name: \xc0\xaf\n") ==
        "t.yaml:1:7: error: the byte 0xC0 is not UTF-8 text; a topology is UTF-8");
  CHECK(first_load_problem("name: \xe2\x82") ==
        "t.yaml:1:7: error: the byte 0xE2 is not UTF-8 text; a topology is UTF-8");
  CHECK(first_load_problem("\xff\xfename: a\n") ==
        "t.yaml:1:1: error: the text starts with a UTF-16 byte order mark; a topology is UTF-8 text");
  // Tabs, line breaks of either kind and UTF-8 (a byte order mark included) are text.
  CHECK(first_load_problem("\xef\xbb\xbfname: \"caf\xc3\xa9\t\"\r\noperators: []\r\n") ==
        "t.yaml:2:12: error: operators must be a map from operator name to settings, not a list");
}

TEST_CASE("config.loader_bounds_what_yaml_cpp_would_not") {
  const auto start = clock::now();
  // yaml-cpp starts a document at a ',' it cannot read, again and again, allocating each.
  CHECK(first_load_problem(",") ==
        "t.yaml:1:1: error: YAML syntax: ',' outside a flow list or map (a ',' separates the items of [a, b] "
        "or {a: 1, b: 2})");
  CHECK(first_load_problem("name: a\n---\n  ,\n") ==
        "t.yaml:3:3: error: YAML syntax: ',' outside a flow list or map (a ',' separates the items of [a, b] "
        "or {a: 1, b: 2})");
  CHECK(first_override_problem(pingpong, {"name=,"}) ==
        "--set name=,:1:6: error: YAML syntax: ',' outside a flow list or map (a ',' separates the items of "
        "[a, b] or {a: 1, b: 2})");
  // An alias inside the node it names: a cycle, which converting to a tree follows without end.
  CHECK(first_load_problem("a: &a [*a]\n") ==
        "t.yaml:1:8: error: alias '*a' is inside the node it names: the node would contain itself");
  CHECK(first_load_problem("a: &a {b: {c: *a}}\n") ==
        "t.yaml:1:15: error: alias '*a' is inside the node it names: the node would contain itself");
  CHECK(first_override_problem(pingpong, {"operators.scale.params=&p {factor: *p}"}) ==
        "--set operators.scale.params=&p {factor: *p}:1:36: error: alias '*p' is inside the node it names: "
        "the node would contain itself");
  // Aliases of what is already named are copies, and fine.
  CHECK(first_load_problem(pingpong + "runtime: &r {executor: host}\n") == "ok");
  std::string aliased = pingpong;
  aliased.replace(aliased.find("g2c: {frame_size: 64KiB, capacity: 64}"), 38, "g2c: *t");
  aliased.replace(aliased.find("c2g: {"), 5, "c2g: &t ");
  CHECK(first_load_problem(aliased) == "ok");
  // An alias bomb: 10^9 nodes named in a few hundred bytes, refused at the alias that crosses the bound.
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char level = 'b'; level <= 'i'; ++level) {
    const std::string previous(1, static_cast<char>(level - 1));
    bomb += std::string(1, level) + ": &" + std::string(1, level) + " [";
    for (int k = 0; k < 10; ++k) bomb += (k ? ", *" : "*") + previous;
    bomb += "]\n";
  }
  CHECK(first_load_problem(bomb) ==
        "t.yaml:6:8: error: the document holds more than " + std::to_string(yaml_limits::max_nodes) +
            " nodes (an alias counts as a copy of what it names, an anchor as one more), more than a "
            "topology may hold");
  // Anchors nested in anchors: each keeps a copy of all it holds, which the same bound counts.
  // (Sixty levels of 150 scalars each: 9 000 nodes in the tree, 270 000 in the copies.)
  std::string nested = "a: ";
  for (int level = 0; level < 60; ++level) {
    nested += "&a" + std::to_string(level) + " [";
    for (int k = 0; k < 150; ++k) nested += "x, ";
  }
  nested += std::string(60, ']');
  CHECK(first_load_problem(nested).find("error: the document holds more than " +
                                        std::to_string(yaml_limits::max_nodes) + " nodes") !=
        std::string::npos);
  // Nesting: refused at the level past the bound, with the bound named (yaml-cpp alone says "bad file").
  const std::string deep = "topics: " + std::string(1000, '[') + std::string(1000, ']');
  CHECK(first_load_problem(deep) ==
        "t.yaml:1:72: error: lists and maps are nested more than 64 levels deep here, more than a topology "
        "may be");
  std::string deep_maps = "topics:\n";
  for (int level = 0; level < 70; ++level) deep_maps += std::string(2 * level + 2, ' ') + "k:\n";
  CHECK(first_load_problem(deep_maps) ==
        "t.yaml:65:129: error: lists and maps are nested more than 64 levels deep here, more than a "
        "topology may be");
  // A long map refused at the node bound, not by running out of memory (the bomb above is the cheaper
  // case of the same bound).
  if (long_run()) {
    std::string wide = "topics: {";
    for (std::size_t k = 0; k < yaml_limits::max_nodes / 2 + 1; ++k) wide += "a: 1, ";
    wide += "}";
    const std::string wide_problem = first_load_problem(wide);
    CHECK(starts_with(wide_problem, "t.yaml:1:"));
    CHECK(wide_problem.find(": error: the document holds more than " +
                            std::to_string(yaml_limits::max_nodes) + " nodes") != std::string::npos);
  }
  // Text past the byte bound is refused by its size before a byte of it is read: a view of memory never
  // touched (reading it would fault) is enough.
  const std::size_t past = yaml_limits::max_bytes + 1;
  void* untouched = ::mmap(nullptr, past, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(untouched != MAP_FAILED);
  try {
    load_topology_text(std::string_view(static_cast<const char*>(untouched), past), "t.yaml",
                       test::config_registry());
    FAIL_CHECK("loaded text past the byte bound");
  } catch (const config_error& e) {
    CHECK(e.first().str() ==
          "t.yaml:1:1: error: the text is 16777217 bytes, more than a topology may be (16 MiB)");
  }
  ::munmap(untouched, past);
  CHECK(clock::now() - start < std::chrono::seconds(20));  // a bound on a hang, not a timing
}

TEST_CASE("config.long_chains_validate_without_recursion") {
  // The cycle check walks the graph with its own stack: a chain as deep as it is long validates on a
  // thread of 256 KiB of stack, which a walk recursing once per operator would overflow well before 10 000.
  // The CPU threads of so many operators are refused by their bound, at the operator that crosses it.
  struct outcome {
    int length;
    std::string chain, ring;
  } result{long_run() ? 60'000 : 10'000, {}, {}};
  CAPTURE(result.length);
  on_small_stack(
      256 * 1024,
      [](void* p) {
        auto& r = *static_cast<outcome*>(p);
        topology_spec spec = chain_spec(r.length);
        r.chain = problems_of(spec);
        // The same chain closed into a ring: one cycle, named by its ends.
        spec.operators.front().class_name = "pass_through";
        spec.operators.back().class_name = "pass_through";
        spec.operators.back().outputs = {"tz"};
        spec.topics.push_back(spec.topics.back());
        spec.topics.back().name = "tz";
        spec.operators.front().inputs = {"tz"};
        spec.operators.front().on = spec.operators.back().on = placement::cpu;
        r.ring = problems_of(spec);
      },
      &result);
  CHECK(result.chain ==
        "<builder>: error: operator 'o8192': its 1 thread brings the CPU operators' threads to 8193, more "
        "than a topology may run (8192)");
  const std::string last = std::to_string(result.length - 1);
  auto step = [](int k) { return "o" + std::to_string(k) + " -> t" + std::to_string(k) + " -> "; };
  std::string ring_ends = "cycle of " + std::to_string(result.length) + " operators: ";
  for (int k = 0; k < 5; ++k) ring_ends += step(k);
  ring_ends += "... -> ";
  for (int k = result.length - 5; k < result.length - 1; ++k) ring_ends += step(k);
  ring_ends += "o" + last + " -> tz -> o0";
  INFO(result.ring);
  CHECK(result.ring.find(ring_ends) != std::string::npos);
}

TEST_CASE("config.datatype_names_chained_without_end_are_bounded") {
  // Datatypes each naming the next: resolving one reads the next inside it, a recursion bounded as nesting
  // in the file is, however long the chain.
  std::string text = pingpong + "datatypes:\n";
  for (int k = 0; k < 2000; ++k) text += "  d" + std::to_string(k) + ": d" + std::to_string(k + 1) + "\n";
  text += "  d2000: f64\n";
  CHECK(first_load_problem(text) ==
        "t.yaml:265:9: error: datatype 'd255': datatypes name one another more than 256 deep ('d0' -> … -> "
        "'d256')");
}

TEST_CASE("config.real_parameters_are_finite") {
  // NaN and the infinities compare with no range ("must be at most inf" said nothing true): refused as what
  // they are, however the parameter's range reads.
  for (const char* value : {".nan", ".inf", "-.Inf", "+.inf"}) {
    CAPTURE(value);
    std::string text = pingpong;
    text.replace(text.find("outputs: [g2c]}"), 15,
                 std::string("outputs: [g2c], params: {factor: ") + value + "}}");
    CHECK(first_load_problem(text) ==
          "t.yaml:7:73: error: operator 'scale': parameter 'factor' must be a finite number, not '" +
              std::string(value) + "'");
  }
  topology_builder b("p");
  b.topic("c2g");
  b.topic("g2c");
  b.link({}, op("source", "sequence_source"), {"c2g"});
  b.link({"c2g"}, op("scale", "scale").param("factor", std::numeric_limits<double>::quiet_NaN()), {"g2c"});
  b.link({"g2c"}, op("verify", "verify_sink"), {});
  CHECK(test::validation_problems(b.build()) ==
        "<builder>: error: operator 'scale': parameter 'factor' must be a finite number, not nan");
}

TEST_CASE("config.cpu_threads_are_bounded_in_all") {
  // Each operator within its own bound, the sum past the topology's: refused at the operator that crosses.
  std::string text =
      "name: many\ntopics:\n  t: {}\noperators:\n  source: {class: sequence_source, outputs: t}\n";
  for (int k = 0; k < 9; ++k)
    text += "  sink" + std::to_string(k) + ": {class: null_sink, threads: 1000, inputs: t}\n";
  CHECK(first_load_problem(text) ==
        "t.yaml:14:38: error: operator 'sink8': its 1000 threads bring the CPU operators' threads to 9001, "
        "more "
        "than a topology may run (8192)");
}

TEST_CASE("config.long_chain_topology_files_are_refused_by_a_bound") {
  // The loader's side of long chains: the file read and converted in linear time (duplicate keys are found
  // by lookup, not by a search from each map's start). Seconds in a debug build: XF_LONG=1 only.
  if (!long_run()) {
    MESSAGE("skipped: XF_LONG=1 loads topology files of 10 000 and 60 000 operators");
    return;
  }
  // 10 000 operators: past the CPU threads' bound, at the operator that crosses it (its key: o0 is on the
  // line after the topics', which follow `name` and `topics`).
  CHECK(first_load_problem(chain_yaml(10'000)) ==
        "t.yaml:18195:3: error: operator 'o8192': its 1 thread brings the CPU operators' threads to 8193, "
        "more than a topology may run (8192)");
  // 60 000: past the document's bound on nodes, before anything is validated.
  const std::string problem = first_load_problem(chain_yaml(60'000));
  CHECK(starts_with(problem, "t.yaml:"));
  CHECK(problem.find(": error: the document holds more than " + std::to_string(yaml_limits::max_nodes) +
                     " nodes") != std::string::npos);
}

TEST_CASE("config.many_problems_print_the_first_hundred") {
  // Every problem is kept, and the message names the first hundred and how many more there are.
  std::string text = "name: keys\n";
  for (int k = 0; k < 150; ++k) text += "key" + std::to_string(k) + ": 1\n";
  try {
    load_topology_text(text, "t.yaml", test::config_registry());
    FAIL("expected a config_error");
  } catch (const config_error& e) {
    CHECK(e.problems().size() == 150);
    const std::string what = e.what();
    CHECK(std::count(what.begin(), what.end(), '\n') == 100);
    CHECK(what.substr(what.rfind('\n') + 1) == "... and 50 more problems");
    CHECK(what.rfind("t.yaml:101:1: error: unknown key 'key99' at the top level", what.rfind('\n') - 1) !=
          std::string::npos);
  }
}

TEST_CASE("config.sizes_past_the_machine_are_refused") {
  const std::uint64_t memory = machine_memory_bytes();
  REQUIRE_MESSAGE(memory > 0, "the machine says how much memory it has");
  const std::string machine = "this machine's memory (" + format_bytes(memory) + ")";
  auto topic_with = [](const std::string& settings) {
    return "name: big\ntopics:\n  in: {" + settings +
           "}\noperators:\n  source: {class: sequence_source, outputs: in}\n"
           "  sink: {class: null_sink, inputs: in}\n";
  };
  // 2^32 - 1 frames of 1 GiB: 4 EiB, more than any machine; the product is computed without wrapping.
  CHECK(first_load_problem(topic_with("frame_size: 1GiB, capacity: 4294967295")) ==
        "t.yaml:3:36: error: topic 'in': its 4294967295 frames of 1 GiB (capacity x frame_size) take " +
            format_bytes(std::uint64_t{4294967295} * GiB) + ", more than " + machine);
  CHECK(first_load_problem(topic_with("frame_size: 1048576TiB")) ==
        "t.yaml:3:20: error: topic 'in': a frame of " + format_bytes(1048576 * TiB) + " is more than " +
            machine);
  const std::string objects =
      test::load_problems(pingpong + "shared_objects:\n  table: {bytes: 1048576TiB}\n");
  INFO(objects);
  CHECK(objects.find("t.yaml:10:18: error: shared object 'table': its 2 versions of " +
                     format_bytes(1048576 * TiB) + " take " + format_bytes(2 * 1048576 * TiB) +
                     ", more than " + machine) != std::string::npos);
}
