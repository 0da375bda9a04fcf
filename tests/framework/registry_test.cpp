// The registry and operator contracts.
#include <doctest/doctest.h>

#include "framework/model/operator_schema.hpp"
#include "framework/model/registry.hpp"
#include "operators/builtin.hpp"
#include "tests/e2e/faulty_ops.hpp"

using namespace xf;

TEST_CASE("registry.builtins_are_registered_with_roles") {
  operator_registry r;
  register_builtin_operators(r);
  const auto* scale = r.find("scale");
  REQUIRE(scale);
  CHECK(scale->info.gpu);
  CHECK(scale->info.role == operator_role::map);
  CHECK(scale->make_host_kernel);
  CHECK(r.find("sequence_source")->info.role == operator_role::source);
  CHECK(r.find("verify_sink")->info.role == operator_role::sink);
  CHECK(r.find("verify_sink")->info.needs_reference);
  CHECK(r.find("no_such") == nullptr);
}

TEST_CASE("registry.duplicate_class_is_refused") {
  operator_registry r;
  r.add<test::throw_at_op>("x");
  CHECK_THROWS_AS(r.add<test::throw_at_op>("x"), precondition_error);
}

TEST_CASE("registry.gpu_operator_runs_on_cpu_through_adapter") {
  operator_registry r;
  r.add_gpu_operators<gpu_operator_list<test::corrupt_at_op>>();
  auto cpu = r.find("corrupt_at")->make_cpu({{"at", std::int64_t{3}}}, {});
  auto* map = dynamic_cast<cpu_map*>(cpu.get());
  REQUIRE(map);
  std::uint32_t in[4] = {1, 2, 3, 4}, out[4] = {};
  frame_in fi{reinterpret_cast<const std::byte*>(in), sizeof in, element_type::u32};
  frame_out fo{reinterpret_cast<std::byte*>(out), sizeof out, 0, element_type::u32};
  map->on_frame(3, fi, fo);  // one virtual thread: the replay path, which does not corrupt
  CHECK(fo.bytes == sizeof in);
  CHECK(out[0] == 1);
  CHECK(out[3] == 4);
}

TEST_CASE("registry.a_parameter_below_an_int64_range_names_its_lower_bound_only") {
  // record_bytes takes 1 up to int64's largest, a bound that is 2^63 as a double: the message must not
  // cast it to an int64 (undefined; it printed "between 1 and -9223372036854775808").
  operator_registry r;
  register_builtin_operators(r);
  for (const char* cls : {"prefetch_ranges", "prefetch_writeback"}) {
    CAPTURE(cls);
    param_map values{{"path", std::string("dataset.bin")}, {"record_bytes", std::int64_t{0}}};
    std::string text;
    for (const param_problem& p : normalize_params(r.find(cls)->info, values)) text += p.message + "\n";
    CHECK(text.find("parameter 'record_bytes' must be at least 1, not 0\n") != std::string::npos);
  }
}
