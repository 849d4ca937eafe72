// Measurement conditions from /proc and /sys (machine_load.h).
#include "harness/env/machine_load.h"

#include <dirent.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/util/clock.h"

namespace sharebench {

namespace {

// Only a share of a core this large names a neighbour: below it is the kernel's and the shell's.
constexpr double kBusyCores = 0.02;
// Other processes using this much of the machine on average make rates doubtful.
constexpr double kDisturbingCores = 0.10;

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  return std::getline(in, line) ? line : std::string();
}

// utime, stime and starttime of /proc/<pid>/stat, after the command (which may hold spaces).
bool read_stat(const std::string& pid, LoadSnapshot::Process& p) {
  const std::string stat = first_line("/proc/" + pid + "/stat");
  const auto open = stat.find('('), close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos) return false;
  p.name = stat.substr(open + 1, close - open - 1);
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0, cutime = 0, cstime = 0;
  for (int i = 3; rest >> field; ++i) {  // field 3 is the state
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
    if (i == 16) cutime = std::stoull(field);
    if (i == 17) cstime = std::stoull(field);
    if (i == 22) {
      p.start_ticks = std::stoull(field);
      break;
    }
  }
  p.cpu_ticks = utime + stime;
  p.children_ticks = cutime + cstime;
  return true;
}

// The first line of /proc/stat: every CPU's ticks by kind.
void read_machine_ticks(LoadSnapshot& s) {
  unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (std::sscanf(first_line("/proc/stat").c_str(), "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice,
                  &system, &idle, &iowait, &irq, &softirq, &steal) >= 7) {
    s.machine_busy_ticks = user + nice + system + irq + softirq;
    s.steal_ticks = steal;
  }
}

int cores_we_may_use() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  return CPU_COUNT(&set);
}

std::string cpu_boost() {
  const std::string boost = first_line("/sys/devices/system/cpu/cpufreq/boost");
  if (!boost.empty()) return boost == "1" ? "on" : "off";
  const std::string no_turbo = first_line("/sys/devices/system/cpu/intel_pstate/no_turbo");
  if (!no_turbo.empty()) return no_turbo == "1" ? "off" : "on";
  return "unreadable";
}

}  // namespace

LoadSnapshot take_load_snapshot() {
  LoadSnapshot s;
  s.wall_s = static_cast<double>(monotonic_ns()) * 1e-9;
  std::sscanf(first_line("/proc/loadavg").c_str(), "%lf", &s.loadavg_1m);
  read_machine_ticks(s);
  DIR* dir = ::opendir("/proc");
  if (!dir) return s;
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    LoadSnapshot::Process p;
    try {
      if (read_stat(name, p)) s.processes[static_cast<pid_t>(std::stol(name))] = p;
    } catch (const std::exception&) {
      // a process that ended while read, or a stat line of another shape: not counted
    }
  }
  ::closedir(dir);
  return s;
}

MeasurementConditions measurement_conditions(const LoadSnapshot& before, const LoadSnapshot& after,
                                             const std::vector<pid_t>& ours) {
  MeasurementConditions c;
  c.loadavg_before = before.loadavg_1m;
  c.loadavg_after = after.loadavg_1m;
  c.usable_cores = cores_we_may_use();
  const std::string governor = first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  c.governor = governor.empty() ? "unreadable" : governor;
  c.boost = cpu_boost();
  const double interval_s = after.wall_s - before.wall_s;
  const double ticks_per_s = static_cast<double>(::sysconf(_SC_CLK_TCK));
  if (interval_s > 0 && ticks_per_s > 0) {
    const auto cores_of = [&](double ticks) { return ticks / ticks_per_s / interval_s; };
    double ours_ticks = 0;  // the runner's and the forkserver's, with every child they reaped
    for (const auto& [pid, a] : after.processes) {
      const auto b = before.processes.find(pid);
      if (b == before.processes.end() || b->second.start_ticks != a.start_ticks) continue;
      const double own = static_cast<double>(a.cpu_ticks - b->second.cpu_ticks);
      if (std::find(ours.begin(), ours.end(), pid) != ours.end()) {
        ours_ticks += own + static_cast<double>(a.children_ticks - b->second.children_ticks);
        continue;
      }
      if (cores_of(own) >= kBusyCores) c.busiest.push_back(BusyProcess{pid, a.name, cores_of(own)});
    }
    if (after.machine_busy_ticks >= before.machine_busy_ticks) {
      c.other_cores = std::max(0.0, cores_of(static_cast<double>(after.machine_busy_ticks - before.machine_busy_ticks) - ours_ticks));
    }
    if (after.steal_ticks >= before.steal_ticks) c.steal_cores = cores_of(static_cast<double>(after.steal_ticks - before.steal_ticks));
  }
  std::sort(c.busiest.begin(), c.busiest.end(), [](const auto& x, const auto& y) { return x.cores > y.cores; });
  if (c.busiest.size() > 5) c.busiest.resize(5);
  if (c.other_cores >= kDisturbingCores) {
    std::vector<std::string> names;
    for (const BusyProcess& p : c.busiest) names.push_back(fmt::format("{} (pid {}, {:.0f} %)", p.name, p.pid, 100 * p.cores));
    c.warnings.push_back(fmt::format("other processes used {:.0f} % of a core on average while the run measured{}{}",
                                     100 * c.other_cores, names.empty() ? "" : ": ", fmt::join(names, ", ")));
  }
  if (c.steal_cores >= kDisturbingCores) {
    c.warnings.push_back(fmt::format("the hypervisor took {:.0f} % of a core from this machine while the run measured "
                                     "(steal time): another guest was busy",
                                     100 * c.steal_cores));
  }
  // The load average is recorded, not warned of: it lags a minute behind (a build that just ended
  // still shows), where the CPU time above says what ran while the run measured.
  if (c.governor != "unreadable" && c.governor != "performance") {
    c.warnings.push_back(fmt::format("the CPU frequency governor is '{}': clock speed follows load, so rates vary "
                                     "more between runs than with 'performance'",
                                     c.governor));
  }
  return c;
}

std::map<std::string, std::string> conditions_as_facts(const MeasurementConditions& c) {
  std::vector<std::string> busy;
  for (const BusyProcess& p : c.busiest) busy.push_back(fmt::format("{} (pid {}): {:.0f} %", p.name, p.pid, 100 * p.cores));
  return {{"load_before", c.loadavg_before < 0 ? "unreadable" : fmt::format("{:.2f}", c.loadavg_before)},
          {"load_after", c.loadavg_after < 0 ? "unreadable" : fmt::format("{:.2f}", c.loadavg_after)},
          {"usable_cores", std::to_string(c.usable_cores)},
          {"cpu_governor", c.governor},
          {"cpu_boost", c.boost},
          {"other_cpu_cores", fmt::format("{:.2f}", c.other_cores)},
          {"steal_cpu_cores", fmt::format("{:.2f}", c.steal_cores)},
          {"busy_processes", busy.empty() ? "none" : fmt::format("{}", fmt::join(busy, "; "))},
          {"conditions_warning", fmt::format("{}", fmt::join(c.warnings, "; "))}};
}

}  // namespace sharebench
