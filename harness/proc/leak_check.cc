// leak_check: /proc and /dev/shm readings around a repetition.
#include "harness/proc/leak_check.h"

#include <dirent.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>


namespace sharebench {

namespace {
std::atomic<pid_t> g_forkserver_pid{-1};
}  // namespace

void set_forkserver_pid(pid_t pid) { g_forkserver_pid.store(pid); }
pid_t forkserver_pid() { return g_forkserver_pid.load(); }

namespace {
std::vector<std::string> list_dir(const char* path) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(path)) {
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] != '.') names.emplace_back(e->d_name);
    }
    ::closedir(d);
  }
  return names;
}

pid_t parent_of(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string line;
  std::getline(in, line);
  const auto close = line.rfind(')');
  if (close == std::string::npos) return -1;
  // After ") " come the state and then the parent's pid.
  return static_cast<pid_t>(std::atol(line.c_str() + close + 4));
}
}  // namespace

namespace {
constexpr const char* kRunnerPidVariable = "SHAREBENCH_RUNNER_PID";
constexpr const char* kWorkerRankVariable = "SHAREBENCH_WORKER_RANK";
constexpr const char* kRunTokenVariable = "SHAREBENCH_RUN_TOKEN";

// A variable of another process's environment, or "".
std::string environ_of(pid_t pid, const std::string& name) {
  std::ifstream in(fmt::format("/proc/{}/environ", pid), std::ios::binary);
  std::string entry;
  while (std::getline(in, entry, '\0')) {
    if (entry.rfind(name + "=", 0) == 0) return entry.substr(name.size() + 1);
  }
  return "";
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}
}  // namespace

std::string run_shm_prefix() {
  const char* runner = std::getenv(kRunnerPidVariable);
  const char* token = std::getenv(kRunTokenVariable);
  const long pid = runner && *runner ? std::atol(runner) : static_cast<long>(::getpid());
  return token && *token ? fmt::format("sharebench-{}-{}-", pid, token) : fmt::format("sharebench-{}-", pid);
}

void become_subreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 1); }

void mark_runner_process() {
  const std::string me = std::to_string(::getpid());
  const char* runner = std::getenv(kRunnerPidVariable);
  const char* drawn = std::getenv(kRunTokenVariable);
  // Once per runner: called again (a forkserver started meanwhile carries the first), it keeps it.
  if (!(runner && me == runner && drawn && *drawn)) {
    // A random part, so that another local user cannot make this run's segment names first from its
    // pid alone (O_EXCL would then fail the cell).
    unsigned char random[6] = {};
    if (::getrandom(random, sizeof random, 0) != static_cast<ssize_t>(sizeof random)) {
      const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
      std::memcpy(random, &now, sizeof random);
    }
    std::string token;
    for (unsigned char b : random) token += fmt::format("{:02x}", b);
    ::setenv(kRunTokenVariable, token.c_str(), 1);
  }
  ::setenv(kRunnerPidVariable, me.c_str(), 1);
  become_subreaper();
}

void mark_worker_process(int rank) {
  // The variable reaches what the worker execs; the command name ("sharebench-r<rank>", shown by
  // ps) what it forks without exec, since /proc/PID/environ shows only the environment of an exec.
  ::setenv(kWorkerRankVariable, std::to_string(rank).c_str(), 1);
  ::prctl(PR_SET_NAME, fmt::format("sharebench-r{}", rank).c_str());
}

std::set<int> open_descriptors() {
  std::set<int> fds;
  // The listing's own descriptor is left out: it is closed again before anyone could compare, and
  // a descriptor opened later may take its number.
  if (DIR* d = ::opendir("/proc/self/fd")) {
    const int own = ::dirfd(d);
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.') continue;
      const int fd = std::atoi(e->d_name);
      if (fd != own) fds.insert(fd);
    }
    ::closedir(d);
  }
  return fds;
}

ResourceSnapshot take_resource_snapshot() {
  ResourceSnapshot s;
  s.fds = open_descriptors();
  const std::string prefix = run_shm_prefix();
  for (const auto& name : list_dir("/dev/shm")) {
    if (name.rfind(prefix, 0) == 0) s.shm.insert(name);
  }
  const pid_t self = ::getpid();
  const pid_t server = g_forkserver_pid.load();
  for (const auto& name : list_dir("/proc")) {
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::atoi(name.c_str());
    if (pid == server) continue;
    const pid_t parent = parent_of(name);
    if (parent == self || (server > 0 && parent == server)) s.descendants.push_back(pid);
  }
  return s;
}

namespace {
// Files a driver opens once per process, on first use, and keeps until the process exits: not a
// leak of the work that happened to use it first. The CUDA driver's per-process IPC file opens at
// a process's first cudaIpcGet*Handle (seen on an H100, driver 580, docs/gpu.md).
bool held_for_process_lifetime(const std::string& target) {
  return target.rfind("/dev/shm/cuda.shm.", 0) == 0;
}
}  // namespace

