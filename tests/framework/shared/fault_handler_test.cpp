// The shared objects' SIGSEGV handler: faults in a registered range reach its callback (with the access's
// kind), many threads fault at once, and every other fault goes to the handler installed before — or ends
// the process as it would have without it. The cases that install handlers of their own run in a
// process of their own (the program runs itself for one case), so each starts with its own chain.
#include "framework/shared/fault_handler.hpp"

#include <doctest/doctest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace xf::shared {
namespace {

const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));

/// Pages of anonymous memory, inaccessible until a handler opens them.
struct protected_pages {
  explicit protected_pages(std::size_t count) : bytes(count * page) {
    data = static_cast<char*>(::mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    REQUIRE(data != MAP_FAILED);
  }
  ~protected_pages() { ::munmap(data, bytes); }
  protected_pages(const protected_pages&) = delete;
  protected_pages& operator=(const protected_pages&) = delete;
  std::size_t bytes;
  char* data;
};

/// What the test callback saw; it opens the faulting page for reading or for reading and writing.
struct fault_log {
  std::atomic<int> reads{0}, writes{0};
};

bool open_page(void* context, const fault_access& access) {
  auto* log = static_cast<fault_log*>(context);
  auto* at = reinterpret_cast<char*>(reinterpret_cast<std::uintptr_t>(access.address) & ~(page - 1));
  const bool write = access.write_known && access.write;
  (write ? log->writes : log->reads).fetch_add(1);
  return ::mprotect(at, page, write || !access.write_known ? PROT_READ | PROT_WRITE : PROT_READ) == 0;
}

/// A child's run of this program: its wait status and what it printed (doctest's report, kept out of this
/// process's output so that the suite's totals count each case once).
struct child_run {
  int status = 0;
  std::string output;
};

/// Runs this test program again, in a fresh process, for the one (skipped) case named `name`: a process
/// whose first SIGSEGV handler the case installs itself.
child_run run_case_alone(const char* name) {
  char path[] = "/tmp/xeflow-fault-child-XXXXXX";
  const int log = ::mkstemp(path);
  REQUIRE(log >= 0);
  ::unlink(path);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    const std::string filter = std::string("--test-case=") + name;
    char* const argv[] = {const_cast<char*>("shared_test"), const_cast<char*>(filter.c_str()),
                          const_cast<char*>("--no-skip"), const_cast<char*>("--no-version"), nullptr};
    ::execv("/proc/self/exe", argv);
    ::_exit(127);
  }
  // A broken handler loops on its fault forever: 30 s, then the child is killed and the case fails.
  child_run run;
  for (int waited_ms = 0; ::waitpid(pid, &run.status, WNOHANG) == 0; waited_ms += 10) {
    if (waited_ms >= 30'000) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &run.status, 0);
      FAIL("the case '" << name << "' did not end within 30 s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  char text[4096];
  for (ssize_t n; (n = ::pread(log, text, sizeof text, static_cast<off_t>(run.output.size()))) > 0;)
    run.output.append(text, static_cast<std::size_t>(n));
  ::close(log);
  return run;
}

TEST_CASE("fault_handler.serves_the_faults_of_a_registered_range") {
  fault_handler& h = fault_handler::instance();
  protected_pages pages(4);
  fault_log log;
  const range_ticket t = h.register_range(pages.data, pages.bytes, &open_page, &log);
  const std::uint64_t served = h.served();
  const char seen = *static_cast<volatile char*>(pages.data + page);  // a read of page 1
  CHECK(seen == 0);
  pages.data[2 * page + 5] = 42;  // a write to page 2
  CHECK(pages.data[2 * page + 5] == 42);
#if defined(__x86_64__)
  CHECK(log.reads == 1);
  CHECK(log.writes == 1);
#endif
  CHECK(h.served() - served == 2);
  h.unregister_range(t);
}

TEST_CASE("fault_handler.many_threads_fault_at_once_and_every_write_lands") {
  fault_handler& h = fault_handler::instance();
  const unsigned threads = 8, pages_each = 16;
  protected_pages pages(threads * pages_each);
  fault_log log;
  const range_ticket t = h.register_range(pages.data, pages.bytes, &open_page, &log);
  std::vector<std::thread> workers;
  for (unsigned w = 0; w < threads; ++w)
    workers.emplace_back([&, w] {
      for (unsigned p = 0; p < pages_each; ++p)
        pages.data[(p * threads + w) * page + w] = static_cast<char>(w + 1);
    });
  for (auto& worker : workers) worker.join();
  for (unsigned w = 0; w < threads; ++w)
    for (unsigned p = 0; p < pages_each; ++p) CHECK(pages.data[(p * threads + w) * page + w] == char(w + 1));
  h.unregister_range(t);
}

TEST_CASE("fault_handler.registrations_are_checked") {
  fault_handler& h = fault_handler::instance();
  protected_pages pages(2);
  fault_log log;
  CHECK_THROWS_AS(h.register_range(pages.data, 0, &open_page, &log), std::invalid_argument);
  const range_ticket t = h.register_range(pages.data, pages.bytes, &open_page, &log);
  CHECK_THROWS_AS(h.register_range(pages.data + page, page, &open_page, &log), std::invalid_argument);
  h.unregister_range(t);
  CHECK_THROWS_AS(h.unregister_range(t), std::invalid_argument);
  const range_ticket again = h.register_range(pages.data + page, page, &open_page, &log);  // the slot is free
  h.unregister_range(again);
}

// A user's handler installed before the library's: it opens the page it is called for.
std::atomic<int> user_handler_calls{0};
void user_handler(int, siginfo_t* info, void*) {
  user_handler_calls.fetch_add(1);
  auto* at = reinterpret_cast<char*>(reinterpret_cast<std::uintptr_t>(info->si_addr) & ~(page - 1));
  ::mprotect(at, page, PROT_READ | PROT_WRITE);
}

// Run alone by the two cases after them (run_case_alone): the SIGSEGV handler installed first is theirs.
TEST_CASE("fault_handler.alone.foreign_faults_reach_the_earlier_handler" * doctest::skip()) {
  struct sigaction user {};
  user.sa_sigaction = &user_handler;
  user.sa_flags = SA_SIGINFO;
  sigemptyset(&user.sa_mask);
  REQUIRE(::sigaction(SIGSEGV, &user, nullptr) == 0);
  fault_handler& h = fault_handler::instance();  // chains after the user's
  protected_pages ours(1), foreign(1), freed(1);
  fault_log log;
  const range_ticket t = h.register_range(ours.data, ours.bytes, &open_page, &log);
  const range_ticket gone = h.register_range(freed.data, freed.bytes, &open_page, &log);
  h.unregister_range(gone);
  foreign.data[3] = 7;  // not a shared range: the user's handler opens it
  freed.data[3] = 8;    // no longer one: the same
  ours.data[3] = 9;     // the library's
  CHECK(foreign.data[3] == 7);
  CHECK(freed.data[3] == 8);
  CHECK(ours.data[3] == 9);
  CHECK(user_handler_calls == 2);
  CHECK(h.passed_on() == 2);
  CHECK(h.served() == 1);
  h.unregister_range(t);
}

TEST_CASE("fault_handler.alone.a_foreign_fault_ends_the_process" * doctest::skip()) {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  REQUIRE(::sigaction(SIGSEGV, &dfl, nullptr) == 0);
  struct rlimit no_core {};
  ::setrlimit(RLIMIT_CORE, &no_core);  // the crash is the expected outcome
  fault_handler::instance();
  protected_pages foreign(1);
  foreign.data[0] = 1;  // the default action: the process ends here
  FAIL("a foreign fault under a default SIGSEGV action returned");
}

TEST_CASE("fault_handler.passes_foreign_faults_to_the_handler_installed_before") {
  const child_run run = run_case_alone("fault_handler.alone.foreign_faults_reach_the_earlier_handler");
  INFO(run.output);
  REQUIRE(WIFEXITED(run.status));
  CHECK(WEXITSTATUS(run.status) == 0);
}

TEST_CASE("fault_handler.a_foreign_fault_without_a_previous_handler_ends_the_process_as_before") {
  const child_run run = run_case_alone("fault_handler.alone.a_foreign_fault_ends_the_process");
  INFO(run.output);
  REQUIRE(WIFSIGNALED(run.status));
  CHECK(WTERMSIG(run.status) == SIGSEGV);
}

}  // namespace
}  // namespace xf::shared
