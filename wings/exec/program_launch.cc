// program_launch: vfork() and execve() of the user's program; see program_launch.h.
#include "wings/exec/program_launch.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/util/parent_death.h"

namespace sharebench {

namespace {
// In the vfork child: every handler this process installed goes back to the default (a handler
// would run on the parent's memory), as do the dispositions a program expects to start with; then
// the mask is cleared. execve would reset the handlers, but only after the mask is cleared.
void reset_signals_in_child() {
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    struct sigaction current {};
    if (::sigaction(sig, nullptr, &current) != 0) continue;
    const bool handled = (current.sa_flags & SA_SIGINFO) != 0 ||
                         (current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN);
    if (handled) ::signal(sig, SIG_DFL);
  }
  for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGCHLD, SIGHUP, SIGQUIT}) ::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}
}  // namespace

pid_t launch_program(const ProgramLaunch& launch) {
  std::vector<char*> argv, envp;
  for (const std::string& a : launch.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : launch.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const char* path = launch.path.c_str();
  const char* workdir = launch.workdir.empty() ? nullptr : launch.workdir.c_str();
  const pid_t parent = ::getpid();
  // What went wrong in the child, written there before it exits: it shares this memory.
  volatile int stage = 0, failure = 0;

  sigset_t all, previous;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  const pid_t pid = ::vfork();
  if (pid == 0) {
    // System calls only, up to execve: no allocation, no return from this function.
    die_with_parent(parent, SIGKILL, 127);
    ::setpgid(0, 0);  // its own process group: --duration's SIGINT goes to the group
    reset_signals_in_child();
    if (workdir && ::chdir(workdir) != 0) {
      stage = 1;
      failure = errno;
      ::_exit(127);
    }
    const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);  // not left open in the program
    if (null >= 0) ::dup2(null, STDIN_FILENO);
    ::dup2(STDERR_FILENO, STDOUT_FILENO);  // the program's output, both streams, in the cell's stderr tail
    ::execve(path, argv.data(), envp.data());
    stage = 2;
    failure = errno;
    ::_exit(127);
  }
  const int vfork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (pid < 0) throw std::runtime_error(fmt::format("cannot start {}: {}", launch.path, std::strerror(vfork_errno)));
  if (stage != 0) {
    ::waitpid(pid, nullptr, 0);
    throw std::runtime_error(stage == 1 ? fmt::format("cannot enter {}: {}", launch.workdir, std::strerror(failure))
                                        : fmt::format("cannot run {}: {}", launch.path, std::strerror(failure)));
  }
  return pid;
}

}  // namespace sharebench
