// Planning: workers, groups, warp partition and start order.
#include <doctest/doctest.h>

#include "framework/model/spec_validation.hpp"
#include "framework/model/topology_builder.hpp"
#include "framework/model/yaml_loader.hpp"
#include "framework/plan/plan.hpp"
#include "operators/builtin.hpp"
#include "operators/transforms/fma.hpp"
#include "tests/support/builtin_topology.hpp"

#include <optional>
#include <typeindex>

using namespace xf;

namespace {
topology_spec three_gpu_ops(std::uint32_t warps_per_block) {
  topology_builder b("p");
  for (const char* t : {"t0", "t1", "t2", "t3"}) b.topic(t);
  b.link({"t2"}, op("g3", "pass_through").on(placement::gpu), {"t3"});  // declared out of order on purpose
  b.link({}, op("source", "sequence_source").threads(3), {"t0"});
  b.link({"t0"}, op("g1", "scale").on(placement::gpu), {"t1"});
  b.link({"t1"}, op("g2", "fma").on(placement::gpu), {"t2"});
  b.link({"t3"}, op("sink", "null_sink").threads(2), {});
  b.link({"t1"}, op("tap", "null_sink"), {});
  b.runtime().warps_per_block(warps_per_block).blocks(5);
  auto spec = b.build();
  validate_topology(spec, test::builtin_registry());
  return spec;
}
}  // namespace

TEST_CASE("plan.uniform_partition_sums_to_block_warps") {
  const auto spec = three_gpu_ops(8);
  const plan p = make_plan(spec, test::builtin_registry(), plan_options{});
  REQUIRE(p.kernel_operators.size() == 3);
  std::uint32_t total = 0;
  for (std::size_t k : p.kernel_operators) {
    CHECK(p.operators[k].warps >= 2);
    total += p.operators[k].warps;
    CHECK(p.operators[k].workers == 5);
  }
  CHECK(total == 8);
  CHECK(p.executor == resolved_executor::host);
}

TEST_CASE("plan.groups_publishers_and_start_order") {
  const auto spec = three_gpu_ops(8);
  const plan p = make_plan(spec, test::builtin_registry(), plan_options{});
  // t1 has two subscriber groups (g2, tap) and one publisher operator with 5 block workers.
  const planned_topic& t1 = p.topics[1];
  CHECK(t1.subscribers.size() == 2);
  CHECK(t1.publisher_workers == 5);
  CHECK(p.topics[0].publisher_workers == 3);
  // Sources first, each operator after its publishers.
  std::vector<std::string> order;
  for (std::size_t i : p.start_order) order.push_back(p.operators[i].spec->name);
  CHECK(order.front() == "source");
  auto pos = [&](const std::string& n) { return std::find(order.begin(), order.end(), n) - order.begin(); };
  CHECK(pos("g1") < pos("g2"));
  CHECK(pos("g2") < pos("g3"));
  CHECK(pos("g3") < pos("sink"));
}

TEST_CASE("plan.more_kernel_operators_than_warps_is_refused") {
  const auto spec = three_gpu_ops(2);
  CHECK_THROWS_AS(make_plan(spec, test::builtin_registry(), plan_options{}), config_error);
}

TEST_CASE("plan.device_executor_without_gpu_is_refused") {
  auto spec = three_gpu_ops(8);
  spec.runtime.executor = executor_kind::device;
  plan_options options;
  options.device.usable = false;
  options.device.reason = "no CUDA-capable device";
  try {
    make_plan(spec, test::builtin_registry(), options);
    FAIL("expected a config_error");
  } catch (const config_error& e) {
    CHECK(std::string(e.what()).find("no CUDA-capable device") != std::string::npos);
  }
}

namespace {
/// A pretend GPU: 4 SMs, 2 blocks of any size per SM, every operator type compiled in unless excluded.
device_capabilities fake_gpu(std::optional<std::type_index> excluded = std::nullopt) {
  device_capabilities d;
  d.usable = true;
  d.sm_count = 4;
  d.blocks_per_sm = [](int) { return 2; };
  d.compiled_in = [excluded](std::type_index t) { return !excluded || t != *excluded; };
  return d;
}
}  // namespace

