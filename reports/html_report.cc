// HTML report: one self-contained page that opens offline (Chart.js from Debian's libjs-chart.js,
// MIT licence, inlined at build time). It answers first: the recommendation and the headline charts
// (html_answer.h), then failures with evidence and collapsed stacks, notes, the caught bugs'
// evidence table, then every per-scenario chart, folded and drawn when unfolded (#unfold in the
// address unfolds at once): throughput against process count (median, whiskers for the spread;
// lock operations for lock scenarios, never called throughput) and its parallel efficiency, the
// lock-wait share, memory per worker when measured, held-out loss of every cell against the serial
// reference with the convergence band, loss curves by step and by time (a start-method picker keeps
// them readable), IPC handoff latency by size; one colour per start method and one dash per variant
// there, zero-based axes for every rate and share. Then the cells (skipped as skipped), a program's
// processes (exec cells), the environment.
// When charts have rendered the page sets data-charts-drawn on <body>, and data-first-screen to the
// ids wholly visible before scrolling; its browser test reads them.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/html_answer.h"
#include "reports/html_common.h"
#include "reports/report_writers.h"
#include "harness/results/recommendation.h"
#include "harness/results/results_json.h"
#include "harness/util/text.h"

extern const char* const kChartJsSource;

namespace sharebench {

namespace {
// Each check of a cell, said by its worst verdict over the repetitions (fail, then unknown, then
// not-exercised, then pass), with how many repetitions gave it when not all: a cell that failed in
// its fourth repetition never reads "pass" beside UNEXPECTED.
std::string checks_over_repetitions(const CellResult& c) {
  auto rank = [](Verdict v) {
    switch (v) {
      case Verdict::kFail: return 3;
      case Verdict::kUnknown: return 2;
      case Verdict::kNotExercised: return 1;
      case Verdict::kPass: return 0;
    }
    return 0;
  };
  std::vector<std::string> order;
  std::map<std::string, std::pair<Verdict, int>> worst;  // name -> (worst verdict, repetitions with it)
  for (const Repetition& rep : c.repetitions) {
    for (const Check& ch : rep.checks) {
      auto it = worst.find(ch.name);
      if (it == worst.end()) {
        order.push_back(ch.name);
        worst.emplace(ch.name, std::make_pair(ch.verdict, 1));
      } else if (rank(ch.verdict) > rank(it->second.first)) {
        it->second = {ch.verdict, 1};
      } else if (ch.verdict == it->second.first) {
        ++it->second.second;
      }
    }
  }
  // What needs reading first (fail, unknown, not exercised), then the passed checks folded.
  std::string out, passed;
  int passes = 0;
  for (const std::string& name : order) {
    const auto& [verdict, times] = worst.at(name);
    if (verdict == Verdict::kPass) {
      passed += (passed.empty() ? "" : ", ") + html_escape(name);
      ++passes;
      continue;
    }
    const bool some = c.repetitions.size() > 1 && times < static_cast<int>(c.repetitions.size());
    out += fmt::format("{}{}", out.empty() ? "" : ", ",
                       html_escape(fmt::format("{}: {}{}", name, to_string(verdict),
                                               some ? fmt::format(" (in {} of {} repetitions)", times, c.repetitions.size()) : "")));
  }
  if (passes > 0) out += fmt::format("<details class=\"passed\"><summary>{} passed</summary>{}</details>", passes, passed);
  return out;
}

using nlohmann::json;


// --chaos: what each worker's schedule went through last, before the failure a repetition shows
// (docs/chaos.md); "" for a run without chaos.
std::string chaos_before(const Repetition& r) {
  std::string rows;
  for (const WorkerRecord& w : r.workers) {
    if (!w.chaos_recent.empty()) rows += fmt::format("<li>rank {}: {}</li>", w.rank, html_escape(w.chaos_recent));
  }
  if (rows.empty()) return "";
  return fmt::format("<details class=\"chaos\"><summary>the perturbations before it (repetition {}, --chaos)</summary>"
                     "<ul>{}</ul></details>\n", r.index, rows);
}


const json kDashes = json::array({json::array(), json::array({8, 4}), json::array({2, 3}), json::array({12, 4, 2, 4}),
                                   json::array({4, 8}), json::array({16, 6})});

json dash_for(const std::vector<std::string>& variants, const std::string& v) {
  const auto it = std::find(variants.begin(), variants.end(), v);
  return kDashes[static_cast<std::size_t>(it - variants.begin()) % kDashes.size()];
}

std::string line_label(const CellResult& c) { return fmt::format("{}@{}", c.config.variant, to_string(c.config.start)); }

// A point: x, the median over repetitions and the spread (drawn as a whisker).
json spread_point(double x, const Spread& s, double scale = 1) {
  return json{{"x", x}, {"y", s.median * scale}, {"lo", s.min * scale}, {"hi", s.max * scale}};
}

// One line per variant and start method of a scenario: metric against process count.
json lines_by_procs(const std::vector<const CellResult*>& cells, const std::vector<std::string>& variants,
                    const std::string& metric, double scale) {
  std::map<std::string, json> lines;
  std::map<std::string, const CellResult*> first;
  for (const CellResult* c : cells) {
    const Spread s = cell_spread(*c, metric);
    if (s.n == 0) continue;
    lines[line_label(*c)].push_back(spread_point(c->config.procs, s, scale));
    first.emplace(line_label(*c), c);
  }
  json datasets = json::array();
  for (auto& [name, points] : lines) {
    const CellResult* c = first.at(name);
    datasets.push_back({{"label", name}, {"color", start_colour(c->config.start)},
                        {"dash", dash_for(variants, c->config.variant)}, {"points", points}});
  }
  return datasets;
}

// The model's name as a cell id shows it: a TorchScript file's base name.
std::string model_name(const CellResult& c) {
  const std::string& m = c.config.workload.model;
  const std::size_t slash = m.rfind('/');
  return slash == std::string::npos ? m : m.substr(slash + 1);
}


// One line per variant and start method of a scenario, at one process count: metric against the
// model's size in MiB (a --model sweep).
json lines_by_model_bytes(const std::vector<const CellResult*>& cells, const std::vector<std::string>& variants,
                          const std::string& metric, double scale, int procs) {
  std::map<std::string, std::map<double, json>> lines;  // label → MiB → point (sorted by size)
  std::map<std::string, const CellResult*> first;
  for (const CellResult* c : cells) {
    if (c->config.procs != procs) continue;
    const Spread s = cell_spread(*c, metric);
    const double bytes = cell_mean(*c, "model_bytes");
    if (s.n == 0 || !(bytes > 0)) continue;
    const double mib = bytes / (1 << 20);
    lines[line_label(*c)][mib] = spread_point(mib, s, scale);
    first.emplace(line_label(*c), c);
  }
  json datasets = json::array();
  for (auto& [name, by_size] : lines) {
    if (by_size.size() < 2) continue;
    json points = json::array();
    for (auto& [mib, pt] : by_size) points.push_back(pt);
    const CellResult* c = first.at(name);
    datasets.push_back({{"label", name}, {"color", start_colour(c->config.start)},
                        {"dash", dash_for(variants, c->config.variant)}, {"points", points}});
  }
  return datasets;
}


// Launch latency: one bar per start method (its colour) at each process count; a headline chart.
json launch_chart(const RunResult& run) {
  std::map<StartMethod, std::map<int, std::vector<double>>> launch;  // start → procs → cell medians (ms)
  std::set<int> procs_seen;
  for (const auto& c : run.cells) {
    const Spread l = cell_spread(c, "launch_s_max");
    if (l.n == 0) continue;
    launch[c.config.start][c.config.procs].push_back(l.median * 1000);
    procs_seen.insert(c.config.procs);
  }
  if (!launch.empty()) {
    json labels = json::array(), datasets = json::array();
    for (int p : procs_seen) labels.push_back(fmt::format("{} process{}", p, p == 1 ? "" : "es"));
    for (const auto& [start, per_procs] : launch) {
      json values = json::array();
      for (int p : procs_seen) {
        auto it = per_procs.find(p);
        if (it == per_procs.end()) {
          values.push_back(nullptr);
          continue;
        }
        std::vector<double> v = it->second;
        std::sort(v.begin(), v.end());
        values.push_back(v[v.size() / 2]);
      }
      datasets.push_back({{"label", to_string(start)}, {"color", start_colour(start)}, {"values", values}});
    }
    return json{{"id", "launch"}, {"title", "launch latency by start method (slowest worker, median of cells)"},
                      {"kind", "bar"}, {"xTitle", "processes"}, {"yTitle", "ms"}, {"labels", labels}, {"datasets", datasets}};
  }
  return nullptr;
}


// The per-scenario chart specifications, folded below the answer: [{id, title, kind, xTitle, yTitle, datasets:[…]}].
json chart_specs(const RunResult& run) {
  json charts = json::array();
  // A --model sweep: each model's cells are charted on their own (a line never mixes models), and
  // the sizes against each other below.
  std::set<std::string> models;
  for (const auto& c : run.cells) models.insert(model_name(c));
  const bool sweep = models.size() > 1;
  std::map<std::string, std::vector<const CellResult*>> by_scenario, by_scenario_all_models;
  for (const auto& c : run.cells) {
    const Outcome o = c.outcome().kind;
    if (o == Outcome::kSkipped || o == Outcome::kInterrupted) continue;
    const bool own_model = cell_mean(c, "model_bytes") > 0;  // its scenario shares the --model
    by_scenario[sweep && own_model ? fmt::format("{} on {}", c.config.scenario, model_name(c)) : c.config.scenario]
        .push_back(&c);
    by_scenario_all_models[c.config.scenario].push_back(&c);
  }

  for (const auto& [titled, cells] : by_scenario) {
    const std::string& scenario = titled;
    const std::string key = id_part(titled);
    std::vector<std::string> variants;
    int max_procs = 0;
    for (const CellResult* c : cells) {
      if (std::find(variants.begin(), variants.end(), c->config.variant) == variants.end()) variants.push_back(c->config.variant);
      max_procs = std::max(max_procs, c->config.procs);
    }
    const json per_procs = json{{"integerX", true}};
    // Throughput against process count, the median with the spread across repetitions.
    const json throughput = lines_by_procs(cells, variants, "steps_per_s", 1);
    // A lock or fork-safety scenario's "steps" are lock operations: charted as such, never as work.
    const bool lock_only = cells.front()->kind == ScenarioKind::kLockOnly;
    if (!throughput.empty()) {
      charts.push_back(chart_spec("throughput-" + key,
                                  scenario + (lock_only ? ": lock operations per second (not work; median, whiskers min–max)"
                                                        : ": throughput (median, whiskers min–max)"),
                                  "processes", lock_only ? "operations/s (all workers)" : "steps/s (all workers)",
                                  throughput, per_procs));
    }
    // Parallel efficiency: median throughput at p over p times the line's own 1-process median.
    json efficiency = json::array();
    for (const json& line : throughput) {
      double one = 0;
      for (const json& pt : line.at("points")) {
        if (pt.at("x").get<double>() == 1) one = pt.at("y").get<double>();
      }
      if (one <= 0 || line.at("points").size() < 2) continue;
      json eff = line;
      for (json& pt : eff.at("points")) {
        const double p = pt.at("x").get<double>();
        for (const char* k : {"y", "lo", "hi"}) pt[k] = 100.0 * pt.at(k).get<double>() / (p * one);
      }
      efficiency.push_back(eff);
    }
    if (!efficiency.empty()) {
      charts.push_back(chart_spec("efficiency-" + key, scenario + ": parallel efficiency", "processes",
                             "% of 1-process throughput × processes", efficiency, per_procs));
    }
    // Lock-wait share of worker time.
    const json wait = lines_by_procs(cells, variants, "lock_wait_frac", 100);
    if (!wait.empty()) {
      charts.push_back(chart_spec("lockwait-" + key, scenario + ": share of worker time waiting for the lock",
                             "processes", "% of worker time", wait, per_procs));
    }
    // a3c: time pulling the shared parameters into the replicas; lock-free: updates lost to overlaps.
    const json sync = lines_by_procs(cells, variants, "sync_frac", 100);
    if (!sync.empty()) {
      charts.push_back(chart_spec("sync-" + key, scenario + ": share of worker time syncing the local replica",
                             "processes", "% of worker time", sync, per_procs));
    }
    const json lost = lines_by_procs(cells, variants, "lost_update_rate", 100);
    if (!lost.empty()) {
      charts.push_back(chart_spec("lost-" + key, scenario + ": steps whose update an overlapping step lost (lock-free)",
                             "processes", "% of steps", lost, per_procs));
    }
    // Memory per worker (private and shared), when the run measured it.
    const json memory = lines_by_procs(cells, variants, "worker_uss_mb_peak", 1);
    if (!memory.empty()) {
      charts.push_back(chart_spec("memory-" + key, scenario + ": private memory per worker (peak USS)", "processes",
                             "MiB", memory, per_procs));
    }
    // Held-out loss of every cell against the serial reference and the convergence limit.
    json labels = json::array(), loss = json::array(), serial = json::array(), limit = json::array(), colours = json::array();
    for (const CellResult* c : cells) {
      const Spread l = cell_spread(*c, "heldout_loss");
      if (l.n == 0) continue;
      labels.push_back(fmt::format("{}@{}:{}", c->config.variant, to_string(c->config.start), c->config.procs));
      loss.push_back(spread_point(static_cast<double>(labels.size() - 1), l));
      colours.push_back(start_colour(c->config.start));
      serial.push_back(cell_mean(*c, "serial_heldout_loss"));
      const double lim = cell_mean(*c, "heldout_loss_limit");
      limit.push_back(std::isnan(lim) ? json(nullptr) : json(lim));
    }
    if (!labels.empty()) {
      charts.push_back({{"id", "convergence-" + key}, {"title", scenario + ": held-out loss against the serial reference"},
                        {"kind", "convergence"}, {"xTitle", "cell"}, {"yTitle", "held-out loss"}, {"labels", labels},  // NOLINT(check-id): a chart kind
                        {"loss", loss}, {"colours", colours}, {"serial", serial}, {"limit", limit}});
    }
    // Loss curves at the largest process count: one line per variant, a picker for the start method.
    json by_step = json::array(), by_time = json::array();
    std::set<std::string> groups, with_reference;  // one serial reference line per start method
    for (const CellResult* c : cells) {
      if (c->config.procs != max_procs || c->repetitions.empty()) continue;
      for (const Series& sr : c->repetitions.front().series) {
        const bool reference = sr.name == "serial-loss";
        if (!(sr.name == "loss" && sr.rank == 0) && !reference) continue;
        if (reference && !with_reference.insert(std::string(to_string(c->config.start))).second) continue;
        json ps = json::array(), pt = json::array();
        for (const auto& p : sr.points) {
          ps.push_back(json{{"x", p.step}, {"y", p.value}});
          pt.push_back(json{{"x", p.time_s}, {"y", p.value}});
        }
        const std::string group(to_string(c->config.start));
        groups.insert(group);
        json d{{"label", reference ? "serial reference" : c->config.variant}, {"group", group},
               {"color", reference ? "#000000" : start_colour(c->config.start)},
               {"dash", reference ? json::array({3, 3}) : dash_for(variants, c->config.variant)}};
        d["points"] = ps;
        by_step.push_back(d);
        d["points"] = pt;
        by_time.push_back(d);
        if (reference) break;
      }
    }
    if (!by_step.empty()) {
      const json extra{{"picker", groups}, {"zeroY", false}};
      charts.push_back(chart_spec("loss-steps-" + key, fmt::format("{}: training loss by step ({} processes, rank 0)", scenario, max_procs),
                             "global step", "loss", by_step, extra));
      charts.push_back(chart_spec("loss-time-" + key, fmt::format("{}: training loss by time ({} processes, rank 0)", scenario, max_procs),
                             "seconds", "loss", by_time, extra));
    }
  }

  // A --model sweep: launch, throughput, averaging round time and memory per worker against the
  // model's size, at the largest process count every model ran, one line per variant (for
  // averaging, the transport) and start method.
  for (const auto& [scenario, cells] : by_scenario_all_models) {
    std::set<double> sizes;
    std::map<std::string, int> top_procs;  // model → its largest process count
    std::vector<std::string> variants;
    for (const CellResult* c : cells) {
      const double bytes = cell_mean(*c, "model_bytes");
      if (bytes > 0) sizes.insert(bytes);
      int& top = top_procs[model_name(*c)];
      top = std::max(top, c->config.procs);
      if (std::find(variants.begin(), variants.end(), c->config.variant) == variants.end()) variants.push_back(c->config.variant);
    }
    if (sizes.size() < 2) continue;
    int procs = 0;
    for (const auto& [model, top] : top_procs) procs = procs == 0 ? top : std::min(procs, top);
    const json extra{{"logX", true}};
    const std::string at = fmt::format("{} process{}", procs, procs == 1 ? "" : "es");
    const struct {
      const char* id;
      const char* metric;
      double scale;
      const char* title;
      const char* unit;
    } against_size[] = {
        {"size-launch-", "launch_s_max", 1000, "launch to first step (slowest worker)", "ms"},
        {"size-throughput-", "steps_per_s", 1, "throughput", "steps/s (all workers)"},
        {"size-round-", "round_ms", 1, "averaging round time", "ms"},
        {"size-memory-", "worker_uss_mb_peak", 1, "private memory per worker (peak USS)", "MiB"},
        {"size-handoff-", "handoff_p50_us", 1e-3, "handoff, send to the consumer's model bound (median)", "ms"},
    };
    for (const auto& a : against_size) {
      const json lines = lines_by_model_bytes(cells, variants, a.metric, a.scale, procs);
      if (lines.empty()) continue;
      charts.push_back(chart_spec(a.id + id_part(scenario), fmt::format("{}: {} against model size ({})", scenario, a.title, at),
                             "model parameters (MiB)", a.unit, lines, extra));
    }
  }

  // IPC handoff latency by message size, from series named "handoff-latency" ([bytes, _, seconds]).
  json ipc = json::array();
  std::vector<std::string> ipc_variants;
  for (const auto& c : run.cells) {
    if (c.repetitions.empty()) continue;
    for (const Series& sr : c.repetitions.front().series) {
      if (sr.name != "handoff-latency") continue;
      if (std::find(ipc_variants.begin(), ipc_variants.end(), c.config.variant) == ipc_variants.end()) ipc_variants.push_back(c.config.variant);
      json pts = json::array();
      for (const auto& p : sr.points) pts.push_back(json{{"x", p.step}, {"y", p.value * 1e6}});
      ipc.push_back({{"label", c.config.id()}, {"color", start_colour(c.config.start)},
                     {"dash", dash_for(ipc_variants, c.config.variant)}, {"points", pts}});
    }
  }
  if (!ipc.empty()) {
    charts.push_back(chart_spec("ipc", "IPC handoff latency by size", "bytes", "µs", ipc, json{{"logX", true}}));
  }
  return charts;
}

const char* kStyle = R"css(
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1280px;color:#1d2329;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d8dee4;padding-bottom:4px}
.summary{color:#57606a}.warning{background:#fff8c5;border:1px solid #d4a72c;padding:8px 12px;border-radius:6px}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:16px}
.chart{border:1px solid #d8dee4;border-radius:6px;padding:8px;height:340px;display:flex;flex-direction:column}
.headline .chart{height:var(--headline-height,300px)}.note{font-size:12px;color:#57606a;margin:2px 0 0}
#answer ul.verdicts{margin:4px 0 8px;padding-left:20px}#answer li{margin:2px 0}h3{font-size:15px;margin:12px 0 4px}
details>summary{cursor:pointer;color:#0969da;margin:6px 0}
.chart .canvas{position:relative;flex:1;min-height:0}.picker{font-size:12px;color:#57606a;align-self:flex-end}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{border-bottom:1px solid #eaeef2;padding:4px 8px;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}details.passed{display:inline;color:#57606a}details.passed summary{cursor:pointer}.ok{color:#1a7f37}.caught{color:#0969da}.bad{color:#cf222e;font-weight:600}.skip{color:#9a6700}
.failure{border:1px solid #ff818266;background:#fff5f5;border-radius:6px;padding:8px 12px;margin:8px 0}
pre{background:#f6f8fa;padding:8px;border-radius:6px;overflow-x:auto;white-space:pre-wrap}
)css";

const char* kScript = R"js(
(function(){
  const all = JSON.parse(document.getElementById('chart-data').textContent);
  const charts = all.headline.concat(all.detail);
  let drawn = 0;
  const marker = {id:'drawn-marker', afterRender(chart){ if(!chart.$sbDrawn){ chart.$sbDrawn = true; drawn++;
    document.body.dataset.chartsDrawn = String(drawn); } }};
  // Whiskers: the spread across repetitions (lo..hi) of every point that carries one.
  const whiskers = {id:'whiskers', afterDatasetsDraw(chart){
    const ctx = chart.ctx, y = chart.scales.y, area = chart.chartArea;
    chart.data.datasets.forEach((d, i) => {
      const meta = chart.getDatasetMeta(i);
      if (meta.hidden || !d.data) return;
      d.data.forEach((p, j) => {
        if (p == null || p.lo == null || p.hi == null || p.lo === p.hi) return;
        const el = meta.data[j]; if (!el) return;
        ctx.save(); ctx.beginPath(); ctx.rect(area.left, area.top, area.right - area.left, area.bottom - area.top); ctx.clip();
        ctx.strokeStyle = d.whiskerColor || (Array.isArray(d.borderColor) ? d.borderColor[j] : d.borderColor); ctx.lineWidth = 1.5;
        ctx.beginPath(); ctx.moveTo(el.x, y.getPixelForValue(p.lo)); ctx.lineTo(el.x, y.getPixelForValue(p.hi));
        ctx.moveTo(el.x - 4, y.getPixelForValue(p.lo)); ctx.lineTo(el.x + 4, y.getPixelForValue(p.lo));
        ctx.moveTo(el.x - 4, y.getPixelForValue(p.hi)); ctx.lineTo(el.x + 4, y.getPixelForValue(p.hi));
        ctx.stroke(); ctx.restore();
      });
    });
  }};
  document.body.dataset.chartsTotal = String(charts.length);
  document.body.dataset.headlineTotal = String(all.headline.length);
  document.body.dataset.chartsDrawn = '0';
  const title = t => ({display:true, text:t});
  const shapes = {1:'circle', 2:'triangle', 4:'rect'};
  const number = v => v >= 100 ? Math.round(v).toLocaleString('en') : Number(v.toPrecision(3)).toString();
  const draw = (spec, headline) => {
    const canvas = document.getElementById('chart-' + spec.id);
    let type = 'line', data, scales, parsing;
    if (spec.kind === 'bars') {
      type = 'bar';
      parsing = {xAxisKey:'x', yAxisKey:'y'};
      data = {labels: spec.labels, datasets: spec.datasets.map(d => ({label:d.label, data:d.points, backgroundColor:d.color,
        borderColor:d.color, whiskerColor:'#24292f'}))};
      // Room for the whiskers, up to half again the tallest bar (an unbounded one is clipped).
      const points = spec.datasets.flatMap(d => d.points);
      const top = Math.max(0, ...points.map(p => p.y));
      const reach = Math.max(top, ...points.map(p => p.hi == null ? 0 : p.hi));
      scales = {x:{title:title(spec.xTitle)}, y:{beginAtZero:true, suggestedMax: Math.min(reach, 1.5 * top), title:title(spec.yTitle)}};
    } else if (spec.kind === 'bar') {
      type = 'bar';
      data = {labels: spec.labels, datasets: spec.datasets.map(d => ({label:d.label, data:d.values, backgroundColor:d.color}))};
      scales = {x:{title:title(spec.xTitle)}, y:{beginAtZero:true, title:title(spec.yTitle)}};
    } else if (spec.kind === 'convergence') {
      data = {labels: spec.labels, datasets: [
        {label:'serial reference', data:spec.serial, borderColor:'#000', backgroundColor:'#000', borderDash:[3,3], pointRadius:0, borderWidth:1.5},
        {label:'convergence limit (band: pass)', data:spec.limit, borderColor:'#8c959f', backgroundColor:'rgba(140,149,159,0.18)', fill:'-1', pointRadius:0, borderWidth:1},
        {label:'held-out loss (median, whiskers min–max)', data:spec.loss.map(p => p.y), showLine:false, pointRadius:5,
         borderColor:spec.colours, backgroundColor:spec.colours}]};
      data.datasets[2].data = spec.loss.map(p => ({x:p.x, y:p.y, lo:p.lo, hi:p.hi}));
      scales = {x:{type:'category', title:title(spec.xTitle), ticks:{autoSkip:false, maxRotation:60, minRotation:30}},
                y:{beginAtZero:true, title:title(spec.yTitle)}};
    } else {
      data = {datasets: spec.datasets.map(d => ({label:d.label, data:d.points, group:d.group,
        hidden: spec.picker ? d.group !== spec.picker[0] : false,
        borderColor:d.color, backgroundColor:d.color, borderDash:d.dash || [],
        // One shape per process count where the points are process counts (the note says which).
        pointStyle: spec.shapeByProcs ? d.points.map(p => shapes[Math.min(p.procs, 8)] || 'rectRot') : 'circle',
        pointRadius: spec.shapeByProcs ? 5 : (d.points.length > 30 ? 0 : 3), borderWidth: 2}))};
      scales = {x:{type: spec.logX ? 'logarithmic' : 'linear', title:title(spec.xTitle),
                   ticks: spec.integerX ? {stepSize:1, precision:0} : {}},
                y:{beginAtZero: !!spec.zeroY, title:title(spec.yTitle)}};
    }
    if (spec.kind === 'line') parsing = {xAxisKey:'x', yAxisKey:'y'};
    const tooltip = {callbacks:{label: c => c.dataset.label + ': ' + number(c.parsed.y) +
      (c.raw && c.raw.start ? ' (' + c.raw.start + ')' : '')}};
    const made = new Chart(canvas, {type, data, plugins:[marker, whiskers], options:{animation:false, responsive:true,
      maintainAspectRatio:false, parsing, scales,
      // Bars and headline charts keep their height: the legend stands beside the plot (below, six
      // strategies took half a short box, and three left a headline line chart under 120 px).
      plugins:{title:title(spec.title), tooltip, legend:{position: spec.kind === 'bars' || headline ? 'right' : 'bottom',
        maxWidth: 240, labels:{boxWidth: 14, filter: (item, d) => !(d.datasets[item.datasetIndex] || {}).hidden}}}}});
    if (spec.picker) {
      const pick = document.getElementById('pick-' + spec.id);
      pick.addEventListener('change', () => {
        made.data.datasets.forEach(d => { d.hidden = d.group !== pick.value; });
        made.update();
      });
    }
    return made;
  };
  // The headline's first row fits the window under the answer (down to 240 px a chart): warnings or
  // a long recommendation must not push the charts that answer below the first screen.
  // A box's height is its content's: its padding and border come on top.
  const head = document.getElementById('headline');
  const box = head && head.querySelector('.chart');
  if (box) {
    const frame = box.offsetHeight - parseFloat(getComputedStyle(box).height);
    const room = Math.floor(window.innerHeight - head.getBoundingClientRect().top - frame - 8);
    if (room < 300) head.style.setProperty('--headline-height', Math.max(240, room) + 'px');
  }
  // Each headline chart's plot area, its height in pixels (the browser test holds it tall enough to
  // compare bars: legends and titles once left it 40 px).
  document.body.dataset.plotHeights = all.headline.map(spec => draw(spec, true)).map(c => c && c.chartArea ? Math.round(c.chartArea.bottom - c.chartArea.top) : 0).join(' ');
  // What a reader sees before scrolling: the answer and the headline charts wholly on the first screen.
  const seen = [];
  for (const el of document.querySelectorAll('#answer, #headline .chart')) {
    const box = el.getBoundingClientRect();
    if (box.top >= 0 && box.bottom <= window.innerHeight) seen.push(el.id);
  }
  document.body.dataset.firstScreen = seen.join(' ');
  // The per-scenario charts draw when their section is unfolded (a canvas in a closed <details> has
  // no size); #unfold in the address unfolds it at once.
  const detail = document.getElementById('detail-charts');
  if (detail) {
    let done = false;
    detail.addEventListener('toggle', () => { if (detail.open && !done) { done = true; all.detail.forEach(spec => draw(spec, false)); } });
    if (location.hash === '#unfold') detail.open = true;
  }
})();
)js";


std::string outcome_class(Outcome o) {
  switch (o) {
    case Outcome::kOk: return "ok";
    case Outcome::kBugCaught:
    case Outcome::kFaultHandled: return "caught";
    case Outcome::kSkipped:
    case Outcome::kInterrupted: return "skip";
    case Outcome::kUnexpected: return "bad";
  }
  return "bad";
}
// Each chart's box: its picker when it has one, its canvas, and a note under it.
std::string chart_boxes(const json& charts) {
  std::string out;
  for (const auto& spec : charts) {
    const std::string id = spec.at("id").get<std::string>();
    std::string picker, note;
    if (spec.contains("picker")) {
      picker = fmt::format("<label class=\"picker\">start method <select id=\"pick-{}\">", html_escape(id));
      for (const auto& g : spec.at("picker")) picker += fmt::format("<option>{}</option>", html_escape(g.get<std::string>()));
      picker += "</select></label>";
    }
    if (spec.contains("note") && !spec.at("note").get<std::string>().empty()) {
      note = fmt::format("<p class=\"note\">{}</p>", html_escape(spec.at("note").get<std::string>()));
    }
    out += fmt::format("<div class=\"chart\" id=\"box-{}\">{}<div class=\"canvas\"><canvas id=\"chart-{}\" role=\"img\" "
                       "aria-label=\"{}\"></canvas></div>{}</div>\n",
                       html_escape(id), picker, html_escape(id), html_escape(spec.at("title").get<std::string>()), note);
  }
  return out;
}
}  // namespace

std::string render_html(const RunResult& run) {
  const json detail = chart_specs(run);
  const HtmlAnswer answer = html_answer(run);
  json headline = answer.charts;
  if (json launch = launch_chart(run); !launch.is_null()) headline.push_back(std::move(launch));
  std::map<Outcome, int> counts;
  for (const auto& c : run.cells) ++counts[c.outcome().kind];
  std::string page = fmt::format(
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>sharebench run {}</title>\n"
      "<style>{}</style>\n<script>\nwindow.addEventListener('error', e => {{ document.documentElement.dataset.errors = "
      "String(Number(document.documentElement.dataset.errors || 0) + 1); }});\n</script>\n<script>{}</script>\n</head>\n<body>\n",
      html_escape(run.run_id), kStyle, kChartJsSource);
  // Red for a failure only: "0 unexpected" is good news, written plainly.
  const char* unexpected_class = counts[Outcome::kUnexpected] > 0 ? "bad" : "none";
  page += fmt::format("<h1>sharebench run {}</h1>\n<p class=\"summary\">{} · {} cells · <span class=\"ok\">{} ok</span> · "
                      "<span class=\"caught\">{}</span> · {} · <span class=\"skip\">{} skipped</span> · "
                      "<span class=\"skip\">{} interrupted</span> · <span class=\"{}\">{} unexpected</span> · started {}{}</p>\n",
                      html_escape(run.run_id), html_escape(run.status), run.cells.size(), counts[Outcome::kOk],
                      counted(counts[Outcome::kBugCaught], "bug caught", "bugs caught"),
                      counted(counts[Outcome::kFaultHandled], "fault handled", "faults handled"), counts[Outcome::kSkipped],
                      counts[Outcome::kInterrupted], unexpected_class, counts[Outcome::kUnexpected], html_escape(run.started_at),
                      run.finished_at.empty() ? "" : " · finished " + html_escape(run.finished_at));
  if (const std::string line = measurement_conditions_line(run); !line.empty()) {
    page += fmt::format("<p class=\"summary\">Measured under: {}.</p>\n", html_escape(line));
  }
  // Every warning in one box, one sentence each: the box sits above the answer and must stay short.
  if (const std::vector<std::string> warnings = measurement_warnings(run); !warnings.empty()) {
    std::string text;
    for (const std::string& w : warnings) text += fmt::format("{}{}.", text.empty() ? "" : " ", html_escape(w));
    page += fmt::format("<p class=\"warning\">{}: {}</p>\n", warnings.size() == 1 ? "Warning" : "Warnings", text);
  }
  page += answer.section;
  page += "<div class=\"charts headline\" id=\"headline\">\n" + chart_boxes(headline) + "</div>\n";

  if (counts[Outcome::kUnexpected] > 0) {
    page += "<h2>Failures</h2>\n";
    for (const auto& c : run.cells) {
      const CellOutcome o = c.outcome();
      if (o.kind != Outcome::kUnexpected) continue;
      page += fmt::format("<div class=\"failure\"><strong>{}</strong>: {}\n<ul>\n", html_escape(c.config.id()), html_escape(o.summary));
      for (const Repetition* r : unexpected_repetitions(c)) {
        if (!r->diagnosis.empty()) page += fmt::format("<li><b>diagnosis</b> (repetition {}): {}</li>\n", r->index, html_escape(r->diagnosis));
      }
      for (const Evidence& e : o.evidence) {
        page += fmt::format("<li><b>{}</b> {} (repetition {}): {}</li>\n", html_escape(e.verdict), html_escape(e.check), e.repetition,
                            html_escape(e.message));
      }
      page += "</ul>\n";
      for (const Repetition* r : unexpected_repetitions(c)) {
        if (r->status != RunStatus::kCompleted) {
          page += fmt::format("<p>Repetition {} <b>{}</b>: {}</p>\n", r->index, to_string(r->status), html_escape(r->status_message));
        }
        for (const auto& w : r->workers) {
          if (!w.stall.empty()) page += fmt::format("<p>rank {} stuck:</p><pre>{}</pre>\n", w.rank, html_escape(w.stall));
          if (!w.stacks.empty()) {
            page += fmt::format("<details><summary>rank {} stacks</summary><pre>{}</pre></details>\n", w.rank, html_escape(w.stacks));
          }
          if (!w.error.empty()) page += fmt::format("<p>rank {} said:</p><pre>{}</pre>\n", w.rank, html_escape(w.error));
          if (!w.stderr_tail.empty()) {
            page += fmt::format("<details><summary>rank {} stderr</summary><pre>{}</pre></details>\n", w.rank, html_escape(w.stderr_tail));
          }
        }
        page += chaos_before(*r);
      }
      page += fmt::format("<p>Reproduce:</p><pre>{}</pre></div>\n", html_escape(c.repro));
    }
  }

  std::string notes;
  for (const auto& c : run.cells) {
    for (const std::string& n : distinct_notes(c)) notes += fmt::format("<li><b>{}</b>: {}</li>\n", html_escape(c.config.id()), html_escape(n));
  }
  if (!notes.empty()) page += "<h2>Notes</h2>\n<ul id=\"notes\">\n" + notes + "</ul>\n";
  if (const auto vacuous = unexercised_checks(run); !vacuous.empty()) {
    page += "<h2>Not exercised</h2>\n<p>These checks held only because the situation they guard against never arose "
            "(raise <code>--steps</code> or <code>--procs</code>):</p>\n<ul id=\"not-exercised\">\n";
    for (const auto& [name, cells] : vacuous) {
      std::string list;
      for (const std::string& id : cells) list += (list.empty() ? "" : ", ") + html_escape(id);
      page += fmt::format("<li><b>{}</b> in {} cell(s): {}</li>\n", html_escape(name), cells.size(), list);
    }
    page += "</ul>\n";
  }

  if (counts[Outcome::kBugCaught] + counts[Outcome::kFaultHandled] > 0) {
    page += "<h2>Caught bugs: the evidence</h2>\n<table id=\"evidence\"><tr><th>cell</th><th>caught by</th><th>evidence</th></tr>\n";
    for (const auto& c : run.cells) {
      const CellOutcome o = c.outcome();
      if (o.kind != Outcome::kBugCaught && o.kind != Outcome::kFaultHandled) continue;
      for (const Evidence& e : o.evidence) {
        std::string chaos;
        for (const Repetition& r : c.repetitions) {
          if (r.index == e.repetition) chaos = chaos_before(r);
        }
        page += fmt::format("<tr><td>{}</td><td class=\"caught\">{}</td><td>{}{}</td></tr>\n", html_escape(c.config.id()),
                            html_escape(e.check), html_escape(e.message), chaos);
      }
    }
    page += "</table>\n";
  }

  page += fmt::format("<details id=\"detail-charts\"><summary>Every chart, scenario by scenario ({} charts; "
                      "<a href=\"#unfold\" onclick=\"location.hash='unfold';location.reload()\">unfold</a>)</summary>\n"
                      "<p class=\"summary\">Colours: <span style=\"color:#0969da\">■ fork</span> <span style=\"color:#cf222e\">■ spawn</span> "
                      "<span style=\"color:#1a7f37\">■ forkserver</span> <span style=\"color:#8250df\">■ thread</span>; a dash pattern per variant.</p>\n"
                      "<div class=\"charts\">\n{}</div></details>\n", detail.size(), chart_boxes(detail));
  page += "<h2>Cells</h2>\n<table><tr><th>cell</th><th>result</th><th>throughput (median)</th><th>min–max</th><th>samples/s</th>"
          "<th>held-out loss</th><th>serial</th><th>lock wait</th><th>launch ms</th><th>checks</th></tr>\n";
  auto num = [](double v, int p) { return std::isnan(v) ? std::string("–") : fmt::format("{:.{}f}", v, p); };
  for (const auto& c : run.cells) {
    const CellOutcome o = c.outcome();
    const std::string checks = checks_over_repetitions(c);
    std::string word = outcome_word(o.kind);
    if (o.kind == Outcome::kSkipped || o.kind == Outcome::kInterrupted) word += ": " + o.reason;
    // Each cell in the unit the recommendation ranks it by (messages/s for messages), so a figure
    // reads the same in both places.
    const std::string metric = ranking_metric(c.kind).empty() ? "steps_per_s" : ranking_metric(c.kind);
    const std::string unit = ranking_unit(c.kind).empty() ? (c.kind == ScenarioKind::kLockOnly ? "ops/s" : "steps/s")
                                                          : ranking_unit(c.kind);
    const Spread sps = cell_spread(c, metric);
    const double wait = cell_mean(c, "lock_wait_frac");
    page += fmt::format("<tr><td>{}</td><td class=\"{}\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
                        "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>\n",
                        html_escape(c.config.id()), outcome_class(o.kind), html_escape(word),
                        std::isnan(sps.median) ? std::string("–") : fmt::format("{:.0f} {}", sps.median, unit),
                        sps.n > 1 ? fmt::format("{:.0f}–{:.0f}", sps.min, sps.max) : "–",
                        num(cell_mean(c, "samples_per_s"), 0), num(cell_mean(c, "heldout_loss"), 3),
                        num(cell_mean(c, "serial_heldout_loss"), 3),
                        std::isnan(wait) ? "–" : fmt::format("{:.0f}%", wait * 100),
                        num(cell_mean(c, "launch_s_max") * 1000, 1), checks);
  }
  page += "</table>\n";
  // A program's processes (exec cells), from each cell's last repetition.
  for (const auto& c : run.cells) {
    if (c.repetitions.empty() || c.repetitions.back().processes.empty()) continue;
    page += fmt::format("<h2>Processes of {}</h2>\n<table>\n<tr><th>pid</th><th>role</th><th>command</th><th>CPU s</th>"
                        "<th>USS MiB</th><th>PSS MiB</th><th>shared MiB</th><th>steps</th><th>end</th></tr>\n",
                        html_escape(c.config.id()));
    for (const ProcessRecord& p : c.repetitions.back().processes) {
      page += fmt::format("<tr><td class=\"n\">{}</td><td>{}</td><td>{}</td><td class=\"n\">{:.1f}</td><td class=\"n\">{:.0f}</td>"
                          "<td class=\"n\">{:.0f}</td><td class=\"n\">{:.0f}</td><td class=\"n\">{}</td><td>{}</td></tr>\n",
                          p.pid, html_escape(p.role), html_escape(p.command), p.cpu_s, p.uss_mb_peak, p.pss_mb_peak, p.shared_mb_peak,
                          p.steps, html_escape(p.end));
    }
    page += "</table>\n";
  }
  page += "<h2>Environment</h2>\n<table>\n";
  for (const auto& [k, v] : run.environment) page += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", html_escape(k), html_escape(v));
  page += "</table>\n";
  page += fmt::format("<script type=\"application/json\" id=\"chart-data\">{}</script>\n<script>{}</script>\n</body></html>\n",
                      script_json(json{{"headline", headline}, {"detail", detail}}), kScript);
  return page;
}

}  // namespace sharebench
