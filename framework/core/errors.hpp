// The project's error types and checks. One error path with three uses:
// XF_EXPECTS throws a precondition error with a reason, config errors carry file:line:column,
// run errors name the operator, topic and offset at fault. Throw or log, never both.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace xf {

/// A position in a configuration source. Lines and columns are 1-based; 0 means unknown (a topology
/// built in C++ has no file positions).
struct source_pos {
  std::string file;
  int line = 0;
  int column = 0;

  bool known() const { return line > 0; }
  /// "file:line:column", "file" when the position is unknown, or "<topology>" when both are.
  std::string str() const;
  friend bool operator==(const source_pos&, const source_pos&) = default;
};

/// One configuration problem: where, and what.
struct diagnostic {
  source_pos pos;
  std::string message;
  /// "file:line:column: error: message"
  std::string str() const;
};

/// A topology that cannot run as written. Holds every problem found, in source order; what() prints one
/// "file:line:column: error: …" line per problem, the first 100 of them and then how many more there are.
/// Command-line tools exit with code 2 on it.
class config_error : public std::runtime_error {
 public:
  explicit config_error(std::vector<diagnostic> problems);
  config_error(source_pos pos, std::string message);
  const std::vector<diagnostic>& problems() const noexcept { return problems_; }
  const diagnostic& first() const noexcept { return problems_.front(); }

 private:
  std::vector<diagnostic> problems_;
};

/// Where a run-time fault happened. Any field may be empty when it does not apply.
struct fault_site {
  std::string operator_name;
  std::string topic;
  std::optional<std::uint64_t> offset;
  std::string str() const;  // "operator 'scale', topic 'in', offset 17"
};

/// A fault while a topology runs: an operator threw, a file could not be read, a frame failed.
class run_error : public std::runtime_error {
 public:
  run_error(fault_site site, const std::string& reason);
  const fault_site& site() const noexcept { return site_; }
  const std::string& reason() const noexcept { return reason_; }

 private:
  fault_site site_;
  std::string reason_;
};

/// The reason of a run_error for a frame an operator failed (frame_task::fail), on either executor.
/// `meaning`: what the operator says the code means ("" when it does not say).
std::string frame_failed_reason(std::uint32_t code, const std::string& meaning = "");

/// A broken precondition in the caller's use of an API (not a user configuration problem).
class precondition_error : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void throw_precondition(const char* condition, const std::string& reason, const char* file,
                                     int line);

}  // namespace xf

/// Throws xf::precondition_error naming the condition, the reason and the place when `cond` is false.
#define XF_EXPECTS(cond, reason)                                                \
  do {                                                                          \
    if (!(cond)) ::xf::throw_precondition(#cond, (reason), __FILE__, __LINE__); \
  } while (0)

namespace xf {
/// Thrown out of a blocking wait when the run is being aborted (another thread failed, or a second
/// interrupt): unwinds a worker thread so it can be joined. Not an error of its own.
class run_aborted : public std::exception {
 public:
  const char* what() const noexcept override { return "run aborted"; }
};
}  // namespace xf
