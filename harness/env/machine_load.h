// Measurement conditions, as pyperf records them: how busy the machine was around a run, so a
// reader can tell a trustworthy table from a disturbed one. A snapshot before the first cell and
// one after the last give the load average at each end, the CPU time every other process that
// lived through the run used meanwhile (the busiest, by name), the CPU time of the whole machine
// less the run's own (so neighbours that came and went within the run count too), the time a
// hypervisor stole, the CPU frequency governor and boost where the kernel exposes them, and the
// cores this process may use.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace sharebench {

struct LoadSnapshot {
  double loadavg_1m = -1;  // -1: unreadable
  double wall_s = 0;       // CLOCK_MONOTONIC
  unsigned long long machine_busy_ticks = 0;  // /proc/stat: user, nice, system, irq, softirq over every CPU
  unsigned long long steal_ticks = 0;         // /proc/stat: taken by the hypervisor
  struct Process {
    unsigned long long start_ticks = 0;     // with the pid, tells a reused pid apart
    unsigned long long cpu_ticks = 0;       // utime + stime
    unsigned long long children_ticks = 0;  // cutime + cstime: its children it has reaped
    std::string name;                       // comm
  };
  std::map<pid_t, Process> processes;
};

LoadSnapshot take_load_snapshot();

struct BusyProcess {
  pid_t pid = 0;
  std::string name;
  double cores = 0;  // its CPU time over the interval, in cores' worth (1.0: one core all along)
};

struct MeasurementConditions {
  double loadavg_before = -1, loadavg_after = -1;
  int usable_cores = 0;
  std::string governor;  // "performance", "powersave", ... or "unreadable" (most VMs)
  std::string boost;     // "on", "off" or "unreadable"
  double other_cores = 0;            // the machine's CPU time less the run's, in cores' worth
  double steal_cores = 0;            // CPU time the hypervisor stole, in cores' worth
  std::vector<BusyProcess> busiest;  // those above 2 % of a core, busiest first, at most 5
  std::vector<std::string> warnings; // what makes the figures doubtful, one sentence each
};

// Compares two snapshots; `ours` are pids of this run that live through it (the runner, the
// forkserver): their CPU time is the run's, not a neighbour's.
MeasurementConditions measurement_conditions(const LoadSnapshot& before, const LoadSnapshot& after,
                                             const std::vector<pid_t>& ours);

// As environment facts of the results file: load_before, load_after, cpu_governor, cpu_boost,
// other_cpu_cores, steal_cpu_cores, busy_processes, conditions_warning (one entry; sentences joined by "; ").
std::map<std::string, std::string> conditions_as_facts(const MeasurementConditions& c);

}  // namespace sharebench
