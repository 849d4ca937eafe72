// Waiting for processes to end without polling: a pidfd (Linux 5.3) becomes readable when its
// process ends, so a supervisor can sleep in poll() and wake at once, instead of waking every
// millisecond to ask waitpid() (on a machine whose cores the workers keep busy, each such wakeup
// preempts one of them). Where the kernel has no pidfd_open, callers fall back to their sleeps.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <vector>

namespace sharebench {

// A descriptor that becomes readable when `pid` ends (O_CLOEXEC, as pidfds are); -1 where there is
// none (an old kernel, or the process is gone).
int open_process_end(pid_t pid);

// Sleeps until one of `fds` is readable (its process ended) or `timeout` passes, whatever signals
// arrive meanwhile; -1 entries are ignored. False when none was valid or poll() failed: the caller
// then sleeps its own way.
bool wait_for_an_end(const std::vector<int>& fds, std::chrono::milliseconds timeout);

}  // namespace sharebench
