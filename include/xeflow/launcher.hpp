// xeflow-run as a function, for a launcher that adds its own operators to the built-in ones:
//
//   int main(int argc, char** argv) {
//     return xf::run_launcher(argc, argv, [](xf::operator_registry& r) { r.add<my_op>("my_op"); },
//                             my_kernel());  // my_kernel.cu includes <xeflow/kernel.hpp>
//   }
#pragma once

#include "framework/runtime/launcher.hpp"
