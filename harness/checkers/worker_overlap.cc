// worker_overlap: the union of the times two or more workers ran, by a sweep over their intervals.
#include "harness/checkers/worker_overlap.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "harness/scenario/scenario.h"
#include "harness/scenario/worker_slot.h"

namespace sharebench {

double concurrent_run_us(const CheckContext& ctx) {
  std::vector<std::pair<std::int64_t, int>> edges;  // (time, +1 started / -1 finished)
  for (const WorkerView& w : ctx.workers()) {
    if (!w.slot || w.slot->started_ns <= 0) continue;
    const std::int64_t end = w.slot->finished_ns > w.slot->started_ns ? w.slot->finished_ns : w.slot->last_beat_ns.load();
    if (end <= w.slot->started_ns) continue;
    edges.emplace_back(w.slot->started_ns, +1);
    edges.emplace_back(end, -1);
  }
  std::sort(edges.begin(), edges.end());  // at equal times a finish (-1) comes before a start
  std::int64_t overlap_ns = 0, since = 0;
  int running = 0;
  for (const auto& [at, delta] : edges) {
    if (running >= 2) overlap_ns += at - since;
    running += delta;
    since = at;
  }
  return static_cast<double>(overlap_ns) * 1e-3;
}

Exposure worker_overlap(const CheckContext& ctx) {
  return Exposure{concurrent_run_us(ctx), "µs during which two or more workers ran at once"};
}

}  // namespace sharebench