TEST_CASE("plan.device_executor_sizes_the_grid_from_occupancy") {
  auto spec = three_gpu_ops(8);
  spec.runtime.blocks = 0;
  for (auto& t : spec.topics) t.transfer = transfer_mode::mapped;  // staging is what mapped topics get
  plan_options options;
  options.device = fake_gpu();
  const plan p = make_plan(spec, test::builtin_registry(), options);
  CHECK(p.executor == resolved_executor::device);
  CHECK(p.blocks == 8);  // 4 SMs x min(2 resident, default 2); capacities (64) allow more
  for (std::size_t k : p.kernel_operators) CHECK(p.operators[k].workers == 8);
  CHECK(p.topics[1].publisher_workers == 8);
  // t0 comes from a CPU source (host memory): staged; t1 and t2 are GPU-to-GPU... except t1 also feeds
  // the CPU 'tap', so it stays in host memory and g2 stages it; t2 is GPU-only: no staging.
  auto by_name = [&](const std::string& n) -> const planned_operator& {
    for (const auto& po : p.operators)
      if (po.spec->name == n) return po;
    FAIL("no operator " << n);
    return p.operators.front();
  };
  CHECK(by_name("g1").stage);
  CHECK(by_name("g2").stage);
  CHECK_FALSE(by_name("g3").stage);
  // Outputs: t1 (read by the CPU tap) and t3 (the CPU sink) are in host memory; t2 is GPU-only.
  CHECK(by_name("g1").stage_output);
  CHECK_FALSE(by_name("g2").stage_output);
  CHECK(by_name("g3").stage_output);
  CHECK(by_name("g1").parts == 1);
}

TEST_CASE("plan.device_blocks_are_capped_by_the_work_in_flight") {
  auto spec = three_gpu_ops(8);
  spec.runtime.blocks = 0;
  for (auto& t : spec.topics) {
    t.capacity = 3;
    t.frame_bytes = 4096;  // one page: too small to split
  }
  plan_options options;
  options.device = fake_gpu();
  const plan p = make_plan(spec, test::builtin_registry(), options);
  CHECK(p.blocks == 3);  // more blocks could only poll
  CHECK(p.operators[p.kernel_operators[1]].parts == 1);
}

TEST_CASE("plan.part_size_decides_the_parts_of_frames_in_flight") {
  auto spec = three_gpu_ops(8);
  spec.runtime.blocks = 0;
  for (auto& t : spec.topics) {
    t.capacity = 3;
    t.frame_bytes = 64 * 1024;
  }
  plan_options options;
  options.device = fake_gpu();
  auto g1_of = [](const plan& p) -> const planned_operator& {
    const planned_operator& g1 = p.operators[p.kernel_operators[1]];  // g3 is declared first
    REQUIRE(g1.spec->name == "g1");
    return g1;
  };
  {
    // By default a frame under kernel_part_bytes is one item, however few frames are in flight (splitting
    // them so that every block had a part measured slower): 3 frames, 3 blocks.
    const plan p = make_plan(spec, test::builtin_registry(), options);
    CHECK(g1_of(p).parts == 1);
    CHECK(p.blocks == 3);
  }
  {
    // runtime.part_size splits them: 16 KiB parts, 4 a frame; 12 items in flight fill the 8 blocks.
    spec.runtime.part_bytes = 16 * 1024;
    const plan quarters = make_plan(spec, test::builtin_registry(), options);
    CHECK(g1_of(quarters).parts == 4);
    CHECK(g1_of(quarters).part_bytes == 16 * 1024);
    CHECK(quarters.blocks == 8);
  }
}

TEST_CASE("plan.device_executor_splits_large_frames_into_parts") {
  auto spec = three_gpu_ops(8);
  spec.topics[0].frame_bytes = 4 * 1024 * 1024;
  spec.topics[1].frame_bytes = 4 * 1024 * 1024;
  spec.topics[0].transfer = transfer_mode::mapped;  // the kernel reads t0 in host memory
  plan_options options;
  options.device = fake_gpu();
  const plan p = make_plan(spec, test::builtin_registry(), options);
  const planned_operator& g1 = p.operators[p.kernel_operators[1]];  // g3 is declared first
  REQUIRE(g1.spec->name == "g1");
  CHECK(g1.parts == 16);
  CHECK(g1.part_bytes == kernel_part_bytes);
  CHECK(g1.stage);  // each block stages its 256 KiB part (t0 is in host memory)
}

