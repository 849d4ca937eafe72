// Statistics for comparing runs: pure functions, no state (as google/benchmark's statistics.cc).
#pragma once

#include <vector>

namespace sharebench {

double median(std::vector<double> v);  // NaN for an empty sample

// Two-sided p-value of the Mann-Whitney U test that samples a and b come from the same
// distribution (google/benchmark's compare.py uses the same test). Exact distribution when both
// samples are small and free of ties; otherwise the normal approximation with tie and continuity
// corrections. NaN when either sample is empty.
double mann_whitney_u_p_value(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace sharebench
