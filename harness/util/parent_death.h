// die_with_parent: the first call of every child the harness forks (workers, the forkserver, the
// averaging manager, exec's program, the peer's reaper, child_result's helper). PR_SET_PDEATHSIG
// asks the kernel to signal the child when its parent dies; but a parent that died between fork()
// and prctl() is gone already, and nobody would deliver it: so the child checks its parent is still
// the one that forked it, and exits at once if not. Async-signal-safe: callable between fork() and
// execve() in a multi-threaded parent.
#pragma once

#include <sys/types.h>

#include <csignal>

namespace sharebench {

// `signal` is what the child gets when the parent dies (SIGTERM for one that cleans up first);
// `exit_code` what it exits with when the parent died already.
void die_with_parent(pid_t expected_parent, int signal = SIGKILL, int exit_code = 1);

}  // namespace sharebench
