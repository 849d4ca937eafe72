// Median, the Mann-Whitney U test, the Hodges-Lehmann shift and the t interval of a mean.
#include "harness/util/statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace sharebench {

double median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

namespace {
// Exact sizes up to which the U distribution is counted rather than approximated.
constexpr std::size_t kExactLimit = 30;

// erfc⁻¹ by bisection: only for the large-sample interval, where speed does not matter.
double inverse_erfc(double p) {
  double lo = 0, hi = 10;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (std::erfc(mid) > p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

// count[u] = number of arrangements of n1 + n2 distinct values giving U = u for sample 1.
std::vector<double> u_distribution(std::size_t n1, std::size_t n2) {
  // f[i][j][u] by the recurrence f(i,j,u) = f(i-1,j,u-j) + f(i,j-1,u); kept as a rolling table.
  std::vector<std::vector<std::vector<double>>> f(n1 + 1, std::vector<std::vector<double>>(n2 + 1));
  for (std::size_t i = 0; i <= n1; ++i) {
    for (std::size_t j = 0; j <= n2; ++j) {
      f[i][j].assign(i * j + 1, 0.0);
      if (i == 0 || j == 0) {
        f[i][j][0] = 1;
        continue;
      }
      for (std::size_t u = 0; u <= i * j; ++u) {
        double v = u < f[i][j - 1].size() ? f[i][j - 1][u] : 0;
        if (u >= j && u - j < f[i - 1][j].size()) v += f[i - 1][j][u - j];
        f[i][j][u] = v;
      }
    }
  }
  return f[n1][n2];
}
// The rank k (1-based) of the interval's ends among the sorted n1·n2 differences: the largest k
// with P(U <= k − 1) <= alpha / 2 under the null; 0 when there is none.
std::size_t interval_rank(std::size_t n1, std::size_t n2, double alpha) {
  if (n1 <= kExactLimit && n2 <= kExactLimit) {
    const std::vector<double> counts = u_distribution(n1, n2);
    double total = 0;
    for (double c : counts) total += c;
    double below = 0;
    std::size_t k = 0;
    for (std::size_t u = 0; u < counts.size(); ++u) {
      below += counts[u];
      if (below / total > alpha / 2) break;
      k = u + 1;
    }
    return k;
  }
  // Normal approximation for large samples.
  const double nm = static_cast<double>(n1 * n2);
  const double sd = std::sqrt(nm * static_cast<double>(n1 + n2 + 1) / 12);
  const double z = std::sqrt(2.0) * inverse_erfc(alpha);
  const double k = std::floor(nm / 2 - z * sd);
  return k < 1 ? 0 : static_cast<std::size_t>(k);
}
}  // namespace

ShiftEstimate hodges_lehmann_shift(const std::vector<double>& a, const std::vector<double>& b, double alpha) {
  ShiftEstimate out;
  if (a.empty() || b.empty()) {
    out.estimate = out.lo = out.hi = std::numeric_limits<double>::quiet_NaN();
    return out;
  }
  std::vector<double> d;
  d.reserve(a.size() * b.size());
  for (double x : a) {
    for (double y : b) d.push_back(y - x);
  }
  std::sort(d.begin(), d.end());
  out.estimate = median(d);
  const std::size_t k = interval_rank(a.size(), b.size(), alpha);
  if (k == 0) {
    out.lo = -std::numeric_limits<double>::infinity();
    out.hi = std::numeric_limits<double>::infinity();
    return out;
  }
  out.bounded = true;
  out.lo = d[k - 1];
  out.hi = d[d.size() - k];
  return out;
}

std::size_t fewest_repetitions_for_interval(double alpha) {
  for (std::size_t n = 1; n <= kExactLimit; ++n) {
    if (interval_rank(n, n, alpha) > 0) return n;
  }
  return kExactLimit;
}

double mann_whitney_u_p_value(const std::vector<double>& a, const std::vector<double>& b) {
  const std::size_t n1 = a.size(), n2 = b.size();
  if (n1 == 0 || n2 == 0) return std::numeric_limits<double>::quiet_NaN();
  std::vector<std::pair<double, int>> all;
  for (double x : a) all.emplace_back(x, 0);
  for (double x : b) all.emplace_back(x, 1);
  std::sort(all.begin(), all.end(), [](auto& l, auto& r) { return l.first < r.first; });
  const std::size_t n = all.size();
  double rank_sum_a = 0, tie_term = 0;
  bool ties = false;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j + 1 < n && all[j + 1].first == all[i].first) ++j;
    const double avg_rank = (static_cast<double>(i + j) / 2) + 1;
    const double t = static_cast<double>(j - i + 1);
    if (t > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    for (std::size_t k = i; k <= j; ++k) {
      if (all[k].second == 0) rank_sum_a += avg_rank;
    }
    i = j + 1;
  }
  const double u1 = rank_sum_a - static_cast<double>(n1 * (n1 + 1)) / 2;
  const double mean = static_cast<double>(n1 * n2) / 2;

  if (!ties && n1 <= kExactLimit && n2 <= kExactLimit) {
    const std::vector<double> counts = u_distribution(n1, n2);
    double total = 0;
    for (double c : counts) total += c;
    const double u_low = std::min(u1, static_cast<double>(n1 * n2) - u1);
    double tail = 0;
    for (std::size_t u = 0; u < counts.size() && static_cast<double>(u) <= u_low + 1e-9; ++u) tail += counts[u];
    return std::min(1.0, 2 * tail / total);
  }
  const double nn = static_cast<double>(n);
  const double variance = static_cast<double>(n1 * n2) / 12 * ((nn + 1) - tie_term / (nn * (nn - 1)));
  if (variance <= 0) return 1.0;
  const double z = (std::fabs(u1 - mean) - 0.5) / std::sqrt(variance);
  return std::min(1.0, std::erfc(std::max(0.0, z) / std::sqrt(2.0)));
}

double student_t_975(int df) {
  // The 0.975 quantiles for 1..30 degrees of freedom; above, 1.96 + 2.5/df is within 0.002.
  static constexpr double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                      2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                      2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) return std::numeric_limits<double>::infinity();
  if (df <= 30) return kTable[df - 1];
  return 1.96 + 2.5 / df;
}

bool MeanInterval::bounded() const { return std::isfinite(lo) && std::isfinite(hi); }

double MeanInterval::relative_half_width() const {
  if (!bounded() || mean == 0) return std::numeric_limits<double>::infinity();
  return (hi - lo) / 2 / std::fabs(mean);
}

bool MeanInterval::overlaps(const MeanInterval& other) const { return lo <= other.hi && other.lo <= hi; }

MeanInterval mean_interval_95(const std::vector<double>& values) {
  MeanInterval out;
  out.n = static_cast<int>(values.size());
  const double inf = std::numeric_limits<double>::infinity();
  if (values.empty()) {
    out.mean = std::numeric_limits<double>::quiet_NaN();
    out.lo = -inf;
    out.hi = inf;
    return out;
  }
  double sum = 0;
  for (double v : values) sum += v;
  out.mean = sum / out.n;
  if (out.n < 2) {
    out.lo = -inf;
    out.hi = inf;
    return out;
  }
  double squares = 0;
  for (double v : values) squares += (v - out.mean) * (v - out.mean);
  const double half = student_t_975(out.n - 1) * std::sqrt(squares / (out.n - 1) / out.n);
  out.lo = out.mean - half;
  out.hi = out.mean + half;
  return out;
}

}  // namespace sharebench
