// The guarded-section checkers: occupancy and the lost-update canary.
#include "harness/checkers/guarded_section.h"

#include "harness/sync/process_mutex.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/scenario/scenario.h"

namespace sharebench {

GuardedSection::GuardedSection(SectionMonitor& monitor) : monitor_(monitor) {
  monitor_.entries.fetch_add(1, std::memory_order_relaxed);
  if (monitor_.occupancy.fetch_add(1, std::memory_order_acq_rel) != 0) {
    monitor_.overlaps.fetch_add(1, std::memory_order_relaxed);
  }
  for (int i = 0; i < SectionMonitor::kCanaryElements; ++i) snapshot_[i] = monitor_.canary[i];
}

GuardedSection::~GuardedSection() {
  for (int i = 0; i < SectionMonitor::kCanaryElements; ++i) monitor_.canary[i] = snapshot_[i] + 1;
  monitor_.occupancy.fetch_sub(1, std::memory_order_acq_rel);
}

double SectionMonitor::lost_updates() const {
  return static_cast<double>(entries.load()) - *std::min_element(std::begin(canary), std::end(canary));
}

namespace {
constexpr const char* kRaiseContention = "more --procs or --steps";

// A pass carries its exposure in the message; a fail is its own proof that the situation arose.
void check_exposed(CheckContext& ctx, const std::string& name, Verdict verdict, double value, std::string message,
                   const std::optional<Exposure>& exposure) {
  if (exposure && verdict == Verdict::kPass) {
    ctx.check(name, verdict, value, std::move(message), *exposure, kRaiseContention);
  } else {
    ctx.check(name, verdict, value, std::move(message));
    if (exposure) ctx.repetition().checks.back().exposure = exposure;
  }
}
}  // namespace

Exposure contention_of(const ProcessMutex& lock) {
  return Exposure{static_cast<double>(lock.contended()), "acquisitions found the lock held"};
}

void check_mutual_exclusion(CheckContext& ctx, const SectionMonitor& monitor, const std::string& name,
                            const std::optional<Exposure>& exposure) {
  const auto overlaps = monitor.overlaps.load();
  const auto entries = monitor.entries.load();
  ctx.metric("overlapping_sections", static_cast<double>(overlaps));
  check_exposed(ctx, name, overlaps == 0 ? Verdict::kPass : Verdict::kFail, static_cast<double>(overlaps),
                overlaps == 0 ? fmt::format("no two of {} guarded sections overlapped", entries)
                              : fmt::format("{} of {} guarded sections began while another worker was inside: the "
                                            "lock does not exclude across workers", overlaps, entries),
                exposure);
}

void check_lost_updates(CheckContext& ctx, const SectionMonitor& monitor, const std::string& name,
                        const std::optional<Exposure>& exposure) {
  const auto entries = monitor.entries.load();
  const double lost = monitor.lost_updates();
  const double low = static_cast<double>(entries) - lost;
  ctx.metric("lost_updates", lost);
  ctx.metric("lost_update_rate", entries > 0 ? lost / static_cast<double>(entries) : 0);
  if (!ctx.all_completed()) {
    ctx.check(name, Verdict::kUnknown, lost, "a worker did not finish: its last update is indeterminate");
    return;
  }
  check_exposed(ctx, name, lost == 0 ? Verdict::kPass : Verdict::kFail, lost,
                lost == 0 ? fmt::format("all {} updates reached the shared state", entries)
                          : fmt::format("{} of {} updates were lost (canary {} after {} guarded sections)", lost,
                                        entries, low, entries),
                exposure);
}

void judge_training_section(CheckContext& ctx, const SectionMonitor& monitor, bool locked, std::int64_t steps,
                            double run_s, const ProcessMutex* lock) {
  if (locked) {
    const double wait = ctx.sum_metric("lock_wait_s");
    ctx.metric("lock_wait_s", wait);
    if (run_s > 0) ctx.metric("lock_wait_frac", wait / run_s);
    std::optional<Exposure> exposure;
    if (lock) {
      exposure = contention_of(*lock);
      ctx.metric("contended_acquisitions", exposure->count);
    }
    check_mutual_exclusion(ctx, monitor, checks::kMutualExclusion, exposure);
    check_lost_updates(ctx, monitor, checks::kLostUpdates, exposure);
    return;
  }
  const double lost = monitor.lost_updates();
  ctx.metric("lost_updates", lost);
  ctx.metric("lost_update_rate", steps > 0 ? lost / static_cast<double>(steps) : 0);
  ctx.metric("overlapping_sections", static_cast<double>(monitor.overlaps.load()));
}

}  // namespace sharebench
