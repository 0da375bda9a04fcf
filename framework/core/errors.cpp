// Formatting of the project's errors.
#include "framework/core/errors.hpp"

#include <sstream>

namespace xf {

std::string source_pos::str() const {
  if (file.empty() && !known()) return "<topology>";
  if (!known()) return file;
  std::ostringstream out;
  out << (file.empty() ? "<topology>" : file) << ':' << line << ':' << column;
  return out.str();
}

std::string diagnostic::str() const {
  return pos.str() + ": error: " + message;
}

namespace {
std::string join_problems(const std::vector<diagnostic>& problems) {
  // A generated topology can hold a problem on each of many thousand lines: past the first ones, more
  // lines only bury them (problems() keeps every one).
  constexpr std::size_t most_shown = 100;
  std::string text;
  for (std::size_t i = 0; i < problems.size() && i < most_shown; ++i) {
    if (!text.empty()) text += '\n';
    text += problems[i].str();
  }
  if (problems.size() > most_shown)
    text += "\n... and " + std::to_string(problems.size() - most_shown) + " more problems";
  return text;
}
}  // namespace

config_error::config_error(std::vector<diagnostic> problems)
    : std::runtime_error(join_problems(problems)), problems_(std::move(problems)) {
  if (problems_.empty()) throw precondition_error("config_error needs at least one problem");
}

config_error::config_error(source_pos pos, std::string message)
    : config_error(std::vector<diagnostic>{diagnostic{std::move(pos), std::move(message)}}) {}

std::string fault_site::str() const {
  std::string text;
  auto add = [&](const std::string& part) {
    if (!text.empty()) text += ", ";
    text += part;
  };
  if (!operator_name.empty()) add("operator '" + operator_name + "'");
  if (!topic.empty()) add("topic '" + topic + "'");
  if (offset) add("offset " + std::to_string(*offset));
  return text;
}

run_error::run_error(fault_site site, const std::string& reason)
    : std::runtime_error(site.str().empty() ? reason : site.str() + ": " + reason),
      site_(std::move(site)),
      reason_(reason) {}

void throw_precondition(const char* condition, const std::string& reason, const char* file, int line) {
  std::ostringstream out;
  out << file << ':' << line << ": precondition failed: " << condition << ": " << reason;
  throw precondition_error(out.str());
}

std::string frame_failed_reason(std::uint32_t code, const std::string& meaning) {
  return "the operator failed the frame (code " + std::to_string(code) +
         (meaning.empty() ? ")" : "): " + meaning);
}

}  // namespace xf
