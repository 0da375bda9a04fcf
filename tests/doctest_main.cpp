// The doctest main of the suite (the shared objects' tests have one of their own, without doctest's signal
// handlers).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
