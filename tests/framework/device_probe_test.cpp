// The GPU probe: which ordinal it probed, and what it says of an ordinal this machine does not have.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "framework/plan/device_probe.hpp"

using namespace xf;

TEST_CASE("device_probe.ordinal_beyond_the_count_is_not_usable") {
  const std::uint32_t count = device_count();
  for (const std::uint32_t ordinal : {count, count + 1, count + 7}) {
    const device_status status = probe_device(ordinal);
    CHECK_FALSE(status.usable);
    CHECK(status.ordinal == ordinal);
    CHECK(status.description.empty());
    CHECK(status.sm_count == 0);
    REQUIRE_FALSE(status.reason.empty());
    // With GPUs, the reason counts them; without, it is the build's, the driver's or "no CUDA-capable
    // device".
    if (count > 0) {
      CHECK(status.reason.find("no GPU " + std::to_string(ordinal)) != std::string::npos);
      CHECK(status.reason.find("has " + std::to_string(count) + " GPU") != std::string::npos);
    }
  }
}

TEST_CASE("device_probe.default_probes_gpu_0") {
  const device_status first = probe_device();
  const device_status zero = probe_device(0);
  CHECK(first.ordinal == 0);
  CHECK(first.usable == zero.usable);
  CHECK(first.reason == zero.reason);
  CHECK(first.description == zero.description);
}

TEST_CASE("device_probe.count_is_zero_without_cuda") {
#if defined(XF_HAVE_CUDA)
  MESSAGE("a build with CUDA: device_count() is the driver's (" << device_count() << ")");
#else
  CHECK(device_count() == 0);
  CHECK(probe_device(0).reason == "built without CUDA");
  CHECK(probe_device(3).reason == "built without CUDA");
#endif
  if (device_count() == 0) CHECK_FALSE(probe_device(0).usable);
}

TEST_CASE("device_probe.each_gpu_probes_as_itself") {
  const std::uint32_t count = device_count();
  if (count == 0) {
    MESSAGE("skipped (GPU test): no GPU: " << probe_device().reason);
    std::printf("framework_test: device_probe.each_gpu_probes_as_itself skipped (GPU test): no GPU\n");
    return;
  }
  for (std::uint32_t ordinal = 0; ordinal < count; ++ordinal) {
    const device_status status = probe_device(ordinal);
    CHECK(status.ordinal == ordinal);
    // A GPU without managed access or cooperative launch says so; a usable one describes itself.
    if (status.usable) {
      CHECK(status.sm_count > 0);
      CHECK(status.description.find("sm_") != std::string::npos);
    } else {
      CHECK_FALSE(status.reason.empty());
    }
  }
}
