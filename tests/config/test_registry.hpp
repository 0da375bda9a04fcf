// A registry for the config tests: stand-ins with the built-in operators' class names, roles and
// parameters (names, kinds, defaults, ranges and descriptions), so the corpus reads like real topologies
// and gives the same diagnostics as xeflow-run (tests/e2e runs the same corpus against the real ones),
// without depending on the operators' implementations. Their hooks do nothing: nothing here runs.
#pragma once

#include <cstdint>
#include <string>

#include "framework/model/registry.hpp"
#include "operators/olap/query.hpp"
#include "operators/sources/prefetch_source.hpp"
#include "operators/sources/table_source.hpp"
#include "operators/transforms/address_generators/record_addresses.hpp"
#include "operators/transforms/datatype_pack.hpp"
#include "operators/transforms/kmeans_assign.hpp"

namespace xf::test {

/// Parameters of the generator sources (operators/sources/generated_source.hpp).
struct generated_params {
  std::uint64_t total_bytes = std::uint64_t{1} << 30;
  std::int64_t seed = 0;
};

class fake_sequence_source final : public cpu_source {
 public:
  using params = generated_params;
  static void describe(operator_schema<params>& s) {
    s.describe("publishes the sequence seed, seed+1, … (stand-in)");
    s.bytes(&params::total_bytes, "total_bytes",
            "stream length in bytes; a multiple of the element size; the last frame may be short",
            params{}.total_bytes);
    s.param(&params::seed, "seed", "value of the stream's first element", params{}.seed);
  }
  explicit fake_sequence_source(const params&) {}
  bool produce(std::uint64_t, frame_out&) override { return false; }
};

class fake_random_source final : public cpu_source {
 public:
  using params = generated_params;
  static void describe(operator_schema<params>& s) {
    s.describe("publishes pseudo-random elements (stand-in)");
    s.bytes(&params::total_bytes, "total_bytes",
            "stream length in bytes; a multiple of the element size; the last frame may be short",
            params{}.total_bytes);
    s.param(&params::seed, "seed", "generator seed", params{}.seed);
  }
  explicit fake_random_source(const params&) {}
  bool produce(std::uint64_t, frame_out&) override { return false; }
};

class fake_file_source final : public cpu_source {
 public:
  struct params {
    std::string path;
  };
  static void describe(operator_schema<params>& s) {
    s.describe("reads a file as consecutive frames (stand-in)");
    s.param(&params::path, "path", "file to read; its size at start is the stream's length", required);
  }
  explicit fake_file_source(const params&) {}
  bool produce(std::uint64_t, frame_out&) override { return false; }
};

struct fake_scale {
  static constexpr char class_name[] = "scale";
  struct params {
    double factor = 2.0;
  };
  static void describe(operator_schema<params>& s) {
    s.describe("multiplies every element by a constant (stand-in)");
    s.param(&params::factor, "factor", "multiplier applied to every element", params{}.factor);
  }
  template <class T>
  static void compute(const params&, const frame_task<T>&) {}
};

struct fake_fma {
  static constexpr char class_name[] = "fma";
  struct params {
    std::uint32_t iterations = 16;
    double a = 1.0001;
    double b = 0.5;
  };
  static void describe(operator_schema<params>& s) {
    s.describe("v = v*a + b, `iterations` times per element (stand-in)");
    s.param(&params::iterations, "iterations", "multiply-adds per element (arithmetic intensity)",
            params{}.iterations, 1, 4096);
    s.param(&params::a, "a", "multiplier of each step", params{}.a);
    s.param(&params::b, "b", "addend of each step", params{}.b);
  }
  template <class T>
  static void compute(const params&, const frame_task<T>&) {}
};

struct fake_pass_through {
  static constexpr char class_name[] = "pass_through";
  struct params {};
  static void describe(operator_schema<params>& s) { s.describe("copies every frame unchanged (stand-in)"); }
  template <class T>
  static void compute(const params&, const frame_task<T>&) {}
};

class fake_verify_sink final : public cpu_sink {
 public:
  struct params {};
  static void describe(operator_schema<params>& s) {
    s.describe("checks every frame against the replayed upstream chain (stand-in)");
    s.needs_reference();
  }
  explicit fake_verify_sink(const params&) {}
  void on_frame(std::uint64_t, const frame_in&) override {}
};

class fake_null_sink final : public cpu_sink {
 public:
  struct params {};
  static void describe(operator_schema<params>& s) { s.describe("discards frames (stand-in)"); }
  explicit fake_null_sink(const params&) {}
  void on_frame(std::uint64_t, const frame_in&) override {}
};

class fake_file_sink final : public cpu_sink {
 public:
  struct params {
    std::string path;
  };
  static void describe(operator_schema<params>& s) {
    s.describe("writes frames to a file (stand-in)");
    s.param(&params::path, "path", "file to write (created or truncated)", required);
  }
  explicit fake_file_sink(const params&) {}
  void on_frame(std::uint64_t, const frame_in&) override {}
};

/// A CPU map whose output depends on when it runs: what a verify sink cannot replay. Not a built-in, so
/// it is never used by the corpus (which must read the same with xeflow-run's registry).
class fake_timestamp final : public cpu_map {
 public:
  struct params {};
  static void describe(operator_schema<params>& s) {
    s.describe("stamps each frame with the wall clock (test only)");
    s.not_replayable();
  }
  explicit fake_timestamp(const params&) {}
  void on_frame(std::uint64_t, const frame_in&, frame_out&) override {}
};

// ---- test-only classes with object slots (shared objects) ----------------------------------------------
// Not built-ins, so the corpus in bad/ never uses them: bad_test_classes/ does, with extended_registry().

/// A CPU map that publishes the versions of an f32 object (as a K-means update step publishes centres).
class fake_update final : public cpu_map {
 public:
  struct params {};
  static void describe(operator_schema<params>& s) {
    s.describe("folds its input into new centres and publishes them (test only)");
    s.shared("centres", object_access::write, "the centres it publishes", element_set{element_type::f32});
  }
  explicit fake_update(const params&) {}
  void on_frame(std::uint64_t, const frame_in&, frame_out&) override {}
};

/// A GPU map that reads an f32 object (as K-means' assignment step reads the centres), and checks that the
/// object holds the entries its parameter names.
struct fake_lookup {
  static constexpr char class_name[] = "lookup";
  struct params {
    std::uint32_t entries = 0;
  };
  static void describe(operator_schema<params>& s) {
    s.describe("maps each element through the centres of its frame's version (test only)");
    s.param(&params::entries, "entries", "the f32 values it reads of the object", params{}.entries, 0,
            1 << 20);
    s.shared("centres", object_access::read, "the centres it reads", element_set{element_type::f32})
        .check_object([](const params& p, std::uint64_t bytes) -> std::string {
          if (bytes >= std::uint64_t{p.entries} * sizeof(float)) return {};
          return "the object holds " + std::to_string(bytes) + " bytes, fewer than entries (" +
                 std::to_string(p.entries) + ") f32 values";
        });
  }
  template <class T>
  static void compute(const params&, const frame_task<T>&) {}
};

/// A GPU map with an optional write slot: bound, valid on cpu only (only CPU operators publish versions).
struct fake_accumulate {
  static constexpr char class_name[] = "accumulate";
  struct params {};
  static void describe(operator_schema<params>& s) {
    s.describe("adds each frame into running totals it publishes, if it is given an object (test only)");
    s.shared("totals", object_access::write, "the totals it publishes").optional();
  }
  template <class T>
  static void compute(const params&, const frame_task<T>&) {}
};

/// A source with a read slot: refused, a source has no input frame whose offset picks a version.
class fake_seeded_source final : public cpu_source {
 public:
  struct params {};
  static void describe(operator_schema<params>& s) {
    s.describe("publishes frames seeded from a shared object (test only)");
    s.shared("seed", object_access::read, "the seed it reads");
  }
  explicit fake_seeded_source(const params&) {}
  bool produce(std::uint64_t, frame_out&) override { return false; }
};

/// The built-in class names with stand-in implementations.
inline void register_fake_builtins(operator_registry& registry) {
  registry.add<fake_sequence_source>("sequence_source");
  registry.add<fake_random_source>("random_source");
  registry.add<fake_file_source>("file_source");
  registry.add_gpu_operators<gpu_operator_list<fake_scale, fake_fma, fake_pass_through>>();
  registry.add<fake_verify_sink>("verify_sink");
  registry.add<fake_null_sink>("null_sink");
  registry.add<fake_file_sink>("file_sink");
  // The real ones: their parameters' checks (a field list's syntax, a list of numbers, a datatype against
  // the topics) are what the corpus tests.
  registry.add<prefetch_source>("prefetch_source");
  registry.add<table_source>("table_source");
  registry.add_gpu_operators<
      gpu_operator_list<kmeans_assign_op, record_addresses_op, query_op, pack_op, unpack_op>>();
}

/// The fake built-ins, built once.
inline const operator_registry& config_registry() {
  static const operator_registry registry = [] {
    operator_registry r;
    register_fake_builtins(r);
    return r;
  }();
  return registry;
}

/// The fake built-ins plus test-only classes (timestamp, and update, lookup, accumulate and seeded_source
/// with their object slots).
inline const operator_registry& extended_registry() {
  static const operator_registry registry = [] {
    operator_registry r;
    register_fake_builtins(r);
    r.add<fake_timestamp>("timestamp");
    r.add<fake_update>("update");
    r.add<fake_seeded_source>("seeded_source");
    r.add_gpu_operators<gpu_operator_list<fake_lookup, fake_accumulate>>();
    return r;
  }();
  return registry;
}

}  // namespace xf::test
