// Fuzz target: the prefetch address-frame decoder, as a prefetch_assembler runs it on each frame of its
// address topic (prefetch_assembler::on_frame: the header's shape, every lane's used count, each lane's
// encoded stream decoded and its items gathered from the dataset). The input's first byte picks the item
// size, its second the data frame's capacity; the rest is the address frame's bytes. A run_error naming the
// operator, topic and offset is the assembler's answer to a bad frame; it must come in bounded time.
#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "framework/core/errors.hpp"
#include "framework/model/operator.hpp"
#include "tests/fuzz/fuzz_target.hpp"
#include "tests/fuzz/topology_checks.hpp"

namespace xf::fuzz {
namespace {

constexpr std::uint64_t dataset_bytes = 4096;
constexpr std::array<std::int64_t, 5> item_sizes = {1, 2, 4, 8, 16};

/// One started assembler per item size, over a dataset of 4 KiB (mapped at start; the file is removed
/// once every assembler holds its mapping).
cpu_map& assembler(std::size_t which) {
  static const std::vector<std::unique_ptr<cpu_operator>> started = [] {
    char path[] = "/tmp/xeflow-fuzz-dataset-XXXXXX";
    const int fd = ::mkstemp(path);
    if (fd < 0) std::abort();
    std::vector<std::uint8_t> bytes(dataset_bytes);
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i * 7 + 1);
    if (::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) std::abort();
    ::close(fd);
    std::vector<std::unique_ptr<cpu_operator>> ops;
    for (const std::int64_t item : item_sizes) {
      auto op = builtin_registry()
                    .find("prefetch_assembler")
                    ->make_cpu({{"path", std::string(path)}, {"item_bytes", item}}, {});
      operator_setup setup;
      setup.name = "assemble";
      setup.inputs.push_back({"addresses", 64 * 1024, 4, element_type::u64, std::nullopt, {}});
      setup.outputs.push_back({"data", 64 * 1024, 4, element_type::u8, std::nullopt, {}});
      op->on_start(setup);
      ops.push_back(std::move(op));
    }
    ::unlink(path);
    return ops;
  }();
  return dynamic_cast<cpu_map&>(*started[which]);
}

}  // namespace
}  // namespace xf::fuzz

XF_FUZZ_TARGET(address_frame) {
  if (data.size() < 2) return 0;
  const std::size_t which = data[0] % item_sizes.size();
  const std::uint64_t capacity = (std::uint64_t{data[1]} + 1) * 256;  // 256 B … 64 KiB
  // The frame's words, 8-byte aligned as a topic's frames are; a ragged tail stays ragged.
  const input frame_bytes = data.subspan(2);
  std::vector<std::uint64_t> words((frame_bytes.size() + 7) / 8);
  if (!frame_bytes.empty()) std::memcpy(words.data(), frame_bytes.data(), frame_bytes.size());
  std::vector<std::byte> out(capacity);
  const frame_in in{reinterpret_cast<const std::byte*>(words.data()), frame_bytes.size(), element_type::u64};
  frame_out fo{out.data(), capacity, in.bytes, element_type::u8};
  try {
    assembler(which).on_frame(7, in, fo);
  } catch (const run_error&) {
    return 0;
  }
  fuzz_expect(fo.bytes <= capacity, "the assembler says it wrote more than the frame holds");
  return 0;
}
