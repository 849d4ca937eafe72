// ExecBlock: what `sharebench exec`'s supervisor (the cell's one worker, which runs the user's
// program) records about the program's process tree, in the cell's shared arena, for the runner to
// read: on a hang (the supervisor frozen, the tree still running) and in check(). Fixed-size,
// plain data: the supervisor may be a spawned process with its own copy of nothing else.
#pragma once

#include <atomic>
#include <cstdint>

namespace sharebench {

struct TreeProcess {
  static constexpr int kMaxCommand = 200;
  static constexpr int kMaxPoints = 64;  // its USS over time, thinned as it grows
  std::int32_t pid = 0;
  std::int32_t ppid = 0;
  std::int32_t birth = 0;        // 0: the program itself; 1, 2, ...: descendants in order of birth
  bool helper = false;           // multiprocessing's resource tracker or forkserver: never a fault's target
  bool python = false;           // loaded the injected hooks (its stack file exists)
  bool gone = false;             // no longer alive at the last scan
  bool survivor = false;         // alive when the program had ended: killed by the supervisor
  bool faulted = false;          // the fault's target
  std::uint64_t start_ticks = 0; // /proc start time: tells a reused pid from this process
  double first_seen_s = 0, last_seen_s = 0;  // since the program started
  std::int64_t cpu_ticks = 0;
  std::int64_t steps = 0;        // its last progress beat
  double rss_mb_peak = 0, pss_mb_peak = 0, uss_mb_peak = 0, shared_mb_peak = 0;
  std::int32_t points = 0;
  std::int32_t stride = 1;       // samples per kept point
  std::int32_t samples = 0;
  float point_s[kMaxPoints] = {};
  float point_uss_mb[kMaxPoints] = {};
  char command[kMaxCommand] = {};
};

struct ShmSighting {
  char name[120] = {};
  std::int32_t pid = 0;          // the first process of the tree seen holding it
};

struct ExecBlock {
  static constexpr const char* kRegionName = "exec.tree";
  static constexpr int kMaxProcesses = 128;
  static constexpr int kMaxSightings = 64;
  static constexpr int kMaxText = 512;

  std::atomic<std::int32_t> supervisor_pid{0};
  std::atomic<std::int32_t> program_pid{0};
  std::atomic<std::int32_t> processes{0};   // entries of `tree` in use
  std::int32_t untracked = 0;               // processes seen beyond kMaxProcesses
  TreeProcess tree[kMaxProcesses];
  std::int32_t sightings = 0;
  std::int32_t sightings_dropped = 0;
  ShmSighting shm[kMaxSightings];

  std::atomic<bool> program_ended{false};
  bool exited = false;                      // ended by exit(); else killed by `signal`
  std::int32_t exit_code = 0;
  std::int32_t signal = 0;
  double program_s = 0;                     // from its start to its end
  std::int64_t beats = 0;                   // progress lines read
  std::int32_t beating_processes = 0;
  double first_beat_s = -1, last_beat_s = -1;  // since the program started: steps/s is over this span
  double pss_mb_total_peak = 0;             // the largest sum of PSS over the tree at one sample
  std::int32_t processes_peak = 0;          // the most processes alive at once
  std::int32_t survivors = 0;

  bool fault_planned = false;
  bool fault_injected = false;
  char fault_report[kMaxText] = {};
  char hooks_dir[kMaxText] = {};            // sitecustomize.py and sharebench_progress.py
  char stacks_dir[kMaxText] = {};           // py-<pid>.txt: faulthandler's dumps
  char progress_path[kMaxText] = {};
};

}  // namespace sharebench