TEST_CASE("plan.frames_are_shared_until_every_block_has_an_item") {
  // A query reads whole columnar frames; with fewer frames in flight than blocks, each frame is shared
  // by as many items as it takes to give every block one (at most max_frame_shares).
  const std::string yaml = R"yaml(name: shares
topics:
  t:
    layout: columnar
    rows_per_frame: 4096
    capacity: 3
    columns:
      - {name: a, type: i32}
operators:
  source: {class: table_source, outputs: [t], params: {path: t.xft}}
  q: {class: query, on: gpu, inputs: [t], params: {select: "COUNT(*)", result: q.csv}}
)yaml";
  plan_options options;
  options.device = fake_gpu();
  auto shares = [&](std::vector<std::string> overrides) {
    const plan p = make_plan(load_topology_text(yaml, "shares.yaml", test::builtin_registry(), overrides),
                             test::builtin_registry(), options);
    const planned_operator& q = p.operators[p.kernel_operators.at(0)];
    return std::pair{p.blocks, q.parts};
  };
  CHECK(shares({}) == std::pair{8u, 3u});  // 8 blocks (4 SMs x 2), 3 frames: 9 items
  CHECK(shares({"topics.t.capacity=8"}) == std::pair{8u, 1u});
  CHECK(shares({"topics.t.capacity=1"}) == std::pair{8u, 8u});
  options.device.sm_count = 20;
  CHECK(shares({"topics.t.capacity=1"}) == std::pair{max_frame_shares, max_frame_shares});  // 40 could run
  options.force_host = true;  // the host's blocks (runtime.blocks, else its cores) share frames alike
  CHECK(shares({"runtime.blocks=7"}) == std::pair{7u, 3u});
  CHECK(shares({"runtime.blocks=2"}) == std::pair{2u, 1u});
}

