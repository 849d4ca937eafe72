// process_probe: /proc readings of a stuck process.
#include "harness/watchdog/process_probe.h"
#include "harness/util/find_executable.h"

#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness/watchdog/launch_budget.h"

namespace sharebench {

namespace {
std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Field 3 of /proc/.../stat, after the parenthesised command name.
std::string state_of(const std::string& stat_line) {
  const auto close = stat_line.rfind(')');
  if (close == std::string::npos || close + 2 >= stat_line.size()) return "?";
  return stat_line.substr(close + 2, 1);
}
}  // namespace

long long cpu_ticks(pid_t pid) {
  const std::string stat = read_first_line(fmt::format("/proc/{}/stat", pid));
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  // After the command name: state (field 3) ... utime (14) and stime (15).
  std::istringstream fields(stat.substr(close + 2));
  std::string skip;
  for (int field = 3; field < 14 && fields >> skip; ++field) {
  }
  long long user = 0, system = 0;
  if (!(fields >> user >> system)) return -1;
  return user + system;
}

std::string describe_process(pid_t pid, pid_t only_tid) {
  const std::string task_dir = fmt::format("/proc/{}/task", pid);
  DIR* dir = ::opendir(task_dir.c_str());
  if (!dir) return fmt::format("pid {}: gone", pid);
  std::vector<std::string> tids;
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] != '.') tids.emplace_back(e->d_name);
  }
  ::closedir(dir);
  std::ostringstream out;
  for (const std::string& tid : tids) {
    if (only_tid > 0 && tid != std::to_string(only_tid)) continue;
    const std::string base = task_dir + "/" + tid;
    std::string syscall = read_first_line(base + "/syscall");
    syscall = syscall.substr(0, syscall.find(' '));
    std::string wchan = read_first_line(base + "/wchan");
    if (wchan.empty() || wchan == "0") wchan = "-";
    out << fmt::format("{}tid {} state {} wchan {} syscall {}", out.tellp() > 0 ? "; " : "", tid,
                       state_of(read_first_line(base + "/stat")), wchan, syscall.empty() ? "-" : syscall);
  }
  return out.str();
}

bool gdb_available() {
  static const bool found = !find_executable("gdb").empty();  // no shell: SIGINT stays ours
  return found;
}

std::string gdb_stacks(pid_t pid) { return gdb_stacks(std::vector<pid_t>{pid})[pid]; }

std::map<pid_t, std::string> gdb_stacks(const std::vector<pid_t>& pids) {
  std::map<pid_t, std::string> out;
  if (!gdb_available()) return out;
  std::vector<pid_t> todo;
  for (pid_t pid : pids) {
    if (out.emplace(pid, "").second) todo.push_back(pid);
  }
  // In waves of one gdb per usable core: each needs seconds of CPU to read LibTorch's symbols, and
  // more of them than cores would stretch every one towards its 30 s timeout.
  const std::size_t wave = static_cast<std::size_t>(usable_cores());
  char line[4096];
  for (std::size_t first = 0; first < todo.size(); first += wave) {
    std::vector<std::pair<pid_t, FILE*>> pipes;
    for (std::size_t k = first; k < std::min(todo.size(), first + wave); ++k) {
      // timeout(1) bounds a gdb that itself gets stuck; debuginfod would try the network.
      const std::string cmd = fmt::format(
          "timeout 30 gdb -p {} -batch -nx -ex 'set debuginfod enabled off' -ex 'set pagination off' "
          "-ex 'thread apply all bt' </dev/null 2>/dev/null", todo[k]);
      if (FILE* pipe = ::popen(cmd.c_str(), "r")) pipes.emplace_back(todo[k], pipe);
    }
    // Read one after the other: a gdb whose pipe is full waits for its turn, having done the slow
    // part (attaching and reading symbols) alongside the others.
    for (auto& [pid, pipe] : pipes) {
      std::string& text = out[pid];
      while (std::fgets(line, sizeof line, pipe)) {
        if (std::strncmp(line, "Thread ", 7) == 0 || line[0] == '#') text += line;
      }
      ::pclose(pipe);
    }
  }
  return out;
}

}  // namespace sharebench
