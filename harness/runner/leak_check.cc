// leak_check: /proc and /dev/shm readings around a repetition.
#include "harness/runner/leak_check.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/launch/forkserver.h"

namespace sharebench {

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

std::string run_shm_prefix() { return fmt::format("sharebench-{}-", ::getpid()); }

ResourceSnapshot take_resource_snapshot() {
  ResourceSnapshot s;
  for (const auto& name : list_dir("/proc/self/fd")) s.fds.insert(std::atoi(name.c_str()));
  const std::string prefix = run_shm_prefix();
  for (const auto& name : list_dir("/dev/shm")) {
    if (name.rfind(prefix, 0) == 0) s.shm.insert(name);
  }
  const pid_t self = ::getpid();
  const pid_t server = ForkServer::instance().pid();
  for (const auto& name : list_dir("/proc")) {
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::atoi(name.c_str());
    if (pid == server) continue;
    const pid_t parent = parent_of(name);
    if (parent == self || (server > 0 && parent == server)) s.descendants.push_back(pid);
  }
  return s;
}

Check compare_resources(const ResourceSnapshot& before, const ResourceSnapshot& after) {
  std::vector<std::string> leaks;
  std::vector<int> fds;
  for (int fd : after.fds) {
    if (!before.fds.count(fd)) fds.push_back(fd);
  }
  // The directory listing itself holds one descriptor while it is read: it shows in both.
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
  if (!procs.empty()) leaks.push_back(fmt::format("processes left running or unreaped: {}", fmt::join(procs, ", ")));
  if (leaks.empty()) {
    return Check{"no-leaks", Verdict::kPass, 0.0, "no file descriptor, /dev/shm entry or process left behind"};
  }
  return Check{"no-leaks", Verdict::kFail, static_cast<double>(fds.size() + shm.size() + procs.size()),
               fmt::format("{}", fmt::join(leaks, "; "))};
}

}  // namespace sharebench
