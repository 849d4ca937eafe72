// process_tree: what /proc says about a program's processes, for `sharebench exec`'s supervisor
// (which tracks every descendant of itself, a child subreaper) and for the runner (which freezes
// and inspects them on a hang). Cheap reads only: one small file per question.
#pragma once

#include <sys/types.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace sharebench {

struct ProcStat {
  pid_t pid = 0;
  pid_t ppid = 0;
  char state = '?';                  // R, S, D, T, Z, ...
  long long cpu_ticks = 0;           // user + system time of all its threads, clock ticks
  unsigned long long start_ticks = 0;  // when it started, clock ticks since boot: tells a reused pid
  int threads = 0;                   // native threads
  int exit_status = -1;              // a zombie's status as waitpid reports it; -1 unknown
};

// nullopt when the process is gone (or is not readable).
std::optional<ProcStat> read_proc_stat(pid_t pid);
// Its arguments joined with spaces, at most `max` bytes ("" for a zombie or a kernel thread).
std::string read_cmdline(pid_t pid, std::size_t max = 200);
// Its resident size in MiB from /proc/PID/statm (a counter: no walk of its mappings); 0 when gone.
double resident_mb(pid_t pid);
// Processes a repeated search for one tree's descendants need not read again: those that started
// before `before_ticks` (the tree's first process, the program) can never join it, for an orphan is
// re-parented only to an ancestor. A stranger's pid missing from /proc at a scan is forgotten; one
// that ended and was given to a new process between two scans is found by the next scan that reads
// everything (every kFullEvery-th).
struct Strangers {
  static constexpr int kFullEvery = 10;
  unsigned long long before_ticks = 0;  // 0: none known yet, every process is read
  std::set<pid_t> pids;
  int scans = 0;
};
// Every live descendant of `root` (not `root` itself), parents before children; zombies left out.
// With `strangers`, the processes it holds are skipped, and those found are added.
std::vector<ProcStat> live_descendants(pid_t root, Strangers* strangers = nullptr);
// The /dev/shm files (POSIX shared memory, named semaphores) the process has mapped or open, by
// name without the directory ("torch_123_456", "psm_abc", "sem.mp-xyz").
std::vector<std::string> shm_in_use(pid_t pid);
// Open descriptors of the process (0 when unreadable), and its soft RLIMIT_NOFILE (0: unknown or
// unlimited).
int count_descriptors(pid_t pid);
long descriptor_limit(pid_t pid);
// The names now in /dev/shm.
std::vector<std::string> list_dev_shm();
// Seconds per clock tick's reciprocal (sysconf(_SC_CLK_TCK)).
double clock_ticks_per_s();

}  // namespace sharebench
