// Statistics for comparing runs: pure functions, no state (as google/benchmark's statistics.cc).
#pragma once

#include <cstddef>
#include <vector>

namespace sharebench {

double median(std::vector<double> v);  // NaN for an empty sample

// Two-sided p-value of the Mann-Whitney U test that samples a and b come from the same
// distribution (google/benchmark's compare.py uses the same test). Exact distribution when both
// samples are small and free of ties; otherwise the normal approximation with tie and continuity
// corrections. NaN when either sample is empty.
double mann_whitney_u_p_value(const std::vector<double>& a, const std::vector<double>& b);

// The Hodges–Lehmann estimate of the shift from sample a to sample b (the median of every b_j − a_i)
// with its exact distribution-free confidence interval (Bauer 1972; the interval inverts the
// Mann–Whitney U test, so it needs no assumption on the distribution's shape). `bounded` is false
// when the samples are too small for any interval at this confidence (then lo and hi are ±inf):
// 2 against 2 repetitions can never exclude anything at 95 %.
struct ShiftEstimate {
  double estimate = 0;
  double lo = 0, hi = 0;
  bool bounded = false;
};
ShiftEstimate hodges_lehmann_shift(const std::vector<double>& a, const std::vector<double>& b, double alpha);

// The smallest n such that n against n repetitions gives a bounded interval at this alpha.
std::size_t fewest_repetitions_for_interval(double alpha);

}  // namespace sharebench
