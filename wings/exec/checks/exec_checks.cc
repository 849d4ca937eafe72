// exec_checks: the table of exec's one-file checks.
#include "wings/exec/checks/exec_checks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "wings/exec/exec_check_ids.h"

namespace sharebench::exec_checks {

const std::vector<ExecCheck>& registered() {
  static const std::vector<ExecCheck> table = {
      {checks::kLostUpdates, judge_lost_updates},
      {checks::kConsistentSnapshots, judge_consistent_snapshots},
      {checks::kMutualExclusion, judge_mutual_exclusion},
      {checks::kBufferLifetime, judge_buffer_lifetime},
      {checks::kRandomStreams, judge_random_streams},
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

void judge_all(const std::vector<nlohmann::json>& events, SharingFindings& findings) {
  const SharedStateView view = shared_state_view(events);
  const ExecCheckInput in{events, view};
  for (const ExecCheck& check : registered()) check.judge(in, findings);
}

}  // namespace sharebench::exec_checks
