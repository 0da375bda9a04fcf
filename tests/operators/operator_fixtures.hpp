// Fixtures shared by the operator tests: setups for a source or sink on one topic, frame buffers, a
// frame_reference replaying a generator source, and temporary files that clean up after themselves.
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "framework/core/errors.hpp"
#include "framework/model/operator.hpp"
#include "operators/sources/sequence_source.hpp"

namespace xf::testing {

/// Frame sizes the tests use: the topic minimum (one 4 KiB page) and a multi-page frame.
inline constexpr std::uint64_t page_bytes = 4096;

inline topic_info topic(std::string name, std::uint64_t frame_bytes,
                        element_type element = element_type::u8) {
  topic_info t;
  t.name = std::move(name);
  t.frame_bytes = frame_bytes;
  t.capacity = 4;
  t.element = element;
  return t;
}

inline operator_setup source_setup(std::uint64_t frame_bytes, element_type element = element_type::u8) {
  operator_setup s;
  s.name = "src";
  s.outputs.push_back(topic("out", frame_bytes, element));
  return s;
}

inline operator_setup sink_setup(std::uint64_t frame_bytes, const frame_reference* reference = nullptr,
                                 element_type element = element_type::u8, std::uint32_t threads = 1) {
  operator_setup s;
  s.name = "sink";
  s.threads = threads;
  s.inputs.push_back(topic("in", frame_bytes, element));
  s.input_references.push_back(reference);
  return s;
}

/// A frame buffer aligned for every element type (the topic heap hands out page-aligned frames).
class frame_buffer {
 public:
  explicit frame_buffer(std::uint64_t bytes, element_type element = element_type::u8)
      : storage_(bytes / sizeof(std::uint64_t) + 1), bytes_(bytes), element_(element) {}
  frame_out out() { return {reinterpret_cast<std::byte*>(storage_.data()), bytes_, 0, element_}; }
  std::byte* data() { return reinterpret_cast<std::byte*>(storage_.data()); }

 private:
  std::vector<std::uint64_t> storage_;
  std::uint64_t bytes_;
  element_type element_;
};

/// Produces frame `offset` of `source` into a fresh vector (empty when past the end).
inline std::vector<std::byte> produce_frame(cpu_source& source, std::uint64_t offset,
                                            std::uint64_t frame_bytes,
                                            element_type element = element_type::u8) {
  frame_buffer buffer(frame_bytes, element);
  frame_out out = buffer.out();
  if (!source.produce(offset, out)) return {};
  return {buffer.data(), buffer.data() + out.bytes};
}

/// What a verify sink replays: a sequence_source of `total_bytes`, framed by `frame_bytes`.
class sequence_reference final : public frame_reference {
 public:
  sequence_reference(std::uint64_t total_bytes, std::uint64_t frame_bytes,
                     element_type element = element_type::u8, std::int64_t seed = 0)
      : source_(generated_stream_params{total_bytes, seed}) {
    source_.on_start(source_setup(frame_bytes, element));
  }
  bool expected(std::uint64_t offset, frame_out& out) const override { return source_.produce(offset, out); }

 private:
  mutable sequence_source source_;  // produce is thread-safe and a pure function of the offset
};

/// The message of the run_error that `op.on_start(setup)` throws; empty when the operator starts.
inline std::string start_error(cpu_operator& op, const operator_setup& setup) {
  try {
    op.on_start(setup);
  } catch (const run_error& e) {
    return e.what();
  }
  return "";
}

/// A path in the temporary directory, unique per process and call; the file is removed at scope exit.
class temp_path {
 public:
  temp_path() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("xeflow-ops-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  }
  ~temp_path() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  temp_path(const temp_path&) = delete;
  temp_path& operator=(const temp_path&) = delete;
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::string& path, const std::vector<std::byte>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(f.good());
}

inline std::vector<std::byte> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  std::vector<char> raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(raw.size());
  if (!raw.empty())
    std::memcpy(bytes.data(), raw.data(), raw.size());  // an empty vector's data() may be null
  return bytes;
}

/// Bytes with a pattern that differs between neighbouring positions and frames (not all zeros): two odd
/// primes keep the pattern from repeating at any power-of-two period a frame size could have.
inline std::vector<std::byte> pattern_bytes(std::uint64_t n, std::uint32_t salt = 0) {
  std::vector<std::byte> bytes(n);
  for (std::uint64_t i = 0; i < n; ++i) bytes[i] = static_cast<std::byte>((i * 131 + i / 251 + salt) & 0xff);
  return bytes;
}

}  // namespace xf::testing
