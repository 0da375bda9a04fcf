// Tests of mapped_file's guard against a file truncated while mapped: the process ends with exit code 1
// and a message naming the file and the byte offset, instead of a bare SIGBUS.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "operators/sources/mapped_file.hpp"

using namespace xf;

TEST_CASE("mapped_file.a_file_truncated_while_mapped_ends_the_process_naming_it") {
  const auto path =
      std::filesystem::temp_directory_path() / ("xeflow-truncated-" + std::to_string(::getpid()) + ".bin");
  std::ofstream(path, std::ios::binary) << std::string(3 * 4096, 'x');
  int err[2];
  REQUIRE(::pipe(err) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // the child maps, truncates, then reads past the new end
    ::dup2(err[1], STDERR_FILENO);
    const mapped_file f = mapped_file::open(path.string());
    std::filesystem::resize_file(path, 4096);
    volatile char c = static_cast<char>(f.bytes()[2 * 4096 + 5]);
    (void)c;
    ::_exit(3);  // not reached when the guard works
  }
  ::close(err[1]);
  std::string message;
  char buffer[512];
  for (ssize_t n; (n = ::read(err[0], buffer, sizeof buffer)) > 0;)
    message.append(buffer, static_cast<std::size_t>(n));
  ::close(err[0]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  INFO(message);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(message.find("dataset '" + path.string() +
                     "': byte offset 8197: the file shrank while it was mapped") != std::string::npos);
  std::filesystem::remove(path);
}
