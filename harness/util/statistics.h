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

// The mean of a sample with its 95 % confidence interval from Student's t (the sample's own spread;
// no assumption beyond roughly normal repetitions, which throughput over fixed work is). With fewer
// than two values the interval is unbounded (lo = -inf, hi = +inf).
struct MeanInterval {
  double mean = 0;
  double lo = 0, hi = 0;
  int n = 0;
  bool bounded() const;
  // The half-width as a share of the mean (0.05 is ±5 %); +inf when unbounded or the mean is 0.
  double relative_half_width() const;
  // Do the two intervals share any value? Unbounded intervals overlap everything.
  bool overlaps(const MeanInterval& other) const;
};
MeanInterval mean_interval_95(const std::vector<double>& values);
// Student's t quantile for a two-sided 95 % interval with `df` degrees of freedom (df >= 1).
double student_t_975(int df);

}  // namespace sharebench
