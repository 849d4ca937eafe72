// process_tree: /proc/PID/stat, cmdline, maps and fd, read defensively (a process may vanish
// between two reads; its command may hold spaces and parentheses).
#include "wings/exec/process_tree.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

namespace sharebench {

namespace {
std::string slurp(const std::string& path, std::size_t max = 1 << 16) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::string text(max, '\0');
  in.read(text.data(), static_cast<std::streamsize>(max));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

std::vector<pid_t> all_pids() {
  std::vector<pid_t> pids;
  DIR* dir = ::opendir("/proc");
  if (!dir) return pids;
  while (const dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0' && pid > 0) pids.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(dir);
  return pids;
}

// "/dev/shm/NAME" (maybe followed by " (deleted)") → NAME; "" otherwise.
std::string shm_name(const std::string& path) {
  constexpr std::string_view kDir = "/dev/shm/";
  if (path.compare(0, kDir.size(), kDir) != 0) return {};
  std::string name = path.substr(kDir.size());
  if (const auto deleted = name.find(" (deleted)"); deleted != std::string::npos) return {};  // already unlinked
  return name;
}
}  // namespace

double clock_ticks_per_s() {
  static const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  return ticks > 0 ? ticks : 100.0;
}

std::optional<ProcStat> read_proc_stat(pid_t pid) {
  const std::string text = slurp(fmt::format("/proc/{}/stat", pid), 4096);
  // "pid (comm) state ppid ..." where comm may hold anything: fields resume after the last ')'.
  const auto close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(text.substr(close + 1));
  ProcStat s;
  s.pid = pid;
  std::vector<std::string> fields;  // from field 3 (state) on
  for (std::string field; rest >> field;) fields.push_back(field);
  // Field n is fields[n - 3]: ppid 4, utime 14, stime 15, starttime 22, exit_code 52 (Linux 3.5).
  if (fields.size() < 20) return std::nullopt;
  auto number = [&](int n) { return std::atoll(fields[static_cast<std::size_t>(n - 3)].c_str()); };
  s.state = fields[0].empty() ? '?' : fields[0][0];
  s.ppid = static_cast<pid_t>(number(4));
  s.cpu_ticks = number(14) + number(15);
  s.start_ticks = static_cast<unsigned long long>(number(22));
  s.threads = static_cast<int>(number(20));
  if (fields.size() >= 50) s.exit_status = static_cast<int>(number(52));
  return s;
}

std::string read_cmdline(pid_t pid, std::size_t max) {
  std::string text = slurp(fmt::format("/proc/{}/cmdline", pid), max + 1);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  std::replace(text.begin(), text.end(), '\0', ' ');
  if (text.size() > max) text = text.substr(0, max - 3) + "...";
  return text;
}

double resident_mb(pid_t pid) {
  const std::string text = slurp(fmt::format("/proc/{}/statm", pid), 256);
  unsigned long long size = 0, resident = 0;
  if (std::sscanf(text.c_str(), "%llu %llu", &size, &resident) != 2) return 0;
  static const double page_mb = static_cast<double>(::sysconf(_SC_PAGESIZE)) / (1 << 20);
  return static_cast<double>(resident) * page_mb;
}

std::vector<ProcStat> live_descendants(pid_t root, Strangers* strangers) {
  std::map<pid_t, std::vector<ProcStat>> children;
  const bool full = !strangers || strangers->scans++ % Strangers::kFullEvery == 0;
  std::set<pid_t> known;
  if (strangers && !full) known.swap(strangers->pids);
  if (strangers) strangers->pids.clear();
  for (const pid_t pid : all_pids()) {
    if (known.count(pid)) {  // still there: still a stranger
      strangers->pids.insert(pid);
      continue;
    }
    auto s = read_proc_stat(pid);
    if (!s) continue;
    if (strangers && strangers->before_ticks > 0 && s->start_ticks < strangers->before_ticks && pid != root) {
      strangers->pids.insert(pid);
      continue;
    }
    if (s->state != 'Z' && s->state != 'X') children[s->ppid].push_back(*s);
  }
  std::vector<ProcStat> out;
  std::vector<pid_t> frontier{root};
  std::set<pid_t> seen{root};
  while (!frontier.empty()) {
    const pid_t parent = frontier.back();
    frontier.pop_back();
    auto it = children.find(parent);
    if (it == children.end()) continue;
    for (const ProcStat& c : it->second) {
      if (!seen.insert(c.pid).second) continue;
      out.push_back(c);
      frontier.push_back(c.pid);
    }
  }
  return out;
}

std::vector<std::string> shm_in_use(pid_t pid) {
  std::set<std::string> names;
  std::istringstream maps(slurp(fmt::format("/proc/{}/maps", pid), 1 << 20));
  for (std::string line; std::getline(maps, line);) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    if (std::string name = shm_name(line.substr(slash)); !name.empty()) names.insert(name);
  }
  const std::string fd_dir = fmt::format("/proc/{}/fd", pid);
  if (DIR* dir = ::opendir(fd_dir.c_str())) {
    while (const dirent* e = ::readdir(dir)) {
      if (e->d_name[0] == '.') continue;
      char target[512];
      const ssize_t n = ::readlink(fmt::format("{}/{}", fd_dir, e->d_name).c_str(), target, sizeof target - 1);
      if (n <= 0) continue;
      if (std::string name = shm_name(std::string(target, static_cast<std::size_t>(n))); !name.empty()) names.insert(name);
    }
    ::closedir(dir);
  }
  return {names.begin(), names.end()};
}

int count_descriptors(pid_t pid) {
  int n = 0;
  if (DIR* dir = ::opendir(fmt::format("/proc/{}/fd", pid).c_str())) {
    while (const dirent* e = ::readdir(dir)) n += e->d_name[0] != '.';
    ::closedir(dir);
  }
  return n;
}

long descriptor_limit(pid_t pid) {
  std::istringstream limits(slurp(fmt::format("/proc/{}/limits", pid), 4096));
  for (std::string line; std::getline(limits, line);) {
    if (line.rfind("Max open files", 0) != 0) continue;
    std::istringstream words(line.substr(14));
    std::string soft;
    words >> soft;
    return soft == "unlimited" ? 0 : std::atol(soft.c_str());
  }
  return 0;
}

std::vector<std::string> list_dev_shm() {
  std::vector<std::string> names;
  if (DIR* dir = ::opendir("/dev/shm")) {
    while (const dirent* e = ::readdir(dir)) {
      if (e->d_name[0] != '.') names.emplace_back(e->d_name);
    }
    ::closedir(dir);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace sharebench
