// Precompiled for the test programs of many files built one by one (not unity builds; their meson.build's
// cpp_pch): doctest and the standard library are a third of each such file's compile. Nothing of xeflow's,
// so that a test file still has to include what it uses from the project.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>
