// WorkerSlot: what each worker publishes about itself in the arena, for the watchdog (heartbeat,
// phase) and for the checks and reports (steps, metrics, loss series, last error). A worker
// writes only its own slot; the runner reads all of them, during the run and after it.
// HarnessBlock: the slots plus the start barrier, one per cell repetition, at a fixed region name.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "harness/chaos/chaos_schedule.h"
#include "harness/sync/lock_registry.h"
#include "harness/sync/process_barrier.h"
#include "harness/sync/process_mutex.h"

namespace sharebench {

enum class WorkerPhase : std::int32_t {
  kLaunched = 0,  // not yet running our code
  kAttached,      // arena mapped, scenario built
  kRunning,       // released from the start barrier
  kDone,          // returned from work()
  kFailed,        // work() threw; `error` says why
};

struct alignas(64) WorkerSlot {
  static constexpr int kMaxMetrics = 16;
  static constexpr int kMaxSeriesPoints = 512;
  static constexpr int kMaxError = 512;
  static constexpr int kMaxName = 40;

  struct Metric {
    char name[kMaxName];
    double value;
  };
  struct Point {
    double step, time_s, value;
  };

  std::atomic<std::uint64_t> heartbeat{0};   // bumped on every unit of progress
  std::atomic<std::int64_t> last_beat_ns{0};  // CLOCK_MONOTONIC, comparable across processes
  std::atomic<std::int32_t> phase{static_cast<std::int32_t>(WorkerPhase::kLaunched)};
  std::atomic<std::int32_t> pid{0};
  std::atomic<std::int32_t> tid{0};
  std::atomic<std::int64_t> steps{0};         // units of work completed
  // kill-holding-lock: the fault injector arms it (kArmed); the worker's next ProcessMutex
  // acquisition then marks it kFired and SIGKILLs the worker's own process, lock held.
  std::atomic<std::int32_t> kill_holding_lock{kLockKillIdle};
  std::atomic<std::int32_t> waiting_barrier{-1};  // LockRegistry id of the barrier it waits at, or -1
  std::atomic<std::int32_t> threads_at_end{0};    // its process's threads as work() returned (0: not read)
  std::atomic<std::int64_t> uss_kb_at_start{0};   // its process's private memory as work() began (0: not read)
  std::atomic<std::int64_t> uss_kb_at_end{0};     // its process's private memory as work() returned (0: not read)
  // Its own latest reading while it worked (beat(), at most every 250 ms; 0: none): the memory
  // check's end does not depend on the watchdog being scheduled on a loaded machine.
  std::atomic<std::int64_t> uss_kb_while_working{0};
  // Descriptors the worker process opened during work() (the scenario object included) and left
  // open, with what the first few point at; process start methods only.
  std::int32_t leaked_fds = 0;
  char leaked_fd_names[256] = {};
  // The model it promised to keep in shared memory (checkers/model_sharing.h), as work() returned.
  struct ModelPromise {
    std::int64_t bytes = 0;              // promised; 0: no promise
    std::int64_t private_bytes = 0;      // of those, found in private memory
    std::int32_t spans = 0;
    std::int32_t private_spans = 0;
    std::int64_t by_design_bytes = 0;    // private by design (its gradients)
    std::int64_t uss_kb_at_promise = 0;  // its process's USS as it made the first promise (0: not read)
    std::int32_t settled = 0;            // work() returned and the promises were asked
    char what[40] = {};
    char first_private[80] = {};
  } model_promise;
  ChaosTally chaos;  // what --chaos did to this worker's schedule
  std::int64_t arrived_ns = 0;                // reached the start barrier
  std::int64_t started_ns = 0;                // released from it
  std::int64_t finished_ns = 0;               // returned from work()
  // The end of the warm-up: the first beat at or past a twentieth of the cell's steps (allocator
  // caches, first touches, the pools starting). Throughput is timed from here (worker_records.cc).
  std::int64_t warm_ns = 0;
  std::int64_t warm_steps = 0;
  std::int32_t metric_count = 0;
  std::int32_t point_count = 0;
  Metric metrics[kMaxMetrics];
  Point points[kMaxSeriesPoints];
  char error[kMaxError];
};

struct HarnessBlock {
  static constexpr const char* kRegionName = "sharebench.harness";
  static constexpr int kMaxPath = 256;
  explicit HarnessBlock(int procs) : procs(procs), start_barrier(static_cast<std::uint32_t>(procs)) {}
  int procs;
  ProcessBarrier start_barrier;
  // The repetition's private directory (0700, made by the runner with mkdtemp, removed after the
  // checks): each worker process writes its stderr there as rank-<r>.stderr. Empty: no capture.
  char private_dir[kMaxPath] = {};
  WorkerSlot slots[ProcessMutex::kMaxRanks];
  // Workers of this repetition the runner saw die or fail (WorkerContext::peer_failed).
  std::atomic<std::int32_t> failed_workers{0};
  LockRegistry locks;  // every ProcessMutex and ProcessBarrier the scenario's setup() made
  ChaosBudget chaos_budget;  // --chaos: the pauses all the workers may take between them
  // Under the thread start method: descriptors the worker threads opened (their scenario objects
  // included) and left open, counted by their host process once every thread returned. The ranks
  // share one descriptor table, so a rank's cannot be told apart.
  std::int32_t thread_host_leaked_fds = 0;
  char thread_host_leaked_fd_names[256] = {};
};

static_assert(std::is_standard_layout_v<WorkerSlot>);

}  // namespace sharebench
