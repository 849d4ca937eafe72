// The HTML page's answer: the recommendation and the headline charts (html_answer.h).
#include "reports/html_answer.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "harness/results/recommendation.h"
#include "reports/html_common.h"
#include "reports/recommendation_report.h"
#include "reports/report_writers.h"

namespace sharebench {

namespace {
using nlohmann::json;

// Okabe and Ito's palette: six colours told apart with every common colour-vision deficiency.
const char* const kStrategyColours[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9"};

std::string procs_label(int p) { return fmt::format("{} process{}", p, p == 1 ? "" : "es"); }

// One kind of work on one model: strategy → process count → its figures as the recommendation ranks
// it (start methods pooled unless told apart, else its fastest), under the start method to use.
struct KindTable {
  ScenarioKind kind = ScenarioKind::kTraining;
  std::string model, unit;
  std::set<int> procs;
  std::map<std::string, std::map<int, RankedCell>> best;
  // The strategies fastest at the largest process count first, at most kMaxSeriesPerChart.
  std::vector<std::string> shown() const {
    std::vector<std::pair<double, std::string>> order;
    for (const auto& [strategy, by_procs] : best) {
      const double top = by_procs.rbegin()->second.rate.mean;
      order.emplace_back(by_procs.count(*procs.rbegin()) ? top : top / 1e9, strategy);  // missing at the top count: last
    }
    std::sort(order.rbegin(), order.rend());
    std::vector<std::string> out;
    for (const auto& [rate, s] : order) {
      if (out.size() == kMaxSeriesPerChart) break;
      out.push_back(s);
    }
    return out;
  }
};

std::vector<KindTable> kind_tables(const Recommendation& rec) {
  std::map<std::pair<int, std::string>, KindTable> tables;
  for (const RankingGroup& g : rec.groups) {
    KindTable& t = tables[{static_cast<int>(g.kind), g.model}];
    t.kind = g.kind;
    t.model = g.model;
    t.unit = g.unit;
    t.procs.insert(g.procs);
    for (const RankedStrategy& s : g.strategies) {  // as the answer ranks it: pooled, under the start to use
      RankedCell r;
      r.cell = s.cell;
      r.strategy = s.strategy;
      r.start = s.start;
      r.rate = s.rate;
      r.settled = s.settled;
      r.tied_with_best = s.tied_with_best;
      r.tied_by_margin = s.tied_by_margin;
      r.uss_mb = s.uss_mb;
      r.launch_ms = s.launch_ms;
      t.best[s.strategy].emplace(g.procs, r);
    }
  }
  std::vector<KindTable> out;
  for (auto& [key, t] : tables) out.push_back(std::move(t));
  return out;
}

json bound(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// Bars per process count, one series per strategy: `value` of the strategy's fastest cell there.
json bars_by_procs(const KindTable& t, const std::function<json(const RankedCell&)>& value) {
  json datasets = json::array();
  std::size_t colour = 0;
  for (const std::string& strategy : t.shown()) {
    json points = json::array();
    for (int p : t.procs) {
      const auto& by_procs = t.best.at(strategy);
      const auto it = by_procs.find(p);
      if (it == by_procs.end()) continue;
      json pt = value(it->second);
      if (pt.is_null()) continue;
      pt["x"] = procs_label(p);
      pt["start"] = to_string(it->second.start);
      points.push_back(pt);
    }
    datasets.push_back({{"label", strategy}, {"color", kStrategyColours[colour++ % kMaxSeriesPerChart]}, {"points", points}});
  }
  return datasets;
}

json labels_of(const KindTable& t) {
  json labels = json::array();
  for (int p : t.procs) labels.push_back(procs_label(p));
  return labels;
}

std::string more_note(const KindTable& t) {
  const std::size_t more = t.best.size() - t.shown().size();
  return more == 0 ? "" : fmt::format("{} more strateg{} in the ranked tables", more, more == 1 ? "y" : "ies");
}

const CellResult* find_cell(const RunResult& run, const std::string& id) {
  for (const CellResult& c : run.cells) {
    if (c.config.id() == id) return &c;
  }
  return nullptr;
}

// Held-out loss against the timed seconds it took, one line per strategy through its process counts.
json loss_against_time(const RunResult& run, const KindTable& t) {
  json datasets = json::array();
  std::size_t colour = 0;
  for (const std::string& strategy : t.shown()) {
    json points = json::array();
    for (const auto& [procs, r] : t.best.at(strategy)) {
      const CellResult* c = find_cell(run, r.cell);
      const double loss = c ? cell_mean(*c, "heldout_loss") : NAN, secs = c ? cell_mean(*c, "run_s") : NAN;
      if (std::isfinite(loss) && std::isfinite(secs)) {
        points.push_back({{"x", secs}, {"y", loss}, {"start", r.cell}, {"procs", procs}});
      }
    }
    datasets.push_back({{"label", strategy}, {"color", kStrategyColours[colour++ % kMaxSeriesPerChart]}, {"points", points}});
  }
  return datasets;
}

std::string kind_words(const KindTable& t, bool several_models) {
  std::string k(to_string(t.kind));
  return several_models ? fmt::format("{} on {}", k, t.model) : k;
}

// Private memory per worker by start method (what decides it most), one series per strategy, at the
// largest process count: the cell of that strategy and start method, whatever its speed.
json memory_by_start(const RunResult& run, const KindTable& t, bool several) {
  const int procs = *t.procs.rbegin();
  std::vector<StartMethod> starts;
  std::map<std::string, std::map<StartMethod, double>> mib;
  for (const CellResult& c : run.cells) {
    const std::string strategy = c.config.scenario + "/" + c.config.variant;
    if (c.kind != t.kind || c.config.procs != procs || !t.best.count(strategy) || ranking_exclusion(c)) continue;
    const double v = cell_mean(c, "worker_uss_mb_peak");
    if (!(v > 0)) continue;
    mib[strategy][c.config.start] = v;
    if (std::find(starts.begin(), starts.end(), c.config.start) == starts.end()) starts.push_back(c.config.start);
  }
  std::sort(starts.begin(), starts.end());
  json labels = json::array(), datasets = json::array();
  for (StartMethod m : starts) labels.push_back(to_string(m));
  std::size_t colour = 0;
  for (const std::string& strategy : t.shown()) {
    json points = json::array();
    for (const auto& [m, v] : mib[strategy]) points.push_back({{"x", to_string(m)}, {"y", v}});
    datasets.push_back({{"label", strategy}, {"color", kStrategyColours[colour++ % kMaxSeriesPerChart]}, {"points", points}});
  }
  return chart_spec("answer-memory-" + id_part(kind_words(t, several)),
                    fmt::format("{}: private memory per worker by start method (peak USS, {})", kind_words(t, several),
                                procs_label(procs)),
                    "start method", "MiB", datasets, json{{"kind", "bars"}, {"labels", labels}, {"note", more_note(t)}});
}

json headline_charts(const RunResult& run, const Recommendation& rec) {
  json charts = json::array();
  const std::vector<KindTable> tables = kind_tables(rec);
  std::set<std::string> models;
  for (const KindTable& t : tables) models.insert(t.model);
  const bool several = models.size() > 1;
  for (const KindTable& t : tables) {
    const std::string key = id_part(kind_words(t, several));
    json extra{{"kind", "bars"}, {"labels", labels_of(t)}, {"note", more_note(t)}};
    charts.push_back(chart_spec("answer-throughput-" + key,
                                fmt::format("{}: throughput by strategy (start methods pooled unless told apart; mean, 95 % interval)",
                                            kind_words(t, several)),
                                "processes", t.unit, bars_by_procs(t, [](const RankedCell& r) {
                                  return json{{"y", r.rate.mean}, {"lo", bound(r.rate.lo)}, {"hi", bound(r.rate.hi)}};
                                }), extra));
  }
  for (const KindTable& t : tables) {
    if (t.kind != ScenarioKind::kTraining) continue;
    const std::string key = id_part(kind_words(t, several));
    charts.push_back(chart_spec("answer-loss-time-" + key,
                                fmt::format("{}: held-out loss against the time it took", kind_words(t, several)),
                                "seconds of training (timed)", "held-out loss", loss_against_time(run, t),
                                json{{"zeroY", false}, {"shapeByProcs", true},
                                     {"note", "● 1 process, ▲ 2, ■ 4, ◆ more: one point per process count, joined per "
                                              "strategy. " + more_note(t)}}));
    charts.push_back(memory_by_start(run, t, several));
  }
  return charts;
}

std::string ranked_rows(const RankingGroup& g) {
  std::string rows = "<tr><th></th><th>strategy</th><th>its figures</th></tr>\n";
  for (const RankedStrategy& s : g.strategies) {
    rows += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", tie_mark(s), html_escape(s.strategy),
                        html_escape(ranked_figures(s, g.unit)));
  }
  rows += "<tr><th></th><th>cell</th><th>its figures</th></tr>\n";
  for (const RankedCell& r : g.ranked) {
    rows += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", tie_mark(r), html_escape(r.cell),
                        html_escape(ranked_figures(r, g.unit)));
  }
  return rows;
}

std::string answer_section(const RunResult& run, const Recommendation& rec) {
  // The method in a line, as on the console; in full in the title (hover) and in report.md.
  std::string out = fmt::format("<section id=\"answer\"><h2>Recommendation</h2>\n<p class=\"summary\" title=\"{}\">The "
                                "fastest strategies that passed every check and converged. {}; {}.</p>\n<ul class=\"verdicts\">\n",
                                html_escape(repetition_policy_line(run)), html_escape(recommendation_legend(run)),
                                html_escape(repetition_policy_short(run)));
  if (rec.empty()) out += "<li>Nothing to rank: no cell of training, inference or messages passed every check.</li>\n";
  for (const RankingGroup& g : rec.groups) {
    const RankedStrategy& top = g.strategies.front();
    out += fmt::format("<li><b>{}</b>: {}{} <span class=\"summary\">({}; start methods: {})</span></li>\n",
                       html_escape(group_title(g)), html_escape(g.verdict),
                       g.budget_note.empty() ? "" : "; " + html_escape(g.budget_note), html_escape(ranked_figures(top, g.unit)),
                       html_escape(g.start_methods));
  }
  out += "</ul>\n";
  if (!rec.groups.empty()) {
    out += "<details id=\"ranked\"><summary>Every ranked strategy and cell, with its interval, memory and launch cost</summary>\n"
           "<p class=\"summary\">= tied with the fastest: 95 % intervals overlap. ≈ tied through the tie margin: the "
           "intervals part, the means are within it.</p>\n";
    for (const RankingGroup& g : rec.groups) {
      out += fmt::format("<h3>{}</h3>\n<table class=\"ranked\">\n{}</table>\n", html_escape(group_title(g)), ranked_rows(g));
    }
    out += "</details>\n";
  }
  if (!rec.excluded.empty()) {
    out += fmt::format("<details id=\"not-ranked\"><summary>Not ranked: {}</summary><ul>\n", html_escape(exclusions_line(rec)));
    for (const Exclusion& e : rec.excluded) out += fmt::format("<li>{}: {}</li>\n", html_escape(e.cell), html_escape(e.why));
    out += "</ul></details>\n";
  }
  return out + "</section>\n";
}

}  // namespace

HtmlAnswer html_answer(const RunResult& run) {
  const Recommendation rec = recommend(run);
  return HtmlAnswer{answer_section(run, rec), headline_charts(run, rec)};
}

}  // namespace sharebench
