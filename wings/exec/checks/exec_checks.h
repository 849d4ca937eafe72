// exec_checks: the checks of `sharebench exec` that are one file each (this folder), registered in
// one table (exec_checks.cc). Each reads the events it names, through the views this folder builds
// from them (shared_state_view.h), and adds its one check to the findings: a verdict, a message that
// names both sides and the fix, and its exposure (how often its situation arose; 0 is `not
// exercised`). Adding one: a judge function in a file of its own here, a Python module beside
// sharebench_watch.py when it needs events of its own, and a row in the table.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/results/check_ids.h"
#include "wings/exec/checks/shared_state_view.h"
#include "wings/exec/sharing_findings.h"

namespace sharebench::exec_checks {

struct ExecCheckInput {
  const std::vector<nlohmann::json>& events;
  const SharedStateView& shared_state;
};

struct ExecCheck {
  CheckId id;
  void (*judge)(const ExecCheckInput&, SharingFindings&);
};

// Every registered check, in the order their verdicts are listed.
const std::vector<ExecCheck>& registered();

// The one way a check here says its verdict: passing with `clean` when it found nothing, else
// failing with its findings joined; either way with its exposure.
void add_verdict(SharingFindings& f, CheckId id, const std::vector<std::string>& findings, const std::string& clean,
                 const Exposure& seen);

// Runs every registered check over one repetition's events.
void judge_all(const std::vector<nlohmann::json>& events, SharingFindings& findings);

// The checks, one file each.
void judge_lost_updates(const ExecCheckInput& in, SharingFindings& f);
void judge_consistent_snapshots(const ExecCheckInput& in, SharingFindings& f);
void judge_mutual_exclusion(const ExecCheckInput& in, SharingFindings& f);
void judge_buffer_lifetime(const ExecCheckInput& in, SharingFindings& f);
void judge_random_streams(const ExecCheckInput& in, SharingFindings& f);

}  // namespace sharebench::exec_checks