TEST_CASE("plan.copy_engines_carry_large_frames_across_pcie") {
  plan_options options;
  options.device = fake_gpu();
  auto topic = [](const plan& p, const std::string& name) -> const planned_topic& {
    for (const auto& t : p.topics)
      if (t.spec->name == name) return t;
    FAIL("no topic " << name);
    return p.topics.front();
  };
  auto op_named = [](const plan& p, const std::string& name) -> const planned_operator& {
    for (const auto& po : p.operators)
      if (po.spec->name == name) return po;
    FAIL("no operator " << name);
    return p.operators.front();
  };
  // t0 (source -> g1) crosses by the copy engines, t3 (g3 -> sink) by the kernel's own stores.
  auto check_t0_copied_t3_mapped = [&](const plan& p) {
    CHECK(topic(p, "t0").dma);
    CHECK_FALSE(topic(p, "t3").dma);
    CHECK_FALSE(op_named(p, "g1").stage);
    CHECK(op_named(p, "g3").stage_output);
  };
  auto spec = three_gpu_ops(8);
  for (auto& t : spec.topics) t.frame_bytes = dma_auto_min_frame_bytes;

  SUBCASE("auto: every topic that crosses PCIe, in its direction; GPU-only topics stay on the device") {
    const plan p = make_plan(spec, test::builtin_registry(), options);
    CHECK(topic(p, "t0").dma);  // CPU source -> g1
    CHECK(topic(p, "t0").dma_to_device);
    CHECK(topic(p, "t1").dma);  // g1 -> g2 and the CPU tap
    CHECK_FALSE(topic(p, "t1").dma_to_device);
    CHECK_FALSE(topic(p, "t2").dma);  // g2 -> g3
    CHECK(topic(p, "t3").dma);        // g3 -> CPU sink
    CHECK_FALSE(topic(p, "t3").dma_to_device);
    // The kernel works on device replicas: nothing is staged.
    for (const char* name : {"g1", "g2", "g3"}) {
      CHECK_FALSE(op_named(p, name).stage);
      CHECK_FALSE(op_named(p, name).stage_output);
    }
    CHECK(p.describe().find("topic t0: frames copied to the device by the copy engines") !=
          std::string::npos);
    CHECK(p.describe().find("topic t3: frames copied to the host by the copy engines") != std::string::npos);
  }
  SUBCASE("auto below the threshold: mapped") {
    for (auto& t : spec.topics) t.frame_bytes = dma_auto_min_frame_bytes / 2;
    const plan p = make_plan(spec, test::builtin_registry(), options);
    for (const auto& t : p.topics) CHECK_FALSE(t.dma);
    CHECK(op_named(p, "g1").stage);
  }
  SUBCASE("auto with mid-sized frames: dma in a deep ring, mapped in a latency-sized one") {
    for (auto& t : spec.topics) t.frame_bytes = 64 * 1024;
    spec.topics[0].capacity = dma_auto_min_capacity;
    spec.topics[3].capacity = dma_auto_min_capacity - 1;
    check_t0_copied_t3_mapped(make_plan(spec, test::builtin_registry(), options));
  }
  SUBCASE("auto with mid-sized frames and a CPU stage between GPU stages: mapped, large frames dma") {
    topology_builder b("relay");
    for (const char* t : {"t0", "t1", "t2", "t3"}) b.topic(t);  // 64 KiB frames, capacity 64
    b.link({}, op("source", "sequence_source"), {"t0"});
    b.link({"t0"}, op("g1", "scale").on(placement::gpu), {"t1"});
    b.link({"t1"}, op("c1", "scale").on(placement::cpu), {"t2"});
    b.link({"t2"}, op("g2", "scale").on(placement::gpu), {"t3"});
    b.link({"t3"}, op("sink", "null_sink"), {});
    auto relay = b.build();
    validate_topology(relay, test::builtin_registry());
    for (const auto& t : make_plan(relay, test::builtin_registry(), options).topics) CHECK_FALSE(t.dma);
    for (auto& t : relay.topics) t.frame_bytes = dma_auto_large_frame_bytes;
    for (const auto& t : make_plan(relay, test::builtin_registry(), options).topics) CHECK(t.dma);
  }
  SUBCASE("auto with large frames: dma whatever the ring") {
    for (auto& t : spec.topics) t.frame_bytes = dma_auto_large_frame_bytes;
    for (auto& t : spec.topics) t.capacity = 2;
    const plan p = make_plan(spec, test::builtin_registry(), options);
    CHECK(topic(p, "t0").dma);
    CHECK(topic(p, "t3").dma);
  }
  SUBCASE("dma and mapped are obeyed at any frame size") {
    for (auto& t : spec.topics) t.frame_bytes = 16 * 1024;
    spec.topics[0].transfer = transfer_mode::dma;
    spec.topics[3].frame_bytes = 4 * 1024 * 1024;
    spec.topics[3].transfer = transfer_mode::mapped;
    check_t0_copied_t3_mapped(make_plan(spec, test::builtin_registry(), options));
  }
  SUBCASE("the naive frames layer (the ablation's baseline) never uses the copy engines") {
    spec.runtime.coherence.frames = frames_policy::naive;
    spec.topics[0].transfer = transfer_mode::dma;
    const plan p = make_plan(spec, test::builtin_registry(), options);
    for (const auto& t : p.topics) CHECK_FALSE(t.dma);
  }
  SUBCASE("the host executor has nothing to copy") {
    const plan p = make_plan(spec, test::builtin_registry(), plan_options{});
    REQUIRE(p.executor == resolved_executor::host);
    for (const auto& t : p.topics) CHECK_FALSE(t.dma);
  }
}

TEST_CASE("plan.device_items_per_round_follow_frame_size_warps_and_capacity") {
  // One GPU operator with all 8 warps, 8 blocks (4 SMs x 2).
  auto one_op = [](std::uint64_t frame_bytes, std::uint32_t capacity) {
    topology_builder b("items");
    b.topic("t0").frame_bytes(frame_bytes).capacity(capacity);
    b.topic("t1").frame_bytes(frame_bytes).capacity(capacity);
    b.link({}, op("source", "sequence_source"), {"t0"});
    b.link({"t0"}, op("g1", "scale").on(placement::gpu), {"t1"});
    b.link({"t1"}, op("sink", "null_sink"), {});
    b.runtime().warps_per_block(8);
    auto spec = b.build();
    validate_topology(spec, test::builtin_registry());
    plan_options options;
    options.device = fake_gpu();
    const plan p = make_plan(spec, test::builtin_registry(), options);
    REQUIRE(p.blocks == 8);
    return p.operators[p.kernel_operators[0]].items;
  };
  CHECK(one_op(4096, 1024) == 8);         // 64 KiB per round wants 16; one per warp at most
  CHECK(one_op(16384, 1024) == 4);        // 64 KiB per round
  CHECK(one_op(16384, 96) == 2);          // 8 blocks x items <= 96 / 4: 3, and a divisor of 8 warps
  CHECK(one_op(16384, 16) == 1);          // the topic holds too little in flight for more
  CHECK(one_op(64 * 1024, 1024) == 1);    // a whole round's worth already
  CHECK(one_op(4096 * 1024, 1024) == 1);  // frames in parts: one part per item
}

