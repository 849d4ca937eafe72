// process_probe: what can be learned about a stuck process from outside it, cheaply, through
// /proc (state, wait channel, current syscall of each thread). Used by the watchdog on a hang.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace sharebench {

// One line per thread: "tid 123 state S wchan futex_wait_queue syscall 202". With `only_tid`
// (a rank of the thread start method), that thread alone.
std::string describe_process(pid_t pid, pid_t only_tid = 0);

// CPU time (user + system, all threads) the process has used so far, in clock ticks; -1 when it
// is gone. A launching worker that uses CPU is making progress even before it reports any.
long long cpu_ticks(pid_t pid);

// Whether gdb can be run (found on PATH).
bool gdb_available();
// Every thread's stack of a live process, from `gdb -p PID -batch` (thread headers and frames
// only); "" when gdb is missing or fails. Takes about 2 s for a process with LibTorch loaded.
std::string gdb_stacks(pid_t pid);
// The same for several processes at once: one gdb each, as many at a time as there are usable
// cores, so a hang of N workers on N cores waits for the slowest gdb rather than for N in a row.
std::map<pid_t, std::string> gdb_stacks(const std::vector<pid_t>& pids);

}  // namespace sharebench
