// What a runner that died by SIGKILL leaves behind, reclaimed by the next run. A run names
// everything it makes outside its arena after its runner's pid: /dev/shm entries
// "sharebench-<pid>-..." (run_shm_prefix()) and private directories "$TMPDIR/sharebench-<pid>-XXXXXX"
// (PrivateDirectory), and the processes a program run by `sharebench exec` started, which carry
// that directory in their environment. A runner that is killed outright cannot remove them, so every run starts by
// sweeping the entries of runners that are gone: named with a pid that no live process has, and
// owned by this user (another user's entries, or a live run's, are never touched).
//
// A pid is reused eventually; an entry whose pid now belongs to an unrelated live process stays
// until that process is gone too. Runs in another pid namespace that share /dev/shm with this one
// would look dead: each container is expected to have its own /dev/shm, as Docker gives it.
#pragma once

#include <string>
#include <vector>

namespace sharebench {

struct SweptRuns {
  std::vector<std::string> segments;     // /dev/shm names removed
  std::vector<std::string> directories;  // private directories removed, with their contents
  std::vector<long> runner_pids;         // the dead runners they belonged to, each once
  int processes = 0;                     // processes of programs those runs exec'd, killed
  bool empty() const { return segments.empty() && directories.empty() && processes == 0; }
  // "removed 3 /dev/shm entries and 1 directory left by runs whose runner died (pid 4242)"
  std::string summary() const;
};

// Sweeps /dev/shm and the directory private directories are made in ($TMPDIR, else /tmp).
// `shm_dir` and `tmp_dir` are for tests; empty means the real ones.
SweptRuns sweep_dead_runs(const std::string& shm_dir = "", const std::string& tmp_dir = "");

// Kills (SIGKILL) this user's processes whose environment names `directory` (a dead run's private
// directory) in a SHAREBENCH_ variable: what a program run by `sharebench exec` started and left
// running when its runner was killed. Returns how many. `proc_dir` is for tests ("" for /proc).
int kill_processes_of_dead_run(const std::string& directory, const std::string& proc_dir = "");

// The runner pid in "sharebench-<pid>-...", or -1 when `name` is not named so.
long runner_pid_of(const std::string& name);

}  // namespace sharebench
