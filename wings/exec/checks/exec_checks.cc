// exec_checks: the table of exec's one-file checks.
#include "wings/exec/checks/exec_checks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "wings/exec/checks/event_fields.h"
#include "wings/exec/exec_check_ids.h"

namespace sharebench::exec_checks {

const std::vector<ExecCheck>& registered() {
  static const std::vector<ExecCheck> table = {
      {checks::kForkSafety, judge_fork_safety, Needs::kTorch},
      {checks::kUpdatesShared, judge_updates_shared, Needs::kTorch},
      {checks::kModelLearned, judge_model_learned, Needs::kTorch},
      {checks::kTrainedModelUsed, judge_trained_model_used, Needs::kTorch},
      {checks::kOptimizerStateShared, judge_optimizer_state_shared, Needs::kTorch},
      {checks::kGradsDelivered, judge_grads_delivered, Needs::kTorch},
      {checks::kCopyOnRead, judge_copy_on_read, Needs::kTorch},
      {checks::kDeathsNoticed, judge_deaths_noticed, Needs::kEvents},
      {checks::kLostUpdates, judge_lost_updates, Needs::kEvents},
      {checks::kConsistentSnapshots, judge_consistent_snapshots, Needs::kEvents},
      {checks::kMutualExclusion, judge_mutual_exclusion, Needs::kEvents},
      {checks::kBufferLifetime, judge_buffer_lifetime, Needs::kEvents},
      {checks::kRandomStreams, judge_random_streams, Needs::kEvents},
  };
  return table;
}

void add_verdict(SharingFindings& f, CheckId id, const std::vector<std::string>& findings, const std::string& clean,
                 const Exposure& seen) {
  if (findings.empty()) {
    f.checks.push_back(Check{id, Verdict::kPass, std::nullopt, clean, seen});
  } else {
    f.checks.push_back(Check{id, Verdict::kFail, std::nullopt, fmt::format("{}", fmt::join(findings, " | ")), seen});
  }
}

void judge_all(const std::vector<nlohmann::json>& events, const std::vector<ProcessRecord>& processes,
               const SharingContext& machine, SharingFindings& findings) {
  if (events.empty()) return;  // the hooks never ran: nothing was seen
  const bool torch = !events_of(events, "torch").empty();
  const SharedStateView view = shared_state_view(events);
  const ExecCheckInput in{events, view, processes, machine};
  for (const ExecCheck& check : registered()) {
    if (check.needs == Needs::kTorch && !torch) continue;  // what torch did: nothing without it
    check.judge(in, findings);
  }
}

}  // namespace sharebench::exec_checks
