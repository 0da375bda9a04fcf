// xeflow-run: the command-line runner for topologies built from the registered operators.
#include "tools/launcher.hpp"

int main(int argc, char** argv) { return xf::run_launcher(argc, argv); }
