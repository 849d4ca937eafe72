// compare: pairs the cells of two results files (by cell id) and decides whether the candidate
// regressed. A regression is (a) a significant slowdown: steps/s lower by more than the threshold
// with a Mann-Whitney U p-value below alpha over the repetitions, or (b) a correctness regression:
// a cell or check that went as expected in the base and does not in the candidate. With too few
// repetitions for the test to reach alpha, a slowdown is reported but cannot fail the comparison.
// Cells present on one side only are listed.
#pragma once

#include <string>
#include <vector>

#include "harness/results/results.h"

namespace sharebench {

struct CompareOptions {
  double threshold = 0.05;  // relative slowdown that matters
  double alpha = 0.05;      // significance level
};

struct MetricChange {
  std::string cell;
  std::string metric;       // "steps_per_s"
  std::vector<double> base, candidate;
  double base_median = 0, candidate_median = 0;
  double change = 0;        // candidate / base - 1
  double p_value = 0;       // NaN when untestable
  bool significant = false;
  bool regression = false;  // significant slowdown past the threshold
  std::string note;
};

struct CorrectnessRegression {
  std::string cell;
  std::string what;  // "check mutual-exclusion: pass → fail (…)" or "cell: as expected → unexpected"
};

struct Comparison {
  std::vector<MetricChange> changes;
  std::vector<CorrectnessRegression> correctness;
  std::vector<std::string> only_in_base, only_in_candidate;
  std::vector<std::string> warnings;
  bool regressed() const;
};

Comparison compare_runs(const RunResult& base, const RunResult& candidate, const CompareOptions& options);
std::string render_comparison_markdown(const Comparison& c, const CompareOptions& options);
std::string render_comparison_json(const Comparison& c, const CompareOptions& options);

}  // namespace sharebench
