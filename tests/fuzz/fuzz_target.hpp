// One fuzz target's shape, compiled two ways: with libFuzzer (-Dfuzz=true, XF_FUZZ_LIBFUZZER) each target
// file is a fuzzer program whose LLVMFuzzerTestOneInput calls the target; in the ordinary test suite every
// target file is linked into one doctest program that replays each target's corpus (replay_test.cpp), so a
// crash once found and saved there stays fixed in every build.
//
// A target feeds its input to the parser's real entry point and catches the errors that entry point
// documents: a thrown configuration error is a correct answer. A crash, a sanitizer's report, an escaping
// exception of another type, a timeout, running out of memory or a broken invariant (fuzz_expect) is a bug.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace xf::fuzz {

/// A target's input, as libFuzzer gives it.
using input = std::span<const std::uint8_t>;

/// A property of the parser's answer that must hold for every input, broken: the replay test reports it
/// with the file that broke it (libFuzzer's programs abort instead, which saves the input).
class invariant_broken : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] inline void fail_invariant(const std::string& what) {
#ifdef XF_FUZZ_LIBFUZZER
  std::fprintf(stderr, "fuzz target: invariant broken: %s\n", what.c_str());
  std::abort();
#else
  throw invariant_broken(what);
#endif
}

inline void fuzz_expect(bool holds, const std::string& what) {
  if (!holds) fail_invariant(what);
}

inline std::string_view as_text(input data) {
  return {reinterpret_cast<const char*>(data.data()), data.size()};
}

// The targets, one file each (tests/fuzz/<name>.cpp), and the corpus folder each replays
// (tests/fuzz/corpus/<name>/). Each returns 0, as libFuzzer asks.
int topology(input data);       // load_topology_text: YAML, the schema, validation; to_yaml's round trip
int overrides(input data);      // `--set` arguments applied to a topology, then loaded as above
int datatype_yaml(input data);  // the `datatypes:` grammar, commit, pack and unpack
int datatype_load(input data);  // committed_type::load: a serialized datatype's bytes checked whole
int table_schema(input data);   // xeflow-table's --schema and --bloom text, the geometry, the topic's YAML
int table_file(input data);     // a table file's header and frames (columnar_table_file), then as CSV
int table_csv(input data);      // xeflow-table's CSV to a table and back (csv_to_table, table_to_csv)
int query_text(input data);     // the query operator's where / select / group_by, compiled against columns
int address_frame(input data);  // prefetch_assembler: an address frame's header and lanes' encoded streams
int units(input data);          // byte counts with units (parse_bytes), their messages and exact_bytes
int command_line(input data);   // --metrics' address, XEFLOW_LOG_LEVEL, --graph's format

}  // namespace xf::fuzz

// Defines target `name`: `XF_FUZZ_TARGET(units) { ... }` with the input in `data`. With libFuzzer it is the
// program's LLVMFuzzerTestOneInput too.
#ifdef XF_FUZZ_LIBFUZZER
#define XF_FUZZ_TARGET(name)                                                           \
  extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) { \
    return xf::fuzz::name(xf::fuzz::input(bytes, size));                               \
  }                                                                                    \
  int xf::fuzz::name(xf::fuzz::input data)
#else
#define XF_FUZZ_TARGET(name) int xf::fuzz::name(xf::fuzz::input data)
#endif
