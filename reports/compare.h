// compare: pairs the cells of two results files (by cell id) and decides, for each cell and each
// figure that matters, whether the candidate changed. A figure's change is the Hodges–Lehmann
// estimate over the repetitions with its exact 95 % interval (statistics.h), and the decision is
//   regression    the interval lies wholly on the worse side of zero and the estimate is past
//                 the threshold: a real change, as large as the threshold says matters;
//   improvement   the same on the better side;
//   no change     the interval lies wholly within ± the threshold;
//   inconclusive  anything else: too few repetitions or too much spread to tell a change of the
//                 threshold's size (the decision says how many repetitions would tell).
// Figures: throughput (steps/s, relative, --threshold), convergence (held-out loss, relative to
// the scenario's own tolerance against the serial reference) and lock wait (share of worker time,
// in percentage points, --lock-wait-threshold). A correctness regression (a cell or check that went
// as expected in the base and does not in the candidate) is always a regression.
#pragma once

#include <string>
#include <vector>

#include "harness/results/results.h"

namespace sharebench {

struct CompareOptions {
  double threshold = 0.05;            // relative throughput change that matters
  double lock_wait_threshold = 0.05;  // lock-wait share change that matters (0.05 = 5 points)
  double alpha = 0.05;                // 1 − the interval's confidence
};

enum class Decision { kRegression, kImprovement, kNoChange, kInconclusive };
std::string to_string(Decision d);

struct MetricChange {
  std::string cell;
  std::string metric;         // "steps_per_s", "heldout_loss", "lock_wait_frac"
  std::string unit;           // "%" (relative) or "points"
  std::vector<double> base, candidate;
  double base_median = 0, candidate_median = 0;
  double change = 0, lo = 0, hi = 0;  // relative (0.1 = +10 %) or absolute, as `unit` says
  bool bounded = false;       // the interval exists at this confidence
  double threshold = 0;       // in the same unit as change
  Decision decision = Decision::kInconclusive;
  int repetitions_needed = 0;  // for an inconclusive change: about how many per side would tell
  std::string note;
};

struct CorrectnessRegression {
  std::string cell;
  std::string what;  // "check mutual-exclusion was as expected and is not any more"
};

struct Comparison {
  std::vector<MetricChange> changes;
  std::vector<CorrectnessRegression> correctness;
  std::vector<std::string> only_in_base, only_in_candidate;
  std::vector<std::string> option_differences;  // "workload.step_delay_us: 0 → 20000 (3 cells)"
  std::vector<std::string> warnings;
  std::pair<std::string, std::string> builds;  // "sharebench 0.1.0 (git abc, RelWithDebInfo)" of base, candidate
  std::size_t paired_cells = 0;
  bool regressed() const;
  bool inconclusive() const;  // some change could not be decided (and none regressed)
};

Comparison compare_runs(const RunResult& base, const RunResult& candidate, const CompareOptions& options);
std::string render_comparison_markdown(const Comparison& c, const CompareOptions& options);
std::string render_comparison_json(const Comparison& c, const CompareOptions& options);

}  // namespace sharebench
