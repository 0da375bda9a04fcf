// Child processes for end-to-end tests.
#include "tests/support/subprocess.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace xf::test {
namespace {

std::string temp_path() {
  char pattern[] = "/tmp/xeflow-test-XXXXXX";
  int fd = mkstemp(pattern);
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  close(fd);
  return pattern;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

child_process::child_process(const std::vector<std::string>& argv)
    : out_path_(temp_path()), err_path_(temp_path()), start_(std::chrono::steady_clock::now()) {
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    int out = open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int err = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    int null = open("/dev/null", O_RDONLY);
    dup2(null, STDIN_FILENO);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    std::perror("execv");
    _exit(127);
  }
}

child_process::~child_process() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  std::remove(out_path_.c_str());
  std::remove(err_path_.c_str());
}

void child_process::signal(int sig) const {
  kill(pid_, sig);
}

std::string child_process::err_so_far() const {
  return slurp(err_path_);
}

process_result child_process::wait(std::chrono::milliseconds deadline) {
  process_result result;
  int status = 0;
  const auto until = start_ + deadline;
  while (true) {
    pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) break;
    if (std::chrono::steady_clock::now() > until) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      result.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = -1;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = slurp(out_path_);
  result.err = slurp(err_path_);
  return result;
}

process_result run_process(const std::vector<std::string>& argv, std::chrono::milliseconds deadline) {
  child_process child(argv);
  return child.wait(deadline);
}

}  // namespace xf::test
