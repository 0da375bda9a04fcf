// doctest's main for the shared objects' tests, without doctest's own SIGSEGV handler: doctest installs it
// at the start of every test case and puts the previous one back at the end, which would take the library's
// fault handler out of the chain it is testing (a crash then reports as the process's, not a test case's).
#define DOCTEST_CONFIG_NO_POSIX_SIGNALS
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
