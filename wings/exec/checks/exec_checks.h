// exec_checks: the checks of `sharebench exec`, one file each (this folder), registered in one table
// (exec_checks.cc). Each reads the events it names, through the views this folder builds
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
  const std::vector<ProcessRecord>& processes;  // the cell's process table
  const SharingContext& machine;                // the machine's headroom, the cell's options
};

// When a check has something to judge: what torch did needs torch imported somewhere in the
// program; the rest needs only the hooks' events (a program may import only multiprocessing).
enum class Needs { kTorch, kEvents };

struct ExecCheck {
  CheckId id;
  void (*judge)(const ExecCheckInput&, SharingFindings&);
  Needs needs;
};

// Every registered check, in the order their verdicts are listed.
const std::vector<ExecCheck>& registered();

// The one way a check here says its verdict: passing with `clean` when it found nothing, else
// failing with its findings joined; either way with its exposure.
void add_verdict(SharingFindings& f, CheckId id, const std::vector<std::string>& findings, const std::string& clean,
                 const Exposure& seen);

// Runs every registered check over one repetition's events that has something to judge.
void judge_all(const std::vector<nlohmann::json>& events, const std::vector<ProcessRecord>& processes,
               const SharingContext& machine, SharingFindings& findings);

// The checks, one file each.
void judge_fork_safety(const ExecCheckInput& in, SharingFindings& f);
void judge_updates_shared(const ExecCheckInput& in, SharingFindings& f);
void judge_model_learned(const ExecCheckInput& in, SharingFindings& f);
void judge_trained_model_used(const ExecCheckInput& in, SharingFindings& f);
void judge_optimizer_state_shared(const ExecCheckInput& in, SharingFindings& f);
void judge_grads_delivered(const ExecCheckInput& in, SharingFindings& f);
void judge_copy_on_read(const ExecCheckInput& in, SharingFindings& f);
void judge_deaths_noticed(const ExecCheckInput& in, SharingFindings& f);
void judge_lost_updates(const ExecCheckInput& in, SharingFindings& f);
void judge_consistent_snapshots(const ExecCheckInput& in, SharingFindings& f);
void judge_mutual_exclusion(const ExecCheckInput& in, SharingFindings& f);
void judge_buffer_lifetime(const ExecCheckInput& in, SharingFindings& f);
void judge_random_streams(const ExecCheckInput& in, SharingFindings& f);

}  // namespace sharebench::exec_checks
