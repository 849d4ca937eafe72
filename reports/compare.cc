// compare: cell pairing, Hodges–Lehmann decisions, correctness regressions, and two renderings.
#include "reports/compare.h"
#include "harness/util/text.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "harness/results/recommendation.h"
#include "harness/checkers/value_checks.h"
#include "harness/results/results_json.h"
#include "harness/config/cell_config_json.h"
#include "reports/report_writers.h"
#include "harness/util/statistics.h"

namespace sharebench {

namespace {
using nlohmann::json;

// The most repetitions compare suggests; past it the change sits on the threshold itself.
constexpr int kMaxSuggestedRepetitions = 1000;
// Convergence: the scenario's own tolerance (scenarios/shared_training.h) when the run lacks it.
constexpr double kDefaultLossTolerance = ConvergenceTolerance{}.relative;

std::vector<double> metric_values(const CellResult& c, const std::string& name) {
  std::vector<double> v;
  for (const Repetition* r : measured_repetitions(c)) {  // a calibration pilot's figures do not count
    if (auto it = r->metrics.find(name); it != r->metrics.end() && std::isfinite(it->second)) v.push_back(it->second);
  }
  return v;
}

// check name → whether every repetition was as expected.
std::map<std::string, bool> checks_as_expected(const CellResult& c) {
  std::map<std::string, bool> out;
  for (const auto& r : c.repetitions) {
    for (const auto& ch : r.checks) {
      auto [it, inserted] = out.emplace(ch.name, true);
      it->second = it->second && check_as_expected(c.expected, ch);
    }
  }
  return out;
}

struct FigureSpec {
  const char* metric;
  bool higher_is_better;
  bool relative;  // change as a ratio (log scale) or as a difference
};

MetricChange decide(const std::string& cell, const FigureSpec& f, std::vector<double> base, std::vector<double> cand,
                    double threshold, double alpha) {
  MetricChange m;
  m.cell = cell;
  m.metric = f.metric;
  m.unit = f.relative ? "%" : "points";
  m.base = base;
  m.candidate = cand;
  m.threshold = threshold;
  std::vector<double> b = base, c = cand;
  if (f.relative) {
    for (double& x : b) x = std::log(std::max(x, 1e-300));
    for (double& x : c) x = std::log(std::max(x, 1e-300));
  }
  const ShiftEstimate s = hodges_lehmann_shift(b, c, alpha);
  auto to_change = [&](double d) { return f.relative ? std::expm1(d) : d; };
  m.base_median = median(base);
  m.candidate_median = median(cand);
  m.change = to_change(s.estimate);
  m.lo = to_change(s.lo);
  m.hi = to_change(s.hi);
  m.bounded = s.bounded;
  // Orient so that `worse` is negative.
  const double sign = f.higher_is_better ? 1 : -1;
  const double est = sign * m.change, lo = sign * (f.higher_is_better ? m.lo : m.hi), hi = sign * (f.higher_is_better ? m.hi : m.lo);
  const std::size_t n = std::min(base.size(), cand.size());
  if (!s.bounded) {
    m.decision = Decision::kInconclusive;
    m.repetitions_needed = static_cast<int>(fewest_repetitions_for_interval(alpha));
    m.note = fmt::format("{} against {} repetitions give no {:.0f} % interval at all: run at least {} per side "
                         "(--repetitions {})",
                         base.size(), cand.size(), 100 * (1 - alpha), m.repetitions_needed, m.repetitions_needed);
    return m;
  }
  if (hi < 0 && est < -threshold) {
    m.decision = Decision::kRegression;
  } else if (lo > 0 && est > threshold) {
    m.decision = Decision::kImprovement;
  } else if (lo > -threshold && hi < threshold) {
    m.decision = Decision::kNoChange;
  } else {
    m.decision = Decision::kInconclusive;
    // The interval narrows about as 1/sqrt(n): the half-width it needs is the distance from the
    // estimate to the nearer of 0 (to call a large change) and the threshold (to call none).
    const double half = (hi - lo) / 2;
    const double target = std::fabs(est) >= threshold ? std::fabs(est) : threshold - std::fabs(est);
    const double needed = target > 0 ? std::ceil(static_cast<double>(n) * (half / target) * (half / target)) : 1e9;
    m.repetitions_needed = static_cast<int>(std::min<double>(kMaxSuggestedRepetitions, std::max<double>(needed, n + 1)));
    m.note = m.repetitions_needed >= kMaxSuggestedRepetitions
                 ? "the change sits on the threshold: no practical repetition count decides it"
                 : fmt::format("about {} repetitions per side would decide it", m.repetitions_needed);
  }
  return m;
}

// Flattened config fields that differ: "workload.step_delay_us" → (base, candidate).
void diff_json(const json& a, const json& b, const std::string& prefix, std::map<std::string, std::string>& out) {
  if (a.is_object() && b.is_object()) {
    std::set<std::string> keys;
    for (auto& [k, v] : a.items()) keys.insert(k);
    for (auto& [k, v] : b.items()) keys.insert(k);
    for (const std::string& k : keys) {
      diff_json(a.value(k, json()), b.value(k, json()), prefix.empty() ? k : prefix + "." + k, out);
    }
    return;
  }
  if (a != b) out[prefix] = fmt::format("{} → {}", dump_json(a), dump_json(b));
}
}  // namespace

std::string to_string(Decision d) {
  switch (d) {
    case Decision::kRegression: return "regression";
    case Decision::kImprovement: return "improvement";
    case Decision::kNoChange: return "no change";
    case Decision::kInconclusive: return "inconclusive";
  }
  return "inconclusive";
}

bool Comparison::regressed() const {
  return !correctness.empty() ||
         std::any_of(changes.begin(), changes.end(), [](const MetricChange& m) { return m.decision == Decision::kRegression; });
}

bool Comparison::inconclusive() const {
  return !regressed() && std::any_of(changes.begin(), changes.end(),
                                     [](const MetricChange& m) { return m.decision == Decision::kInconclusive; });
}

Comparison compare_runs(const RunResult& base, const RunResult& candidate, const CompareOptions& options) {
  Comparison out;
  std::map<std::string, const CellResult*> base_cells, cand_cells;
  for (const auto& c : base.cells) base_cells[c.config.id()] = &c;
  for (const auto& c : candidate.cells) cand_cells[c.config.id()] = &c;
  for (const auto& [id, c] : base_cells) {
    if (!cand_cells.count(id)) out.only_in_base.push_back(id);
  }
  for (const auto& [id, c] : cand_cells) {
    if (!base_cells.count(id)) out.only_in_candidate.push_back(id);
  }
  if (base.environment.count("cpu_model") && candidate.environment.count("cpu_model") &&
      base.environment.at("cpu_model") != candidate.environment.at("cpu_model")) {
    out.warnings.push_back("the two runs come from different CPUs: speed changes compare machines, not code");
  }
  auto fact = [](const RunResult& r, const char* key) {
    auto it = r.environment.find(key);
    return it == r.environment.end() ? std::string() : it->second;
  };
  // What else makes a speed change not the code's: each named where both runs recorded it.
  for (const auto& [key, what] : std::vector<std::pair<const char*, const char*>>{
           {"cores", "core counts"}, {"libtorch", "LibTorch versions"}, {"blas", "BLAS libraries"},
           {"threads_per_worker", "intra-op thread counts"}, {"build_type", "build types"},
           {"compiler", "compilers"}}) {
    const std::string a = fact(base, key), b = fact(candidate, key);
    if (!a.empty() && !b.empty() && a != b) {
      out.warnings.push_back(fmt::format("the two runs differ in their {}: {} against {}", what, a, b));
    }
  }
  const std::string build_a = fact(base, "sharebench_build"), build_b = fact(candidate, "sharebench_build");
  out.builds = {build_a.empty() ? "an unrecorded build" : build_a, build_b.empty() ? "an unrecorded build" : build_b};
  std::map<std::string, std::map<std::string, int>> option_diffs;  // field → "a → b" → cells
  for (const auto& [id, b] : base_cells) {
    auto it = cand_cells.find(id);
    if (it == cand_cells.end()) continue;
    const CellResult& cand = *it->second;
    ++out.paired_cells;

    std::map<std::string, std::string> diffs;
    diff_json(json(b->config), json(cand.config), "", diffs);
    for (const auto& [field, change] : diffs) {
      if (field != "repetition") ++option_diffs[field][change];
    }

    const CellOutcome bo = b->outcome(), co = cand.outcome();
    if (bo.kind == Outcome::kSkipped || co.kind == Outcome::kSkipped) continue;  // nothing ran to compare
    // Throughput, convergence and lock wait: each where both sides measured it.
    double loss_tolerance = kDefaultLossTolerance;
    const auto limits = metric_values(*b, "heldout_loss_limit"), serials = metric_values(*b, "serial_heldout_loss");
    if (!limits.empty() && !serials.empty() && serials.front() > 0) loss_tolerance = limits.front() / serials.front() - 1;
    const std::vector<std::pair<FigureSpec, double>> figures{
        {{"steps_per_s", true, true}, options.threshold},
        {{"heldout_loss", false, true}, loss_tolerance},
        {{"lock_wait_frac", false, false}, options.lock_wait_threshold}};
    for (const auto& [spec, threshold] : figures) {
      auto bv = metric_values(*b, spec.metric), cv = metric_values(cand, spec.metric);
      if (bv.empty() || cv.empty()) continue;
      out.changes.push_back(decide(id, spec, bv, cv, threshold, options.alpha));
    }

    if (bo.green() && co.red()) {
      out.correctness.push_back({id, fmt::format("cell went from {} to unexpected ({})", outcome_word(bo.kind), co.summary)});
    }
    const auto before = checks_as_expected(*b);
    for (const auto& [name, ok] : checks_as_expected(cand)) {
      auto prev = before.find(name);
      if (prev != before.end() && prev->second && !ok && co.kind != Outcome::kInterrupted) {
        out.correctness.push_back({id, fmt::format("check {} was as expected and is not any more", name)});
      }
    }
  }
  for (const auto& [field, changes] : option_diffs) {
    for (const auto& [change, cells] : changes) {
      out.option_differences.push_back(fmt::format("{}: {} ({} cell{})", field, change, cells, cells == 1 ? "" : "s"));
    }
  }
  return out;
}

namespace {
std::string change_text(const MetricChange& m, double v) {
  if (!std::isfinite(v)) return v < 0 ? "−∞" : "+∞";
  return m.unit == "%" ? fmt::format("{:+.1f} %", v * 100) : fmt::format("{:+.1f} pt", v * 100);
}
std::string figure_text(const MetricChange& m, double v) {
  if (m.metric == "lock_wait_frac") return fmt::format("{:.1f} %", v * 100);
  if (m.metric == "heldout_loss") return fmt::format("{:.4f}", v);
  return fmt::format("{:.0f}", v);
}
const char* decision_badge(Decision d) {
  switch (d) {
    case Decision::kRegression: return "❌ regression";
    case Decision::kImprovement: return "🚀 improvement";
    case Decision::kNoChange: return "✅ no change";
    case Decision::kInconclusive: return "❔ inconclusive";
  }
  return "";
}
const char* figure_title(const std::string& metric) {
  if (metric == "steps_per_s") return "Throughput (steps/s)";
  if (metric == "heldout_loss") return "Convergence (held-out loss; lower is better)";
  return "Lock wait (share of worker time; lower is better)";
}
}  // namespace

std::string render_comparison_markdown(const Comparison& c, const CompareOptions& options) {
  int counts[4] = {0, 0, 0, 0};
  for (const auto& m : c.changes) ++counts[static_cast<int>(m.decision)];
  const char* headline = c.regressed() ? "REGRESSION" : (c.inconclusive() ? "INCONCLUSIVE" : "no regression");
  std::string md = fmt::format("# sharebench compare\n\n**{}** · {} paired · {} regression(s), {} improvement(s), "
                               "{} no change, {} inconclusive, {} correctness regression(s) · threshold {:.0f} %, "
                               "lock wait {:.0f} points, {:.0f} % intervals (Hodges–Lehmann)\n\n",
                               headline, counted(c.paired_cells, "cell", "cells"), counts[0], counts[1], counts[2], counts[3],
                               c.correctness.size(),
                               options.threshold * 100, options.lock_wait_threshold * 100, 100 * (1 - options.alpha));
  md += fmt::format("Base: {}. Candidate: {}.\n\n", c.builds.first, c.builds.second);
  for (const auto& w : c.warnings) md += fmt::format("> ⚠️ {}\n\n", w);
  if (!c.option_differences.empty()) {
    md += "## Options that differ between the runs\n\n";
    for (const auto& d : c.option_differences) md += fmt::format("- `{}`\n", d);
    md += "\n";
  }
  if (!c.correctness.empty()) {
    md += "## Correctness regressions\n\n";
    for (const auto& r : c.correctness) md += fmt::format("- `{}`: {}\n", r.cell, r.what);
    md += "\n";
  }
  for (const char* metric : {"steps_per_s", "heldout_loss", "lock_wait_frac"}) {
    std::string rows;
    for (const auto& m : c.changes) {
      if (m.metric != metric) continue;
      // No interval at all (too few repetitions) is a dash, not "-100 % … +∞".
      const std::string interval = m.bounded ? fmt::format("{} … {}", change_text(m, m.lo), change_text(m, m.hi)) : "–";
      rows += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} |\n", m.cell, figure_text(m, m.base_median),
                          figure_text(m, m.candidate_median), change_text(m, m.change), interval,
                          decision_badge(m.decision), m.note);
    }
    if (rows.empty()) continue;
    md += fmt::format("## {}\n\n| cell | base (median) | candidate (median) | change | {:.0f} % interval | decision | note |\n"
                      "|---|--:|--:|--:|--:|---|---|\n{}\n",
                      figure_title(metric), 100 * (1 - options.alpha), rows);
  }
  if (!c.only_in_base.empty() || !c.only_in_candidate.empty()) {
    md += "## Cells on one side only\n\n";
    for (const auto& id : c.only_in_base) md += fmt::format("- only in base: `{}`\n", id);
    for (const auto& id : c.only_in_candidate) md += fmt::format("- only in candidate: `{}`\n", id);
  }
  return md;
}

