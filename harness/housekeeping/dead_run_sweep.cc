// sweep_dead_runs: entries named after a runner pid that no longer exists, owned by this user.
#include "harness/housekeeping/dead_run_sweep.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/housekeeping/private_dir.h"

namespace sharebench {

namespace {
constexpr const char* kPrefix = "sharebench-";

bool process_exists(long pid) { return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM; }

// The entries of `dir` named sharebench-<pid>-..., with a dead pid, owned by this user.
std::vector<std::pair<std::string, long>> dead_entries(const std::string& dir, bool want_directory) {
  std::vector<std::pair<std::string, long>> found;
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), &::closedir);
  if (!d) return found;
  const uid_t me = ::geteuid();
  while (const dirent* e = ::readdir(d.get())) {
    const std::string name = e->d_name;
    const long pid = runner_pid_of(name);
    if (pid <= 0 || pid == ::getpid() || process_exists(pid)) continue;
    struct stat st {};
    if (::fstatat(::dirfd(d.get()), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (st.st_uid != me || S_ISDIR(st.st_mode) != want_directory) continue;
    found.emplace_back(name, pid);
  }
  return found;
}

}  // namespace

int kill_processes_of_dead_run(const std::string& directory, const std::string& proc_dir) {
  // Every process of a program `sharebench exec` ran carries, in its environment, the path of its
  // run's private directory (SHAREBENCH_PROGRESS and the rest); the runner's death killed the
  // program (PR_SET_PDEATHSIG) but not what it had started, which init adopted.
  const std::string proc = proc_dir.empty() ? "/proc" : proc_dir;
  const std::string marker = "=" + directory + "/";
  const uid_t me = ::geteuid();
  int killed = 0;
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(proc.c_str()), &::closedir);
  if (!d) return 0;
  while (const dirent* e = ::readdir(d.get())) {
    const std::string name = e->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const long pid = std::atol(name.c_str());
    if (pid == ::getpid()) continue;
    struct stat st {};
    if (::stat((proc + "/" + name).c_str(), &st) != 0 || st.st_uid != me) continue;
    std::ifstream in(proc + "/" + name + "/environ", std::ios::binary);
    bool ours = false;
    for (std::string entry; !ours && std::getline(in, entry, '\0');) {
      ours = entry.rfind("SHAREBENCH_", 0) == 0 && entry.find(marker) != std::string::npos;
    }
    if (ours && ::kill(static_cast<pid_t>(pid), SIGKILL) == 0) ++killed;
  }
  return killed;
}

long runner_pid_of(const std::string& name) {
  const std::size_t prefix = std::char_traits<char>::length(kPrefix);
  if (name.compare(0, prefix, kPrefix) != 0) return -1;
  std::size_t end = prefix;
  while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
  if (end == prefix || end - prefix > 9 || end >= name.size() || name[end] != '-') return -1;
  return std::strtol(name.c_str() + prefix, nullptr, 10);
}

SweptRuns sweep_dead_runs(const std::string& shm_dir, const std::string& tmp_dir) {
  SweptRuns swept;
  const std::string shm = shm_dir.empty() ? "/dev/shm" : shm_dir;
  const char* tmp_env = std::getenv("TMPDIR");
  const std::string tmp = !tmp_dir.empty() ? tmp_dir : (tmp_env && *tmp_env ? tmp_env : "/tmp");
  auto note_pid = [&](long pid) {
    if (std::find(swept.runner_pids.begin(), swept.runner_pids.end(), pid) == swept.runner_pids.end()) {
      swept.runner_pids.push_back(pid);
    }
  };
  for (const auto& [name, pid] : dead_entries(shm, false)) {
    if (::unlink((shm + "/" + name).c_str()) == 0) {
      swept.segments.push_back(name);
      note_pid(pid);
    }
  }
  // Private directories under $TMPDIR; the forkserver's socket directory is always under /tmp (a
  // socket's path must fit in 108 bytes).
  std::vector<std::string> tmp_dirs{tmp};
  if (tmp_dir.empty() && tmp != "/tmp") tmp_dirs.push_back("/tmp");
  for (const std::string& dir : tmp_dirs) {
    for (const auto& [name, pid] : dead_entries(dir, true)) {
      swept.processes += kill_processes_of_dead_run(dir + "/" + name);
      if (remove_directory_tree(dir + "/" + name)) {
        swept.directories.push_back(name);
        note_pid(pid);
      }
    }
  }
  return swept;
}

std::string SweptRuns::summary() const {
  std::vector<std::string> what;
  if (!segments.empty()) what.push_back(fmt::format("{} /dev/shm entr{}", segments.size(), segments.size() == 1 ? "y" : "ies"));
  if (!directories.empty()) {
    what.push_back(fmt::format("{} private director{}", directories.size(), directories.size() == 1 ? "y" : "ies"));
  }
  const std::string killed =
      processes > 0 ? fmt::format(", and killed {} process(es) their programs had left running", processes) : "";
  if (what.empty()) return fmt::format("killed {} process(es) left running by run(s) whose runner died", processes);
  return fmt::format("removed {} left by run(s) whose runner died (pid {}){}", fmt::join(what, " and "),
                     fmt::join(runner_pids, ", "), killed);
}

}  // namespace sharebench
