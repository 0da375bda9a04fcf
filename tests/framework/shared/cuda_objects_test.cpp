// Shared objects on the GPU (cuda_accelerator): one pointer that kernels and the CPU both use, under every
// protocol — vector addition checked element by element, several CPU threads writing between kernels, and
// lazy update moving only what the CPU touched. Every case needs a GPU and is skipped without one.
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "framework/shared/cuda_accelerator.hpp"
#include "framework/shared/object_space.hpp"
#include "tests/framework/shared/cuda_objects_kernels.hpp"

namespace xf::shared {
namespace {

std::string gpu_problem() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    (void)cudaGetLastError();
    return "no CUDA device";
  }
  return "";
}

bool no_gpu() {
  return !gpu_problem().empty();
}

object_space_options options_for(protocol p) {
  object_space_options o;
  o.default_protocol = p;
  o.block_bytes = 64 * 1024;
  return o;
}

constexpr protocol every_protocol[] = {protocol::batch, protocol::lazy, protocol::rolling};

}  // namespace

TEST_CASE("shared_gpu.device_status") {
  // Always runs: says in the log which GPU the cases below ran on, or why they were skipped.
  const std::string problem = gpu_problem();
  if (problem.empty()) {
    cudaDeviceProp prop{};
    CHECK(cudaGetDeviceProperties(&prop, 0) == cudaSuccess);
    MESSAGE("GPU: " << prop.name);
  } else {
    MESSAGE("GPU tests skipped: " << problem);
  }
}

TEST_CASE("shared_gpu.one_pointer_names_device_memory_in_kernels_and_host_pages_on_the_cpu" *
          doctest::skip(no_gpu())) {
  cuda_accelerator device;
  object_space space(device, options_for(protocol::batch));
  auto* p = static_cast<unsigned char*>(space.allocate(1 << 20));
  CHECK(space.accelerator_address(p) == p);  // the "safe" address is the shared one
  std::memset(p, 7, 1 << 20);
  space.call([&] { test::launch_add_bytes(p, 1 << 20, 1); });
  // Until sync the CPU's pages hold what it wrote; the kernel worked on the device's copy.
  space.sync();
  std::vector<unsigned char> want(1 << 20, 8);
  CHECK(std::memcmp(p, want.data(), want.size()) == 0);
  space.release(p);
}

TEST_CASE("shared_gpu.vector_addition_under_every_protocol" * doctest::skip(no_gpu())) {
  for (protocol proto : every_protocol) {
    for (std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{3} << 20}) {
      CAPTURE(name_of(proto));
      CAPTURE(n);
      cuda_accelerator device;
      object_space space(device, options_for(proto));
      auto* a = static_cast<float*>(space.allocate(n * sizeof(float)));
      auto* b = static_cast<float*>(space.allocate(n * sizeof(float)));
      auto* c = static_cast<float*>(space.allocate(n * sizeof(float)));
      for (std::size_t i = 0; i < n; ++i) {
        a[i] = static_cast<float>(i);
        b[i] = static_cast<float>(2 * i);
      }
      for (int round = 1; round <= 3; ++round) {
        space.call([&] { test::launch_vector_add(a, b, c, n); });
        space.sync();
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < n; ++i)
          if (c[i] != static_cast<float>(i) + static_cast<float>(round * 2 * i)) ++wrong;
        CHECK(wrong == 0);
        for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<float>((round + 1) * 2 * i);
      }
      space.release(a);
      space.release(b);
      space.release(c);
    }
  }
}

TEST_CASE("shared_gpu.threads_writing_between_kernels_lose_nothing" * doctest::skip(no_gpu())) {
  for (protocol proto : every_protocol) {
    CAPTURE(name_of(proto));
    cuda_accelerator device;
    object_space space(device, options_for(proto));
    const std::vector<std::size_t> sizes = {5 << 20, 4096 + 3, 300 * 1024};
    std::vector<std::pair<unsigned char*, std::size_t>> objects;
    std::vector<std::vector<unsigned char>> reference;
    for (std::size_t bytes : sizes) {
      objects.emplace_back(static_cast<unsigned char*>(space.allocate(bytes)), bytes);
      reference.emplace_back(bytes, 0);
    }
    const unsigned threads = 4;
    for (unsigned round = 0; round < 3; ++round) {
      CAPTURE(round);
      std::vector<std::thread> workers;
      std::vector<int> wrong(threads, 0);
      for (unsigned t = 0; t < threads; ++t)
        workers.emplace_back([&, t] {
          std::mt19937_64 rng(round * 977 + t);
          for (int k = 0; k < 4000; ++k) {
            const std::size_t o = rng() % objects.size();
            const std::size_t mine = (objects[o].second + threads - 1 - t) / threads;
            if (mine == 0) continue;
            const std::size_t i = (rng() % mine) * threads + t;
            if (objects[o].first[i] != reference[o][i]) ++wrong[t];
            const auto v = static_cast<unsigned char>(rng());
            objects[o].first[i] = v;
            reference[o][i] = v;
          }
        });
      for (auto& w : workers) w.join();
      for (unsigned t = 0; t < threads; ++t) CHECK(wrong[t] == 0);
      space.call([&] {
        for (auto& [p, bytes] : objects) test::launch_add_bytes(p, bytes, 5);
      });
      for (auto& r : reference)
        for (auto& v : r) v = static_cast<unsigned char>(v + 5);
      space.sync();
    }
    for (std::size_t o = 0; o < objects.size(); ++o)
      CHECK(std::memcmp(objects[o].first, reference[o].data(), objects[o].second) == 0);
    for (auto& [p, bytes] : objects) space.release(p);
  }
}

TEST_CASE("shared_gpu.lazy_update_moves_only_what_the_cpu_touched" * doctest::skip(no_gpu())) {
  cuda_accelerator device;
  object_space space(device, options_for(protocol::lazy));
  const std::size_t bytes = 8 << 20;
  auto* touched = static_cast<unsigned char*>(space.allocate(bytes));
  auto* untouched = static_cast<unsigned char*>(space.allocate(bytes));
  const object_space_counters start = space.counters();
  std::memset(touched, 1, bytes);
  space.call([&] {
    test::launch_add_bytes(touched, bytes, 1);
    test::launch_add_bytes(untouched, bytes, 1);
  });
  space.sync();
  const object_space_counters after_call = space.counters();
  // Only the object the CPU wrote went over; nothing comes back until the CPU touches it.
  CHECK(after_call.bytes_to_accelerator - start.bytes_to_accelerator == bytes);
  CHECK(after_call.bytes_to_host == start.bytes_to_host);
  CHECK(touched[bytes - 1] == 2);  // a read fault fetches the object
  CHECK(space.counters().bytes_to_host - start.bytes_to_host == bytes);
  CHECK(untouched[0] == 1);
  CHECK(space.counters().bytes_to_host - start.bytes_to_host == 2 * bytes);
  MESSAGE("host views the driver did not pin: " << device.unpinned_views());
  space.release(touched);
  space.release(untouched);
}

}  // namespace xf::shared
