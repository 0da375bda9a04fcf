// Running a tool as a child process from tests: arguments, captured stdout/stderr, exit code, and a
// deadline after which the child is killed (so no test can hang).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <sys/types.h>

namespace xf::test {

struct process_result {
  int exit_code = -1;      ///< exit status, or 128 + signal when killed by one
  bool timed_out = false;  ///< killed at the deadline
  std::string out, err;
  double seconds = 0;
};

/// A running child with its output captured to files.
class child_process {
 public:
  explicit child_process(const std::vector<std::string>& argv);
  ~child_process();
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  void signal(int sig) const;
  pid_t pid() const noexcept { return pid_; }
  /// What the child wrote to stderr so far (while it runs: a line it printed, e.g. the address it serves).
  std::string err_so_far() const;
  /// Waits for exit (killing the child with SIGKILL at the deadline) and collects the output.
  process_result wait(std::chrono::milliseconds deadline);

 private:
  pid_t pid_ = -1;
  std::string out_path_, err_path_;
  std::chrono::steady_clock::time_point start_;
};

/// Runs argv to completion (or the deadline).
process_result run_process(const std::vector<std::string>& argv,
                           std::chrono::milliseconds deadline = std::chrono::minutes(5));

}  // namespace xf::test
