// find_executable: a program's path, as execvp would find it, without running a shell. One search
// for the three places that need one (gdb for stacks, the Python of the peers, exec's program):
// `std::system("command -v gdb")` made the runner ignore SIGINT while the shell ran, so a Ctrl-C in
// the first cell's setup was lost.
#pragma once

#include <string>

namespace sharebench {

// NAME with a '/' is taken as a path (relative to WORKDIR when given and NAME is relative);
// otherwise each directory of PATH is tried in order (an empty entry is the current directory,
// a relative one is taken from WORKDIR when given). Returns the first regular, executable file,
// or "" when none is.
std::string find_executable(const std::string& name, const std::string& workdir = "");

}  // namespace sharebench
