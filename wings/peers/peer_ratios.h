// peer_ratios: sharebench against the plain torch.multiprocessing program a user would write for
// the same strategy (wings/peers/torch_mp_peer.py), measured side by side, round after round, in
// one run. A ratio holds across machines where an absolute rate does not: both sides share the
// machine's state of the moment. This file holds the figures and their arithmetic (medians, the
// ratio's range over rounds, scaling from one process to two), the peers.json form, and the gate's
// decision against a stored baseline; pure, so the decision is unit-tested without running anything.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sharebench {

// One round of one row: both throughputs in steps per second over all workers (0: that side failed).
struct PeerRound {
  double sharebench = 0;
  double peer = 0;
  bool sharebench_first = true;  // the order alternates round by round
  double ratio() const { return peer > 0 && sharebench > 0 ? sharebench / peer : 0; }
};

// One strategy at one process count and start method.
struct PeerRow {
  std::string cell;    // "hogwild/lock-free"
  std::string peer;    // the peer program's strategy name: "hogwild"
  std::string start;   // "fork"
  int procs = 1;
  std::vector<PeerRound> rounds;
  std::string error;   // the first failure of either side, "" when every round measured
  std::string key() const;  // "hogwild/lock-free fork 2"
};

struct PeerSummary {
  int rounds = 0;  // rounds with both sides measured
  double sharebench = 0, peer = 0;  // medians of each side's rounds
  double ratio = 0;                 // the median of the rounds' ratios
  double ratio_low = 0, ratio_high = 0;
};
PeerSummary summarise(const PeerRow& row);

// A strategy's scaling from one process to two (the median at 2 over the median at 1), each side.
struct PeerScaling {
  std::string cell, start;
  double sharebench = 0, peer = 0;
};
std::vector<PeerScaling> scaling_one_to_two(const std::vector<PeerRow>& rows);

// The geometric mean of every measured row's median ratio: one figure for the whole comparison.
double overall_ratio(const std::vector<PeerRow>& rows);

struct PeerRun {
  std::vector<PeerRow> rows;
  int rounds_planned = 0;
  int steps = 0;
  std::vector<std::string> command;
  std::map<std::string, std::string> environment;
  std::string started_at;
  bool interrupted = false;
};
nlohmann::json peer_run_to_json(const PeerRun& run);
// Throws std::runtime_error naming what is missing or malformed.
PeerRun peer_run_from_json(const nlohmann::json& j);

// The gate: a candidate's ratios against a baseline's (bench/baselines/). A row regresses when its
// median ratio fell by more than `row_tolerance` of the baseline's; the whole comparison regresses
// when the overall ratio fell by more than `overall_tolerance`. Rows absent from either side are
// named and not judged; a row that failed in the candidate is a regression.
struct GateTolerances {
  double row = 0.25;
  double overall = 0.10;
};
struct RowDecision {
  std::string key;
  double baseline = 0, candidate = 0;  // median ratios
  double change = 0;                   // candidate / baseline - 1
  bool regressed = false;
  std::string note;                    // "not in the baseline", "failed: ...", ""
};
struct GateDecision {
  std::vector<RowDecision> rows;
  double overall_baseline = 0, overall_candidate = 0, overall_change = 0;
  bool overall_regressed = false;
  bool regressed() const;
};
GateDecision judge_against_baseline(const PeerRun& baseline, const PeerRun& candidate, const GateTolerances& tol);

}  // namespace sharebench
