// raid6_recover's parameters: the lost blocks as written, and their recovery bound to the stripe.
#include "operators/encoding/raid6_recover.hpp"

#include <cctype>
#include <charconv>

namespace xf {

const char* raid6_recover_op::parse_lost(const std::string& text, lost_blocks& out) {
  static constexpr const char* shape =
      "names one or two lost blocks, separated by a comma: data block indices from 0, P or Q (\"2\", \"1, "
      "Q\")";
  out = lost_blocks{};
  std::size_t at = 0;
  while (true) {
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
    if (at == text.size() || out.count == 2) return shape;
    std::uint32_t index = 0;
    if (text[at] == 'P' || text[at] == 'p' || text[at] == 'Q' || text[at] == 'q') {
      index = text[at] == 'P' || text[at] == 'p' ? lost_blocks::p : lost_blocks::q;
      ++at;
    } else {
      const auto [end, error] = std::from_chars(text.data() + at, text.data() + text.size(), index);
      if (error != std::errc{} || index >= raid6::max_data_blocks) return shape;
      at = static_cast<std::size_t>(end - text.data());
    }
    out.index[out.count++] = index;
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
    if (at == text.size()) return "";
    if (text[at] != ',') return shape;
    ++at;
  }
}

void raid6_recover_op::describe(operator_schema<params>& s) {
  s.describe(
       "RAID-6 recovery: each frame is a stripe of k data blocks of block_size bytes, then P and Q, with one "
       "or "
       "two blocks lost (`lost`); the output frame is the stripe with them rebuilt from the others")
      .shares_frames();
  s.param(&params::k, "k", "data blocks a stripe holds (the frame: k + 2 blocks)", params{}.k, 2u,
          raid6::max_data_blocks);
  s.bytes(&params::block_bytes, "block_size", "bytes of each block (a multiple of 64)", params{}.block_bytes,
          raid6::block_bytes_multiple);
  s.parsed(&params::lost, "lost", "the lost blocks: one or two of 0 … k−1, P, Q (\"2\", \"0, 3\", \"1, Q\")",
           "", parse_lost);
}

std::optional<param_problem> raid6_recover_op::bind_input(params& p, const topic_info& input) {
  if (p.block_bytes % raid6::block_bytes_multiple != 0)
    return param_problem{"block_size",
                         "must be a multiple of 64 bytes, not " + std::to_string(p.block_bytes)};
  const std::uint64_t stripe = std::uint64_t{p.k + 2} * p.block_bytes;
  if (input.frame_bytes != stripe)
    return param_problem{"block_size",
                         "input topic '" + input.name + "' has frames of " + format_bytes(input.frame_bytes) +
                             ", but a stripe of k + 2 = " + std::to_string(p.k + 2) + " blocks of " +
                             format_bytes(p.block_bytes) + " is " + format_bytes(stripe) +
                             " (the frame size must be k + 2 times block_size)"};
  unsigned lost[2];
  for (std::uint32_t i = 0; i < p.lost.count; ++i)
    if (p.lost.index[i] < lost_blocks::p && p.lost.index[i] >= p.k)
      return param_problem{"lost", "data block " + std::to_string(p.lost.index[i]) +
                                       ": a stripe of k = " + std::to_string(p.k) + " has data blocks 0 … " +
                                       std::to_string(p.k - 1) + " (P and Q by name)"};
  for (std::uint32_t i = 0; i < p.lost.count; ++i)
    lost[i] = p.lost.index[i] == lost_blocks::p   ? p.k
              : p.lost.index[i] == lost_blocks::q ? p.k + 1
                                                  : p.lost.index[i];
  if (const std::string problem = raid6::make_recovery(p.k, p.lost.count, lost, p.recovery); !problem.empty())
    return param_problem{"lost", problem};
  return std::nullopt;
}

}  // namespace xf