std::string describe_new_descriptors(const std::set<int>& before, const std::set<int>& after, int* count) {
  std::vector<std::string> named;
  *count = 0;
  for (int fd : after) {
    if (before.count(fd)) continue;
    char buffer[160] = {};
    const ssize_t n = ::readlink(fmt::format("/proc/self/fd/{}", fd).c_str(), buffer, sizeof buffer - 1);
    const std::string target = n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "?";
    if (held_for_process_lifetime(target)) continue;
    ++*count;
    if (named.size() < 4) named.push_back(fmt::format("fd {} → {}", fd, target));
  }
  return fmt::format("{}", fmt::join(named, ", "));
}

Check compare_resources(const ResourceSnapshot& before, const ResourceSnapshot& after,
                        const std::vector<std::string>& worker_leaks) {
  std::vector<std::string> leaks(worker_leaks);
  std::vector<int> fds;
  for (int fd : after.fds) {
    if (!before.fds.count(fd)) fds.push_back(fd);
  }
  if (!fds.empty()) leaks.push_back(fmt::format("{} file descriptor(s) left open in the runner ({})", fds.size(), fmt::join(fds, ", ")));
  std::vector<std::string> shm;
  for (const auto& n : after.shm) {
    if (!before.shm.count(n)) shm.push_back(n);
  }
  if (!shm.empty()) leaks.push_back(fmt::format("/dev/shm entries left behind: {}", fmt::join(shm, ", ")));
  std::vector<pid_t> procs;
  for (pid_t p : after.descendants) {
    if (std::find(before.descendants.begin(), before.descendants.end(), p) == before.descendants.end()) procs.push_back(p);
  }
  if (!procs.empty()) {
    std::vector<std::string> named;
    for (pid_t p : procs) {
      const std::string comm = first_line(fmt::format("/proc/{}/comm", p));
      std::string rank = environ_of(p, kWorkerRankVariable);
      if (rank.empty() && comm.rfind("sharebench-r", 0) == 0) rank = comm.substr(12);
      named.push_back(fmt::format("{} ({}{})", p, comm.empty() ? "?" : comm,
                                  rank.empty() ? "" : fmt::format(", started by rank {}", rank)));
    }
    leaks.push_back(fmt::format("processes left running or unreaped, now killed: {}", fmt::join(named, ", ")));
  }
  if (leaks.empty()) {
    return Check{checks::kNoLeaks, Verdict::kPass, 0.0, "no file descriptor, /dev/shm entry or process left behind"};
  }
  return Check{checks::kNoLeaks, Verdict::kFail, static_cast<double>(fds.size() + shm.size() + procs.size() + worker_leaks.size()),
               fmt::format("{}", fmt::join(leaks, "; "))};
}

namespace {
// How long a process new since the repetition began may take to end by itself before it is a
// leak: a symbolizer reading its dead parent's pipe ends within milliseconds.
constexpr auto kLeftoverGrace = std::chrono::milliseconds(500);

std::vector<pid_t> new_processes(const ResourceSnapshot& before, const ResourceSnapshot& after) {
  std::vector<pid_t> out;
  for (pid_t p : after.descendants) {
    if (std::find(before.descendants.begin(), before.descendants.end(), p) == before.descendants.end()) out.push_back(p);
  }
  return out;
}
}  // namespace

ResourceSnapshot take_settled_snapshot(const ResourceSnapshot& before) {
  const auto until = std::chrono::steady_clock::now() + kLeftoverGrace;
  ResourceSnapshot after = take_resource_snapshot();
  for (std::vector<pid_t> fresh = new_processes(before, after);
       !fresh.empty() && std::chrono::steady_clock::now() < until; fresh = new_processes(before, after)) {
    for (pid_t p : fresh) ::waitpid(p, nullptr, WNOHANG);  // an adopted orphan that ended is ours to reap
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    after = take_resource_snapshot();
  }
  return after;
}

void remove_leftover_segments(const ResourceSnapshot& before, const ResourceSnapshot& after) {
  for (const auto& name : after.shm) {
    if (!before.shm.count(name)) ::shm_unlink(("/" + name).c_str());
  }
}

void kill_leftover_processes(const ResourceSnapshot& before, const ResourceSnapshot& after) {
  std::vector<pid_t> left;
  for (pid_t p : after.descendants) {
    if (std::find(before.descendants.begin(), before.descendants.end(), p) == before.descendants.end()) left.push_back(p);
  }
  // A leftover's own children are adopted by this subreaper when it dies: a few rounds find them.
  for (int round = 0; round < 5 && !left.empty(); ++round) {
    for (pid_t p : left) ::kill(p, SIGKILL);
    for (pid_t p : left) ::waitpid(p, nullptr, 0);  // ours (adopted) are reaped; the forkserver reaps its own
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const ResourceSnapshot now = take_resource_snapshot();
    left.clear();
    for (pid_t p : now.descendants) {
      if (std::find(before.descendants.begin(), before.descendants.end(), p) == before.descendants.end()) left.push_back(p);
    }
  }
}

}  // namespace sharebench
