// program_launch: how the exec worker starts the user's program. The worker has LibTorch mapped,
// and fork() copied its page tables only for execve() to throw them away: /bin/true took 8 ms under
// exec against 0.6 ms from Python's subprocess (which uses vfork), on the 2-core VM. vfork() shares
// the worker's memory until the child execs, so the child does only system calls, with every signal
// blocked until the handlers it inherited are reset.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace sharebench {

struct ProgramLaunch {
  std::string path;                  // resolved executable
  std::vector<std::string> argv;
  std::vector<std::string> env;      // NAME=value, the whole environment
  std::string workdir;               // empty: this process's
};

// Starts the program in a process group of its own (as a shell starts a job), with stdin on
// /dev/null, stdout onto stderr, default signal dispositions and mask, and SIGKILL when this thread
// ends (PR_SET_PDEATHSIG). Throws std::runtime_error saying why when it cannot enter the workdir or
// exec the program.
pid_t launch_program(const ProgramLaunch& launch);

}  // namespace sharebench
