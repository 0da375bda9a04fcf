// readahead_file_source: parsing its parameters.
#include "operators/sources/readahead_file_source.hpp"

#include <vector>

namespace xf {

const char* parse_path_list(const std::string& text, path_list& out) {
  out = path_list{};
  std::vector<std::string> parts;
  for (std::size_t begin = 0;;) {
    const std::size_t end = text.find(';', begin);
    std::string one = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    const std::size_t first = one.find_first_not_of(" \t\n");
    parts.push_back(first == std::string::npos
                        ? std::string()
                        : one.substr(first, one.find_last_not_of(" \t\n") - first + 1));
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  if (parts.size() == 1 && parts[0].empty()) return "";  // none: check_params says so
  for (const std::string& one : parts) {
    if (one.empty()) return "a list of paths separated by ';', none empty";
    if (out.count == path_list::capacity) return "at most 8 files";
    if (const char* problem = parse_path_text(one, out.paths[out.count]); *problem != '\0') return problem;
    ++out.count;
  }
  return "";
}

const char* parse_access_advice(const std::string& text, access_advice& out) {
  if (text == "sequential")
    out = access_advice::sequential;
  else if (text == "normal")
    out = access_advice::normal;
  else if (text == "random")
    out = access_advice::random;
  else
    return "one of sequential, normal, random";
  return "";
}

}  // namespace xf
