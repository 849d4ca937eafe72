// memory_probe: how much memory a worker process holds, and how much of it is its own, from
// /proc/PID/smaps_rollup (one read, tens of microseconds): RSS (resident), PSS (resident, each
// shared page divided among its sharers), USS (private: pages only this process maps, what it
// really adds) and shared (resident pages other processes map too: the model, when it stayed
// shared). The watchdog samples every worker with it during a cell.
#pragma once

#include <sys/types.h>

#include <optional>
#include <vector>

#include "harness/results/results.h"

namespace sharebench {

struct MemorySample {
  double rss_mb = 0, pss_mb = 0, uss_mb = 0, shared_mb = 0;
};

// nullopt when the process is gone or its smaps_rollup cannot be read.
std::optional<MemorySample> sample_memory(pid_t pid);

// One worker's samples over a repetition.
struct MemoryTrack {
  std::vector<MemorySample> samples;
  std::vector<SeriesPoint> uss_series;   // [step, seconds since launch, USS MiB]
  std::optional<MemorySample> at_start;  // the first sample once the worker ran its work
  std::vector<MemorySample> while_running;  // the samples taken while it ran its work
  MemorySample peak, last;
  void add(const MemorySample& s, double step, double time_s, bool running);
  // Growth of private memory (USS) from a quarter of the way through the worker's work to its end:
  // memory that keeps growing, with the warm-up (allocator caches, first touch of buffers, a
  // producer's message buffers) left out. The end is the larger of the last sample taken while it
  // ran and `end_mb`, the worker's own reading as work() returned (0: none), so growth held to the
  // last step and freed on the way out still counts. nullopt with fewer than 4 samples while it ran.
  std::optional<double> sustained_growth_mb(double end_mb = 0, double* from = nullptr, double* to = nullptr) const;
};

}  // namespace sharebench
