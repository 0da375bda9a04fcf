// Which GPUs a process shows the CUDA driver: only those up to the one its kernel runs on, when that is known
// before any CUDA call, and never over the user's own CUDA_VISIBLE_DEVICES.
#include "framework/launch/gpu_visibility.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "framework/launch/launcher.hpp"
#include "framework/model/topology_builder.hpp"

using namespace xf;

namespace {

/// Holds CUDA_VISIBLE_DEVICES as the test found it, and puts it back: the test process's own GPU cases run
/// after these.
class visible_devices_restored {
 public:
  visible_devices_restored() {
    if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) saved_ = v;
  }
  ~visible_devices_restored() {
    if (saved_)
      setenv("CUDA_VISIBLE_DEVICES", saved_->c_str(), 1);
    else
      unsetenv("CUDA_VISIBLE_DEVICES");
  }
  visible_devices_restored(const visible_devices_restored&) = delete;
  visible_devices_restored& operator=(const visible_devices_restored&) = delete;

 private:
  std::optional<std::string> saved_;
};

std::optional<std::string> visible() {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  return v ? std::optional<std::string>(v) : std::nullopt;
}

/// source → scale (GPU, on `device` and `rank` when given) → verify.
topology_spec gpu_chain(std::optional<std::uint32_t> device = std::nullopt, std::uint32_t rank = 0) {
  topology_builder b("chain");
  b.topic("c2g").frame_bytes(4 * 1024).capacity(4);
  b.topic("g2c").frame_bytes(4 * 1024).capacity(4);
  b.link({}, op("source", "sequence_source").param("total_bytes", "64KiB"), {"c2g"});
  op scale("scale", "scale");
  scale.on(placement::gpu).param("factor", 2.0).rank(rank);
  if (device) scale.device(*device);
  b.link({"c2g"}, scale, {"g2c"});
  b.link({"g2c"}, op("verify", "verify_sink"), {});
  return b.build();
}

}  // namespace

TEST_CASE("gpu_visibility.the_list_runs_from_gpu_0_to_the_runs_gpu") {
  CHECK(visible_gpus_through(0) == "0");
  CHECK(visible_gpus_through(1) == "0,1");
  CHECK(visible_gpus_through(3) == "0,1,2,3");
}

TEST_CASE("gpu_visibility.set_only_where_the_user_set_nothing") {
  visible_devices_restored restore;
  unsetenv("CUDA_VISIBLE_DEVICES");
  CHECK(limit_visible_gpus(2) == std::optional<std::string>("0,1,2"));
  CHECK(visible() == std::optional<std::string>("0,1,2"));
  // Once set (by the user, or by a first call), it stands.
  CHECK_FALSE(limit_visible_gpus(0).has_value());
  CHECK(visible() == std::optional<std::string>("0,1,2"));
  setenv("CUDA_VISIBLE_DEVICES", "", 1);  // the user hides every GPU
  CHECK_FALSE(limit_visible_gpus(0).has_value());
  CHECK(visible() == std::optional<std::string>(""));
}

TEST_CASE("gpu_visibility.a_run_shows_the_driver_the_gpus_up_to_its_kernels") {
  visible_devices_restored restore;
  const auto after = [](const topology_spec& spec, bool force_host, std::optional<rank_part> part,
                        std::uint32_t node_rank) {
    unsetenv("CUDA_VISIBLE_DEVICES");
    limit_visible_gpus_for(spec, force_host, part, node_rank);
    return visible();
  };
  const std::optional<std::string> untouched;
  SUBCASE("one process: GPU 0, or the GPU its operators name") {
    CHECK(after(gpu_chain(), false, std::nullopt, 0) == std::optional<std::string>("0"));
    CHECK(after(gpu_chain(2), false, std::nullopt, 0) == std::optional<std::string>("0,1,2"));
  }
  SUBCASE("no kernel: the host executor, forced or written, or no GPU operator") {
    CHECK(after(gpu_chain(2), true, std::nullopt, 0) == untouched);
    topology_spec host = gpu_chain(2);
    host.runtime.executor = executor_kind::host;
    CHECK(after(host, false, std::nullopt, 0) == untouched);
    topology_builder b("cpu_only");
    b.topic("t").frame_bytes(4 * 1024).capacity(4);
    b.link({}, op("source", "sequence_source").param("total_bytes", "64KiB"), {"t"});
    b.link({"t"}, op("verify", "verify_sink"), {});
    CHECK(after(b.build(), false, std::nullopt, 0) == untouched);
  }
  SUBCASE("ranks: the rank's own GPU operators decide") {
    // Rank 1 runs the kernel on GPU 1; rank 0 runs none.
    CHECK(after(gpu_chain(1, 1), false, rank_part{1, 2}, 1) == std::optional<std::string>("0,1"));
    CHECK(after(gpu_chain(1, 1), false, rank_part{0, 2}, 0) == untouched);
    // No device named: the first rank of a node takes GPU 0; the others' GPU is their place on the node
    // modulo its GPUs, which only CUDA can count, so they leave the driver every GPU.
    CHECK(after(gpu_chain(std::nullopt, 1), false, rank_part{1, 2}, 0) == std::optional<std::string>("0"));
    CHECK(after(gpu_chain(std::nullopt, 1), false, rank_part{1, 2}, 1) == untouched);
  }
}