TEST_CASE("plan.device_items_share_the_leader_warp") {
  // 32 warps, 4 GPU operators of 4 KiB frames: each wants 8 items (one per warp), 32 lanes in all.
  topology_builder b("lanes");
  for (const char* t : {"t0", "t1", "t2", "t3", "t4"}) b.topic(t).frame_bytes(4096).capacity(4096);
  b.link({}, op("source", "sequence_source"), {"t0"});
  b.link({"t0"}, op("g1", "scale").on(placement::gpu), {"t1"});
  b.link({"t1"}, op("g2", "scale").on(placement::gpu), {"t2"});
  b.link({"t2"}, op("g3", "scale").on(placement::gpu), {"t3"});
  b.link({"t3"}, op("g4", "scale").on(placement::gpu), {"t4"});
  b.link({"t4"}, op("sink", "null_sink"), {});
  b.runtime().warps_per_block(32);
  auto spec = b.build();
  validate_topology(spec, test::builtin_registry());
  plan_options options;
  options.device = fake_gpu();
  const plan p = make_plan(spec, test::builtin_registry(), options);
  std::uint32_t lanes = 0;
  for (std::size_t k : p.kernel_operators) {
    CHECK(p.operators[k].items >= 1);
    CHECK(p.operators[k].warps % p.operators[k].items == 0);
    lanes += p.operators[k].items;
  }
  CHECK(lanes <= 32);
}

TEST_CASE("plan.device_blocks_beyond_residency_are_refused") {
  auto spec = three_gpu_ops(8);
  spec.runtime.blocks = 9;  // 4 SMs x 2
  plan_options options;
  options.device = fake_gpu();
  try {
    make_plan(spec, test::builtin_registry(), options);
    FAIL("expected a config_error");
  } catch (const config_error& e) {
    CHECK(std::string(e.what()).find("at most 8 blocks") != std::string::npos);
  }
}

TEST_CASE("plan.class_missing_from_the_kernel_falls_back_or_is_refused") {
  auto spec = three_gpu_ops(8);
  plan_options options;
  options.device = fake_gpu(std::type_index(typeid(fma_op)));
  const plan p = make_plan(spec, test::builtin_registry(), options);
  CHECK(p.executor == resolved_executor::host);
  CHECK(p.executor_reason.find("'fma'") != std::string::npos);
  spec.runtime.executor = executor_kind::device;
  CHECK_THROWS_AS(make_plan(spec, test::builtin_registry(), options), config_error);
  options.force_host = true;  // --host wins over runtime.executor: device
  CHECK(make_plan(spec, test::builtin_registry(), options).executor == resolved_executor::host);
}

TEST_CASE("plan.kernels_sharing_a_gpu_under_mps_each_plan_their_share_of_the_blocks") {
  auto spec = three_gpu_ops(8);
  spec.runtime.blocks = 0;
  plan_options options;
  options.device = fake_gpu();
  options.device.sharers = 2;
  const plan p = make_plan(spec, test::builtin_registry(), options);
  CHECK(p.blocks == 4);  // half of 4 SMs x 2
  // An explicit grid larger than the share cannot be resident beside the other kernel.
  spec.runtime.blocks = 5;
  try {
    (void)make_plan(spec, test::builtin_registry(), options);
    FAIL("5 blocks fit beside another kernel on a GPU of 8 resident blocks");
  } catch (const config_error& e) {
    CHECK(std::string(e.what()).find("at most 4 blocks") != std::string::npos);
    CHECK(std::string(e.what()).find("shared under MPS by 2 kernels") != std::string::npos);
  }
}
