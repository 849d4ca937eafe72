// counter-bench: sharebench's command line with this project's scenarios linked in.
#include <sharebench/sharebench.h>

int main(int argc, char** argv) { return sharebench::run_cli(argc, argv); }
