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
  bool stop_sent = false;        // got --duration's SIGINT (or the SIGTERM/SIGKILL after its grace)
  std::int32_t exit_status = -1; // as waitpid reports it, when the supervisor learnt it (reaped, or seen a zombie)
  std::int32_t fds_peak = 0;     // open descriptors, at the memory samples
  std::int32_t fd_limit = 0;     // its soft RLIMIT_NOFILE when it was nearest it (0: unknown or unlimited)
  std::int32_t fds_nearest_limit = 0;  // its open descriptors then
  std::int32_t threads_peak = 0; // native threads, at the scans
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
  double supervisor_cpu_s = 0;              // the supervisor's own CPU time (getrusage), its reads of /proc included
  double memory_walk_s = 0;                 // of which walking the processes' mappings (memory_watch.h)
  double tree_end_wait_s = 0;               // from the program's end to its tree's: children and helpers finishing

  std::int64_t t0_ns = 0;                   // the program's start, CLOCK_MONOTONIC (the Python hooks' clock too)
  double dev_shm_size_mb = 0, dev_shm_used_mb_peak = 0;  // /dev/shm's size and its most use seen
  double dev_shm_used_mb_before = 0;        // its use when the program started
  bool stopped_by_duration = false;         // --duration ran out: the program got SIGINT
  double stop_sent_s = -1;                  // when (since the program started)
  std::int32_t stop_escalated = 0;          // 1: SIGTERM after the grace, 2: SIGKILL too
  std::int32_t helpers_killed = 0;          // helpers by design that did not end within their grace
  std::int32_t guard_pid = 0;               // the guard (program_supervisor.cc) and the signal that ended it
  std::int32_t guard_killed_by = 0;         // before the supervisor stood it down (0: it was not)

  bool fault_planned = false;
  bool fault_injected = false;
  char full_disk[kMaxText] = {};            // output_tail.h: the disk that was full while the program ran ("": none)
  std::int64_t output_freed_bytes = 0;      // of the program's output, dropped on disk before its kept tail
  char fault_report[kMaxText] = {};
  char untracked_survivors[kMaxText] = {};  // "pid 5063 (stray_daemon 30); ...": survivors without a row
  char hooks_dir[kMaxText] = {};            // sitecustomize.py and sharebench_progress.py
  char stacks_dir[kMaxText] = {};           // py-<pid>.txt: faulthandler's dumps
  char progress_path[kMaxText] = {};
  char events_path[kMaxText] = {};          // the Python hooks' JSON lines (sharebench_watch.py)
};

}  // namespace sharebench
