// Checkers for a critical section that must exclude every other worker (a lock's whole reason to
// exist), as parts any scenario composes: put a SectionMonitor in the arena, open a GuardedSection
// around what the lock guards, and call the two checks from check().
//
//   - occupancy: an atomic counter incremented on entering the section and decremented on leaving;
//     a worker that enters and finds it non-zero has proven two workers inside at once. It catches
//     a lock that does not exclude in every run where two workers overlap, lost update or not.
//   - lost-update canary: 64 doubles read on entry and written back +1 on exit (the same
//     read-modify-write shape as a parameter update spanning the section). Sections entered minus
//     the canary's smallest element is the number of updates lost to an overlap.
//
// The canary is read and written with plain loads and stores, so an unguarded section is also a
// data race ThreadSanitizer reports under the thread start method. Not seen: overlaps in code
// outside the GuardedSection, and a lost update whose overlap happens to leave every canary
// element intact (none in practice: the 64 reads and writes span the whole section).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "harness/results/check_ids.h"
#include "harness/results/results.h"

namespace sharebench {

class CheckContext;
class ProcessMutex;

// Lives in the arena: ctx.arena().create<SectionMonitor>("my.section") in setup(), lookup in work()
// and check(). Trivially laid out, no pointers: valid at any address in every process.
struct SectionMonitor {
  static constexpr int kCanaryElements = 64;
  std::atomic<std::int32_t> occupancy{0};
  std::atomic<std::int64_t> entries{0};
  std::atomic<std::int64_t> overlaps{0};
  double canary[kCanaryElements] = {};

  // A worker that recovered a lock from a dead owner (EOWNERDEAD) calls this: the owner died inside
  // the section and never left it, so its occupancy would read as an overlap forever after.
  void repair_after_owner_death() { occupancy.store(0, std::memory_order_release); }

  // Sections entered minus the canary's smallest element: updates an overlap overwrote.
  double lost_updates() const;
};

// The instrumentation of one pass through the section: construct it just after taking the lock,
// let it end just before releasing it.
class GuardedSection {
 public:
  explicit GuardedSection(SectionMonitor& monitor);
  ~GuardedSection();
  GuardedSection(const GuardedSection&) = delete;
  GuardedSection& operator=(const GuardedSection&) = delete;

 private:
  SectionMonitor& monitor_;
  double snapshot_[SectionMonitor::kCanaryElements];
};

// `mutual-exclusion`: fails when any section began while another worker was inside.
// With `exposure` (how often the lock was contended: contention_of below), a pass says how often
// exclusion was put to the test, and that it never was when nobody contended.
void check_mutual_exclusion(CheckContext& ctx, const SectionMonitor& monitor,
                            const std::string& name = checks::kMutualExclusion,
                            const std::optional<Exposure>& exposure = std::nullopt);
// `lost-updates`: fails when the canary lost updates; unknown when a worker did not finish (its
// last section is indeterminate, as a killed client's last write is in Jepsen's counter).
void check_lost_updates(CheckContext& ctx, const SectionMonitor& monitor, const std::string& name = checks::kLostUpdates,
                        const std::optional<Exposure>& exposure = std::nullopt);
// The lock's acquisitions that found it held by another worker, as an exposure.
Exposure contention_of(const ProcessMutex& lock);

// A training strategy's section, whichever way it is guarded. Under a lock: both checks above, and
// the workers' summed `lock_wait_s` as the metrics lock_wait_s and lock_wait_frac (over `run_s`,
// the workers' summed run time). With no lock (Hogwild), overlaps lose updates by design: the
// figures lost_updates, lost_update_rate (over `steps`) and overlapping_sections, no verdict.
// `lock`: the lock guarding the section, whose contention is both checks' exposure.
void judge_training_section(CheckContext& ctx, const SectionMonitor& monitor, bool locked, std::int64_t steps,
                            double run_s, const ProcessMutex* lock = nullptr);

}  // namespace sharebench
