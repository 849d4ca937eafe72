// The version-stripe checker: counts and judges snapshots.
#include "harness/checkers/version_stripes.h"

#include <fmt/format.h>

#include "harness/scenario/scenario.h"

namespace sharebench {

void SnapshotMonitor::record(std::int64_t spread) {
  if (spread != 0) torn.fetch_add(1, std::memory_order_relaxed);
  std::int64_t worst = worst_spread.load(std::memory_order_relaxed);
  while (spread > worst && !worst_spread.compare_exchange_weak(worst, spread)) {
  }
  snapshots.fetch_add(1, std::memory_order_relaxed);
}

void check_consistent_snapshots(CheckContext& ctx, const SnapshotMonitor& monitor, const std::string& name) {
  const auto torn = monitor.torn.load(), snapshots = monitor.snapshots.load();
  ctx.metric("snapshots", static_cast<double>(snapshots));
  ctx.metric("torn_snapshots", static_cast<double>(torn));
  if (snapshots == 0) {
    ctx.check(name, Verdict::kUnknown, std::nullopt, "no reader recorded a snapshot");
    return;
  }
  ctx.check(name, torn == 0 ? Verdict::kPass : Verdict::kFail, static_cast<double>(torn),
            torn == 0 ? fmt::format("all {} snapshots held a single version", snapshots)
                      : fmt::format("{} of {} snapshots mixed versions (up to {} apart): torn reads", torn, snapshots,
                                    monitor.worst_spread.load()));
}

}  // namespace sharebench
