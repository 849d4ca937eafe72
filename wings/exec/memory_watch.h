// memory_watch: what exec's supervisor reads of each process's memory, descriptors and /dev/shm
// use, and when. The figures the table shows (RSS, PSS, USS, shared) come from smaps_rollup, and
// the /dev/shm names a process holds from its maps and fd table; smaps_rollup walks the process's
// page tables, maps its mappings, both under its memory-map lock, and with torch loaded they cost
// milliseconds (3.2 ms and 1.7 ms on the 2-core VM). Read every 250 ms for each process, they took
// about 8 % of a core beside a two-worker trainer that needed both cores, so they are paced:
//   - a process is walked when first seen (a forked worker may live 50 ms: that walk is its only
//     figure), and again when its resident size (statm, a counter read in 11 µs, every 250 ms) has
//     grown by kGrowthWorthAWalk since its last walk: a peak is caught;
//   - all processes are walked in a round every 250 ms at most, and only while the walks' own CPU
//     time stays under kWalkShare of the time since the program started (plus a first allowance):
//     three processes with torch loaded (10 ms a round) are walked together every 10 s or so; a
//     process walked since the last round (it grew, or was new) is not walked again in it;
//   - a process's maps and descriptors are read only when a name new in /dev/shm appears: every
//     process's at once, within 250 ms, whatever the allowance (a segment that outlives the program
//     is then named with its maker); a name no process was seen holding is looked for again with
//     each round.
// Descriptors (a readdir of /proc/PID/fd) and the resident size are read every 250 ms regardless.
// What exec costs beside a plain run, measured: docs/exec.md ("What the hooks cost").
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "wings/exec/exec_block.h"

namespace sharebench {

class MemoryWatch {
 public:
  static constexpr std::int64_t kEveryNs = 250'000'000;  // the cheap reads; the least gap between rounds
  static constexpr double kWalkShare = 0.001;               // of one core, for the walks
  static constexpr std::int64_t kFirstAllowanceNs = 5'000'000;
  static constexpr double kGrowthWorthAWalk = 0.10;        // of the resident size at the last walk...
  static constexpr double kGrowthWorthAWalkMb = 8;         // ...or this much, whichever is larger

  // `find` gives a live process's row (nullptr when it has none: past the table's end).
  MemoryWatch(ExecBlock& b, std::int64_t t0_ns, std::function<TreeProcess*(pid_t)> find);

  // Once per supervisor poll, with the processes alive at the last scan: reads what is due.
  void poll(std::int64_t now, const std::set<pid_t>& live);
  // CPU nanoseconds spent walking (smaps_rollup, and maps with the fds' targets in a walk) so far,
  // on the allowance, and walks made; and those spent looking for new /dev/shm names, off it.
  std::int64_t walk_ns() const { return walk_ns_; }
  std::int64_t lookup_ns() const { return lookup_ns_; }
  std::int64_t walks() const { return walks_; }

 private:
  struct Walked {
    double resident_mb = 0, pss_mb = 0;  // at its last walk
    std::int64_t at_ns = 0;              // when that was
    bool ever = false;
  };
  void cheap_reads(std::int64_t now, const std::set<pid_t>& live);
  // smaps_rollup, and with `shm` its maps and descriptors' targets; false when it is gone.
  bool walk(std::int64_t now, pid_t pid, TreeProcess& p, bool shm, double* pss);
  void look_for_shm(pid_t pid);
  bool allowance_left(std::int64_t now) const;
  bool new_shm_names();

  ExecBlock& b_;
  std::int64_t t0_ns_;
  std::function<TreeProcess*(pid_t)> find_;
  std::map<const TreeProcess*, Walked> walked_;  // by row: a reused pid is a new row
  std::set<std::string> seen_shm_;       // names some process of the tree was seen holding
  std::set<std::string> shm_at_start_;   // /dev/shm when the program started: not its
  std::set<std::string> unfound_shm_;    // new names not seen held yet
  std::int64_t next_cheap_ = 0, last_round_ = 0;
  std::int64_t walk_ns_ = 0, walks_ = 0, lookup_ns_ = 0;
};

}  // namespace sharebench
