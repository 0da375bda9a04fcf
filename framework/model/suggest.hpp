// "Did you mean" suggestions for misspelt keys, classes and names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace xf {

/// Edit distance (insertions, deletions, substitutions, adjacent transpositions).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` if it is close enough to be a likely typo (distance ≤ max(1, len/3)),
/// else an empty string.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

/// " (did you mean 'x'?)" or "" — for appending to an error message.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace xf
