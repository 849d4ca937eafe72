// run_cli: the whole sharebench command line (run, list, report, compare, repro, and spawn's
// hidden worker mode). A binary that registers its own scenarios needs only:
//   int main(int argc, char** argv) { return sharebench::run_cli(argc, argv); }
#pragma once

namespace sharebench {

int run_cli(int argc, char** argv);

}  // namespace sharebench