std::string render_comparison_json(const Comparison& c, const CompareOptions& options) {
  json changes = json::array(), correctness = json::array();
  auto finite = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  for (const auto& m : c.changes) {
    changes.push_back({{"cell", m.cell}, {"metric", m.metric}, {"unit", m.unit}, {"base", m.base},
                       {"candidate", m.candidate}, {"base_median", m.base_median},
                       {"candidate_median", m.candidate_median}, {"change", finite(m.change)},
                       {"interval", {finite(m.lo), finite(m.hi)}}, {"threshold", m.threshold},
                       {"decision", to_string(m.decision)}, {"repetitions_needed", m.repetitions_needed},
                       {"note", m.note}});
  }
  for (const auto& r : c.correctness) correctness.push_back({{"cell", r.cell}, {"what", r.what}});
  return dump_json(json{{"format", "sharebench-compare"}, {"threshold", options.threshold},
              {"lock_wait_threshold", options.lock_wait_threshold}, {"alpha", options.alpha},
              {"regressed", c.regressed()}, {"inconclusive", c.inconclusive()}, {"paired_cells", c.paired_cells},
              {"changes", changes}, {"correctness", correctness}, {"option_differences", c.option_differences},
              {"only_in_base", c.only_in_base}, {"only_in_candidate", c.only_in_candidate}, {"warnings", c.warnings},
              {"builds", {{"base", c.builds.first}, {"candidate", c.builds.second}}}},
                   2) +
         "\n";
}

}  // namespace sharebench
