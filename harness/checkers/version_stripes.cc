// The version-stripe checker: counts and judges snapshots.
#include "harness/checkers/version_stripes.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/scenario/scenario.h"

namespace sharebench {

void SnapshotMonitor::record(std::int64_t spread, std::int64_t newest_version) {
  if (spread != 0) torn.fetch_add(1, std::memory_order_relaxed);
  std::int64_t worst = worst_spread.load(std::memory_order_relaxed);
  while (spread > worst && !worst_spread.compare_exchange_weak(worst, spread)) {
  }
  std::int64_t seen = newest.load(std::memory_order_relaxed);
  while (newest_version > seen) {
    if (newest.compare_exchange_weak(seen, newest_version)) {
      newer_seen.fetch_add(1, std::memory_order_relaxed);
      break;
    }
  }
  snapshots.fetch_add(1, std::memory_order_relaxed);
}

std::int64_t SnapshotMonitor::writes_between_reads() const {
  return std::max<std::int64_t>(0, newer_seen.load() - 1);
}

void check_consistent_snapshots(CheckContext& ctx, const SnapshotMonitor& monitor, const std::string& name) {
  const auto torn = monitor.torn.load(), snapshots = monitor.snapshots.load();
  ctx.metric("snapshots", static_cast<double>(snapshots));
  ctx.metric("torn_snapshots", static_cast<double>(torn));
  if (snapshots == 0) {  // no read overlapped anything: the danger never arose
    ctx.check(name, Verdict::kPass, std::nullopt, "no reader recorded a snapshot",
              Exposure{0, "snapshots taken"}, "more --steps (the writer may finish before a reader starts)");
    return;
  }
  ctx.metric("writes_between_reads", static_cast<double>(monitor.writes_between_reads()));
  ctx.check(name, torn == 0 ? Verdict::kPass : Verdict::kFail, static_cast<double>(torn),
            torn == 0 ? fmt::format("all {} snapshots held a single version", snapshots)
                      : fmt::format("{} of {} snapshots mixed versions (up to {} apart): torn reads", torn, snapshots,
                                    monitor.worst_spread.load()),
            Exposure{static_cast<double>(monitor.writes_between_reads()), "writes landed between two snapshots"},
            "more --steps or --procs");
}

}  // namespace sharebench
