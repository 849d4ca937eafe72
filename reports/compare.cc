// compare: cell pairing, significance and correctness regressions, and their two renderings.
#include "reports/compare.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/statistics.h"

namespace sharebench {

namespace {
// Below this many repetitions a side, compare warns (as google/benchmark's compare.py does).
constexpr std::size_t kRecommendedRepetitions = 9;

std::vector<double> metric_values(const CellResult& c, const std::string& name) {
  std::vector<double> v;
  for (const auto& r : c.repetitions) {
    if (auto it = r.metrics.find(name); it != r.metrics.end() && std::isfinite(it->second)) v.push_back(it->second);
  }
  return v;
}

// The smallest two-sided p-value the exact U test can give for these sizes: 2 / C(n1+n2, n1).
double smallest_p(std::size_t n1, std::size_t n2) {
  double c = 1;
  for (std::size_t i = 1; i <= n1; ++i) c = c * static_cast<double>(n2 + i) / static_cast<double>(i);
  return std::min(1.0, 2 / c);
}

// check name → "worst" verdict across repetitions, and whether every repetition was as expected.
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
}  // namespace

bool Comparison::regressed() const {
  return !correctness.empty() ||
         std::any_of(changes.begin(), changes.end(), [](const MetricChange& m) { return m.regression; });
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
  std::size_t fewest = SIZE_MAX;
  for (const auto& [id, b] : base_cells) {
    auto it = cand_cells.find(id);
    if (it == cand_cells.end()) continue;
    const CellResult& cand = *it->second;

    MetricChange m;
    m.cell = id;
    m.metric = "steps_per_s";
    m.base = metric_values(*b, m.metric);
    m.candidate = metric_values(cand, m.metric);
    if (!m.base.empty() && !m.candidate.empty()) {
      fewest = std::min({fewest, m.base.size(), m.candidate.size()});
      m.base_median = median(m.base);
      m.candidate_median = median(m.candidate);
      m.change = m.base_median > 0 ? m.candidate_median / m.base_median - 1 : 0;
      m.p_value = mann_whitney_u_p_value(m.base, m.candidate);
      m.significant = m.p_value < options.alpha;
      const bool slower = m.change < -options.threshold;
      m.regression = slower && m.significant;
      if (slower && !m.significant) {
        m.note = smallest_p(m.base.size(), m.candidate.size()) >= options.alpha
                     ? fmt::format("slower, but {} vs {} repetitions cannot reach p < {}: run more", m.base.size(),
                                   m.candidate.size(), options.alpha)
                     : "slower, not significant";
      }
      out.changes.push_back(std::move(m));
    }

    if (b->config.to_json() != cand.config.to_json()) {
      out.warnings.push_back(fmt::format("{} ran with different options: base {} against candidate {}", id,
                                         b->config.to_json(), cand.config.to_json()));
    }
    if (b->as_expected() && !cand.as_expected()) {
      std::string why;
      for (const auto& r : cand.repetitions) {
        if (!r.as_expected) {
          why = r.expectation_message;
          break;
        }
      }
      out.correctness.push_back({id, fmt::format("cell went from as expected to unexpected ({})", why)});
    }
    const auto before = checks_as_expected(*b);
    for (const auto& [name, ok] : checks_as_expected(cand)) {
      auto prev = before.find(name);
      if (prev != before.end() && prev->second && !ok) {
        out.correctness.push_back({id, fmt::format("check {} was as expected and is not any more", name)});
      }
    }
  }
  if (fewest != SIZE_MAX && fewest < kRecommendedRepetitions) {
    out.warnings.push_back(fmt::format("only {} repetition(s) on a side: the significance test is weak below {} "
                                       "(run with --repetitions {})", fewest, kRecommendedRepetitions,
                                       kRecommendedRepetitions));
  }
  return out;
}

std::string render_comparison_markdown(const Comparison& c, const CompareOptions& options) {
  std::string md = fmt::format("# sharebench compare\n\n**{}** (threshold {:.0f} %, alpha {})\n\n",
                               c.regressed() ? "REGRESSION" : "no regression", options.threshold * 100, options.alpha);
  for (const auto& w : c.warnings) md += fmt::format("> ⚠️ {}\n\n", w);
  if (!c.correctness.empty()) {
    md += "## Correctness regressions\n\n";
    for (const auto& r : c.correctness) md += fmt::format("- `{}`: {}\n", r.cell, r.what);
    md += "\n";
  }
  md += "## Throughput (steps/s, median over repetitions)\n\n| cell | base | candidate | change | p | verdict |\n"
        "|---|--:|--:|--:|--:|---|\n";
  for (const auto& m : c.changes) {
    std::string verdict = m.regression ? "❌ significant slowdown" : (m.note.empty() ? "ok" : m.note);
    md += fmt::format("| `{}` | {:.0f} | {:.0f} | {:+.1f} % | {} | {} |\n", m.cell, m.base_median, m.candidate_median,
                      m.change * 100, std::isnan(m.p_value) ? "–" : fmt::format("{:.3f}", m.p_value), verdict);
  }
  if (!c.only_in_base.empty() || !c.only_in_candidate.empty()) {
    md += "\n## Cells on one side only\n\n";
    for (const auto& id : c.only_in_base) md += fmt::format("- only in base: `{}`\n", id);
    for (const auto& id : c.only_in_candidate) md += fmt::format("- only in candidate: `{}`\n", id);
  }
  return md;
}

std::string render_comparison_json(const Comparison& c, const CompareOptions& options) {
  using nlohmann::json;
  json changes = json::array(), correctness = json::array();
  for (const auto& m : c.changes) {
    changes.push_back({{"cell", m.cell}, {"metric", m.metric}, {"base", m.base}, {"candidate", m.candidate},
                       {"base_median", m.base_median}, {"candidate_median", m.candidate_median},
                       {"change", m.change}, {"p_value", std::isnan(m.p_value) ? json(nullptr) : json(m.p_value)},
                       {"significant", m.significant}, {"regression", m.regression}, {"note", m.note}});
  }
  for (const auto& r : c.correctness) correctness.push_back({{"cell", r.cell}, {"what", r.what}});
  return json{{"format", "sharebench-compare"}, {"threshold", options.threshold}, {"alpha", options.alpha},
              {"regressed", c.regressed()}, {"changes", changes}, {"correctness", correctness},
              {"only_in_base", c.only_in_base}, {"only_in_candidate", c.only_in_candidate},
              {"warnings", c.warnings}}
             .dump(2) + "\n";
}

}  // namespace sharebench
