// The sharebench binary: the command line, with the built-in LibTorch scenarios linked in.
#include "cli/run_cli.h"

int main(int argc, char** argv) { return sharebench::run_cli(argc, argv); }
