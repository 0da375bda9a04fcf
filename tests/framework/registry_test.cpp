// The registry and operator contracts.
#include <doctest/doctest.h>

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
