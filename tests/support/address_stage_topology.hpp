// Topologies of the BigKernel address stage for the end-to-end tests (host mode in e2e; the GPU suite may
// run them on the device): prefetch_ranges paces a prefetch_addresses GPU operator, a prefetch_assembler
// gathers what its addresses name, and the consumer and sinks follow.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace xf::test {

// The YAML reads as YAML: one operator a line, not as clang-format would break the concatenations.
// clang-format off

/// The K-means assignment pass of prefetch_topology.hpp's kmeans_assign_topology with its x, y, z
/// gathered through addresses generated on the GPU: R records per frame (ranges and write-back), L lanes.
/// With R = 2048 and L = 64 a lane's 96 addresses fit its region of 64 KiB frames even with patterns off.
inline std::string kmeans_address_topology(const std::filesystem::path& dataset, const std::string& centres,
                                           bool patterns, const std::string& executor,
                                           std::uint64_t records_per_frame = 2048,
                                           const std::filesystem::path& assembled = {}) {
  const std::string path = dataset.string();
  const std::string r = std::to_string(records_per_frame);
  const std::string gather_from = assembled.empty() ? path : assembled.string();
  return "name: kmeans_addresses\n"
         "topics:\n"
         "  ranges: {frame_size: 64KiB, capacity: 16, element: u64}\n"
         "  addresses: {frame_size: 64KiB, capacity: 16, element: u64}\n"
         "  xyz: {frame_size: 64KiB, capacity: 16, element: f32}\n"
         "  ids: {frame_size: 64KiB, capacity: 16, element: f32}\n"
         "operators:\n"
         "  ranges: {class: prefetch_ranges, outputs: [ranges], params: {path: '" + path +
         "', record_bytes: 64, records_per_frame: " + r + "}}\n"
         "  addresses: {class: prefetch_addresses_records, on: gpu, inputs: [ranges], outputs: [addresses], "
         "params: {record_bytes: 64, fields: '0:12', lanes: 64, patterns: " + (patterns ? "on" : "off") + "}}\n"
         "  assemble: {class: prefetch_assembler, threads: 3, inputs: [addresses], outputs: [xyz], params: {path: '" +
         gather_from + "', item_bytes: 4}}\n"
         "  assign: {class: kmeans_assign, on: gpu, inputs: [xyz], outputs: [ids], params: {centres: '" + centres +
         "'}}\n"
         "  verify: {class: verify_sink, threads: 2, inputs: [ids]}\n"
         "  store: {class: prefetch_writeback, threads: 2, inputs: [ids], params: {path: '" + path +
         "', record_bytes: 64, fields: '12:4', records_per_frame: " + r + "}}\n"
         "runtime: {executor: " + executor + "}\n";
}

/// A text read byte by byte through the address stage: L lanes of B bytes per frame, the assembled frames
/// through a GPU pass-through into `out` (a file_sink: frames must be full, so the data topic's frames are
/// L·B bytes) and a verify sink. All topics have frames of `frame` bytes.
inline std::string text_address_topology(const std::filesystem::path& text, const std::filesystem::path& out,
                                         std::uint64_t lanes, std::uint64_t bytes_per_lane, bool patterns,
                                         std::uint64_t frame, const std::string& executor) {
  const std::string f = std::to_string(frame);
  return "name: text_addresses\n"
         "topics:\n"
         "  ranges: {frame_size: " + f + ", capacity: 8, element: u64}\n"
         "  addresses: {frame_size: " + f + ", capacity: 8, element: u64}\n"
         "  text: {frame_size: " + f + ", capacity: 8, element: u8}\n"
         "  copied: {frame_size: " + f + ", capacity: 8, element: u8}\n"
         "operators:\n"
         "  ranges: {class: prefetch_ranges, outputs: [ranges], params: {path: '" + text.string() +
         "', record_bytes: 1, records_per_frame: " + std::to_string(lanes * bytes_per_lane) + "}}\n"
         "  addresses: {class: prefetch_addresses_bytes, on: gpu, inputs: [ranges], outputs: [addresses], params: "
         "{bytes_per_lane: " + std::to_string(bytes_per_lane) + ", lanes: " + std::to_string(lanes) +
         ", patterns: " + (patterns ? "on" : "off") + "}}\n"
         "  assemble: {class: prefetch_assembler, threads: 2, inputs: [addresses], outputs: [text], params: {path: '" +
         text.string() + "', item_bytes: 1}}\n"
         "  copy: {class: pass_through, on: gpu, inputs: [text], outputs: [copied]}\n"
         "  verify: {class: verify_sink, inputs: [copied]}\n" +
         (out.empty() ? std::string("  drop: {class: null_sink, inputs: [copied]}\n")
                      : "  write: {class: file_sink, inputs: [copied], params: {path: '" + out.string() + "'}}\n") +
         "runtime: {executor: " + executor + "}\n";
}

/// Records read through an index: a file_source of `index` (frames of `frame` bytes, each opening with m
/// record indices, 2^64 − 1 after them) paces prefetch_addresses_indexed over 16-byte items (bytes 0..16
/// of each 64-byte record: one address per record), the data through a GPU pass-through into `out` and a
/// verify sink.
inline std::string indexed_address_topology(const std::filesystem::path& dataset, const std::filesystem::path& index,
                                            const std::filesystem::path& out, std::uint64_t indices_per_frame,
                                            std::uint64_t frame, const std::string& executor) {
  const std::string f = std::to_string(frame);
  return "name: indexed_addresses\n"
         "topics:\n"
         "  indices: {frame_size: " + f + ", capacity: 8, element: u64}\n"
         "  addresses: {frame_size: " + f + ", capacity: 8, element: u64}\n"
         "  records: {frame_size: " + f + ", capacity: 8, element: u8}\n"
         "  copied: {frame_size: " + f + ", capacity: 8, element: u8}\n"
         "operators:\n"
         "  index: {class: file_source, outputs: [indices], params: {path: '" + index.string() + "'}}\n"
         "  addresses: {class: prefetch_addresses_indexed, on: gpu, inputs: [indices], outputs: [addresses], "
         "params: {record_bytes: 64, fields: '0:16', item_bytes: 16, indices_per_frame: " +
         std::to_string(indices_per_frame) + ", lanes: 64}}\n"
         "  assemble: {class: prefetch_assembler, threads: 2, inputs: [addresses], outputs: [records], params: {path: '" +
         dataset.string() + "', item_bytes: 16}}\n"
         "  copy: {class: pass_through, on: gpu, inputs: [records], outputs: [copied]}\n"
         "  verify: {class: verify_sink, inputs: [copied]}\n"
         "  write: {class: file_sink, inputs: [copied], params: {path: '" + out.string() + "'}}\n"
         "runtime: {executor: " + executor + "}\n";
}

// clang-format on

}  // namespace xf::test
