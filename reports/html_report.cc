// HTML report: one self-contained page that opens offline. Chart.js (Debian's libjs-chart.js,
// MIT licence) is inlined at build time. Charts: throughput against process count per scenario
// (one line per variant and start method) and its parallel efficiency, loss against steps and against time with the serial
// reference, launch latency by start method, and IPC handoff latency by size when a run has it.
// Then failures (message, stuck workers, reproduce command), the table of cells, the environment.
// When every chart has rendered, the page sets data-charts-drawn on <body>; its browser test reads it.
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/report_writers.h"

extern const char* const kChartJsSource;

namespace sharebench {

namespace {
using nlohmann::json;

std::string html(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// JSON inside <script>: "</" must not end the script element.
std::string script_json(const json& j) {
  std::string s = j.dump();
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<' && i + 1 < s.size() && s[i + 1] == '/') out += "<\\";
    else out += s[i];
  }
  return out;
}

std::string label(const CellResult& c) { return fmt::format("{}@{}", c.config.variant, to_string(c.config.start)); }

// The chart specifications the page draws: [{id, title, kind, xTitle, yTitle, datasets:[{label, points}]}]
json chart_specs(const RunResult& run) {
  json charts = json::array();
  std::map<std::string, std::vector<const CellResult*>> by_scenario;
  for (const auto& c : run.cells) by_scenario[c.config.scenario].push_back(&c);

  for (const auto& [scenario, cells] : by_scenario) {
    // Throughput against process count.
    std::map<std::string, json> lines;
    int max_procs = 0;
    for (const CellResult* c : cells) {
      max_procs = std::max(max_procs, c->config.procs);
      const double sps = cell_mean(*c, "steps_per_s");
      if (std::isnan(sps)) continue;
      lines[label(*c)].push_back(json::array({c->config.procs, sps}));
    }
    json datasets = json::array();
    for (auto& [name, points] : lines) datasets.push_back({{"label", name}, {"points", points}});
    if (!datasets.empty()) {
      charts.push_back({{"id", "throughput-" + scenario}, {"title", scenario + ": throughput"}, {"kind", "line"},
                        {"integerX", true}, {"xTitle", "processes"}, {"yTitle", "steps/s (all workers)"}, {"datasets", datasets}});
    }
    // Parallel efficiency: throughput at p over p times the line's own 1-process throughput.
    json efficiency = json::array();
    for (const auto& [name, points] : lines) {
      double one = 0;
      for (const auto& pt : points) {
        if (pt[0].get<int>() == 1) one = pt[1].get<double>();
      }
      if (one <= 0 || points.size() < 2) continue;
      json eff = json::array();
      for (const auto& pt : points) {
        const int procs = pt[0].get<int>();
        eff.push_back(json::array({procs, 100.0 * pt[1].get<double>() / (procs * one)}));
      }
      efficiency.push_back({{"label", name}, {"points", eff}});
    }
    if (!efficiency.empty()) {
      charts.push_back({{"id", "efficiency-" + scenario}, {"title", scenario + ": parallel efficiency"},
                        {"kind", "line"}, {"integerX", true}, {"xTitle", "processes"},
                        {"yTitle", "% of 1-process throughput × processes"}, {"datasets", efficiency}});
    }
    // Loss against steps and time, at the largest process count, rank 0 of repetition 0.
    json by_step = json::array(), by_time = json::array();
    const Series* reference = nullptr;
    for (const CellResult* c : cells) {
      if (c->config.procs != max_procs || c->repetitions.empty()) continue;
      for (const Series& s : c->repetitions.front().series) {
        if (s.name == "serial-loss" && !reference) reference = &s;
        if (s.name != "loss" || s.rank != 0) continue;
        json ps = json::array(), pt = json::array();
        for (const auto& p : s.points) {
          ps.push_back(json::array({p.step, p.value}));
          pt.push_back(json::array({p.time_s, p.value}));
        }
        const std::string name = fmt::format("{}:{}", label(*c), max_procs);
        by_step.push_back({{"label", name}, {"points", ps}});
        by_time.push_back({{"label", name}, {"points", pt}});
      }
    }
    if (!by_step.empty()) {
      if (reference) {
        json ps = json::array(), pt = json::array();
        for (const auto& p : reference->points) {
          ps.push_back(json::array({p.step, p.value}));
          pt.push_back(json::array({p.time_s, p.value}));
        }
        by_step.push_back({{"label", "serial reference"}, {"points", ps}, {"reference", true}});
        by_time.push_back({{"label", "serial reference"}, {"points", pt}, {"reference", true}});
      }
      charts.push_back({{"id", "loss-steps-" + scenario}, {"title", fmt::format("{}: training loss by step ({} processes)", scenario, max_procs)},
                        {"kind", "line"}, {"xTitle", "global step"}, {"yTitle", "loss"}, {"datasets", by_step}});
      charts.push_back({{"id", "loss-time-" + scenario}, {"title", fmt::format("{}: training loss by time ({} processes)", scenario, max_procs)},
                        {"kind", "line"}, {"xTitle", "seconds"}, {"yTitle", "loss"}, {"datasets", by_time}});
    }
  }

  // Launch latency by start method, one bar per process count.
  std::map<int, std::map<std::string, std::pair<double, int>>> launch;  // procs → start → (sum ms, n)
  std::set<std::string> starts;
  for (const auto& c : run.cells) {
    const double l = cell_mean(c, "launch_s_max");
    if (std::isnan(l)) continue;
    auto& slot = launch[c.config.procs][std::string(to_string(c.config.start))];
    slot.first += l * 1000;
    slot.second += 1;
    starts.insert(std::string(to_string(c.config.start)));
  }
  if (!launch.empty()) {
    json labels = json::array();
    for (const auto& s : starts) labels.push_back(s);
    json datasets = json::array();
    for (const auto& [procs, per_start] : launch) {
      json values = json::array();
      for (const auto& s : starts) {
        auto it = per_start.find(s);
        values.push_back(it == per_start.end() ? json(nullptr) : json(it->second.first / it->second.second));
      }
      datasets.push_back({{"label", fmt::format("{} process{}", procs, procs == 1 ? "" : "es")}, {"values", values}});
    }
    charts.push_back({{"id", "launch"}, {"title", "launch latency by start method (slowest worker)"}, {"kind", "bar"},
                      {"xTitle", "start method"}, {"yTitle", "ms"}, {"labels", labels}, {"datasets", datasets}});
  }

  // IPC handoff latency by message size, from series named "handoff-latency" ([bytes, _, seconds]).
  json ipc = json::array();
  for (const auto& c : run.cells) {
    if (c.repetitions.empty()) continue;
    for (const Series& s : c.repetitions.front().series) {
      if (s.name != "handoff-latency") continue;
      json pts = json::array();
      for (const auto& p : s.points) pts.push_back(json::array({p.step, p.value * 1e6}));
      ipc.push_back({{"label", c.config.id()}, {"points", pts}});
    }
  }
  if (!ipc.empty()) {
    charts.push_back({{"id", "ipc"}, {"title", "IPC handoff latency by size"}, {"kind", "line"}, {"logX", true},
                      {"xTitle", "bytes"}, {"yTitle", "µs"}, {"datasets", ipc}});
  }
  return charts;
}

const char* kStyle = R"css(
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1280px;color:#1d2329;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d8dee4;padding-bottom:4px}
.summary{color:#57606a}.warning{background:#fff8c5;border:1px solid #d4a72c;padding:8px 12px;border-radius:6px}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:16px}
.chart{border:1px solid #d8dee4;border-radius:6px;padding:8px;height:320px}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{border-bottom:1px solid #eaeef2;padding:4px 8px;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}.ok{color:#1a7f37}.caught{color:#0969da}.bad{color:#cf222e;font-weight:600}
.failure{border:1px solid #ff818266;background:#fff5f5;border-radius:6px;padding:8px 12px;margin:8px 0}
pre{background:#f6f8fa;padding:8px;border-radius:6px;overflow-x:auto;white-space:pre-wrap}
)css";

const char* kScript = R"js(
(function(){
  const charts = JSON.parse(document.getElementById('chart-data').textContent);
  const palette = ['#0969da','#cf222e','#1a7f37','#8250df','#bf8700','#1b7c83','#e16f24','#6e7781','#bf3989','#116329'];
  let drawn = 0;
  const marker = {id:'drawn-marker', afterRender(chart){ if(!chart.$sbDrawn){ chart.$sbDrawn = true; drawn++;
    document.body.dataset.chartsDrawn = String(drawn); } }};
  document.body.dataset.chartsTotal = String(charts.length);
  document.body.dataset.chartsDrawn = '0';
  for (const spec of charts) {
    const canvas = document.getElementById('chart-' + spec.id);
    let data, scales;
    if (spec.kind === 'bar') {
      data = {labels: spec.labels, datasets: spec.datasets.map((d,i)=>({label:d.label, data:d.values, backgroundColor:palette[i%palette.length]}))};
      scales = {x:{title:{display:true,text:spec.xTitle}}, y:{beginAtZero:true,title:{display:true,text:spec.yTitle}}};
    } else {
      data = {datasets: spec.datasets.map((d,i)=>({label:d.label, data:d.points.map(p=>({x:p[0],y:p[1]})),
        borderColor: d.reference ? '#000' : palette[i%palette.length], backgroundColor: d.reference ? '#000' : palette[i%palette.length],
        borderDash: d.reference ? [6,4] : [], pointRadius: d.points.length > 30 ? 0 : 3, borderWidth: 2}))};
      scales = {x:{type: spec.logX ? 'logarithmic' : 'linear', title:{display:true,text:spec.xTitle},
                   ticks: spec.integerX ? {stepSize:1, precision:0} : {}},
                y:{title:{display:true,text:spec.yTitle}}};
    }
    new Chart(canvas, {type: spec.kind, data, plugins:[marker], options:{animation:false, responsive:true,
      maintainAspectRatio:false, parsing: spec.kind === 'bar' ? undefined : false, scales,
      plugins:{title:{display:true,text:spec.title}, legend:{position:'bottom'}}}});
  }
})();
)js";
}  // namespace

std::string render_html(const RunResult& run) {
  const json charts = chart_specs(run);
  int unexpected = 0;
  for (const auto& c : run.cells) unexpected += c.as_expected() ? 0 : 1;
  std::string page = fmt::format(
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>sharebench run {}</title>\n"
      "<style>{}</style>\n<script>\nwindow.addEventListener('error', e => {{ document.documentElement.dataset.errors = "
      "String(Number(document.documentElement.dataset.errors || 0) + 1); }});\n</script>\n<script>{}</script>\n</head>\n<body>\n",
      html(run.run_id), kStyle, kChartJsSource);
  page += fmt::format("<h1>sharebench run {}</h1>\n<p class=\"summary\">{} · {} cells · {} unexpected · started {}{}</p>\n",
                      html(run.run_id), html(run.status), run.cells.size(), unexpected, html(run.started_at),
                      run.finished_at.empty() ? "" : " · finished " + html(run.finished_at));
  if (const std::string w = oversubscription_warning(run); !w.empty()) {
    page += fmt::format("<p class=\"warning\">Warning: {}.</p>\n", html(w));
  }

  if (unexpected > 0) {
    page += "<h2>Failures</h2>\n";
    for (const auto& c : run.cells) {
      if (c.as_expected()) continue;
      page += fmt::format("<div class=\"failure\"><strong>{}</strong>\n", html(c.config.id()));
      for (const auto& r : c.repetitions) {
        if (r.as_expected) continue;
        page += fmt::format("<p>Repetition {}: {}</p><ul>\n", r.index, html(r.expectation_message));
        if (r.status != RunStatus::kCompleted) {
          page += fmt::format("<li>status <b>{}</b>: {}</li>\n", to_string(r.status), html(r.status_message));
        }
        for (const auto& ch : r.checks) {
          if (!check_as_expected(c.expected, ch)) {
            page += fmt::format("<li><b>{}</b> {}: {}</li>\n", to_string(ch.verdict), html(ch.name), html(ch.message));
          }
        }
        page += "</ul>\n";
        for (const auto& w : r.workers) {
          if (!w.stall.empty()) page += fmt::format("<p>rank {} stuck:</p><pre>{}</pre>\n", w.rank, html(w.stall));
          if (!w.stacks.empty()) {
            page += fmt::format("<details><summary>rank {} stacks</summary><pre>{}</pre></details>\n", w.rank, html(w.stacks));
          }
          if (!w.error.empty()) page += fmt::format("<p>rank {} said:</p><pre>{}</pre>\n", w.rank, html(w.error));
        }
      }
      page += fmt::format("<p>Reproduce:</p><pre>{}</pre></div>\n", html(c.repro));
    }
  }

  page += "<h2>Charts</h2>\n<div class=\"charts\">\n";
  for (const auto& spec : charts) {
    page += fmt::format("<div class=\"chart\"><canvas id=\"chart-{}\" role=\"img\" aria-label=\"{}\"></canvas></div>\n",
                        html(spec.at("id").get<std::string>()), html(spec.at("title").get<std::string>()));
  }
  page += "</div>\n<h2>Cells</h2>\n<table><tr><th>cell</th><th>result</th><th>steps/s</th><th>samples/s</th>"
          "<th>held-out loss</th><th>serial</th><th>lock wait</th><th>launch ms</th><th>checks</th></tr>\n";
  auto num = [](double v, int p) { return std::isnan(v) ? std::string("–") : fmt::format("{:.{}f}", v, p); };
  for (const auto& c : run.cells) {
    const char* cls = !c.as_expected() ? "bad" : (c.expected.clean() ? "ok" : "caught");
    const char* word = !c.as_expected() ? "unexpected" : (c.expected.clean() ? "ok" : "bug caught");
    std::string checks;
    if (!c.repetitions.empty()) {
      for (const auto& ch : c.repetitions.front().checks) {
        checks += fmt::format("{}{}: {}", checks.empty() ? "" : ", ", ch.name, to_string(ch.verdict));
      }
    }
    const double wait = cell_mean(c, "lock_wait_frac");
    page += fmt::format("<tr><td>{}</td><td class=\"{}\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
                        "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>\n",
                        html(c.config.id()), cls, word, num(cell_mean(c, "steps_per_s"), 0),
                        num(cell_mean(c, "samples_per_s"), 0), num(cell_mean(c, "heldout_loss"), 3),
                        num(cell_mean(c, "serial_heldout_loss"), 3),
                        std::isnan(wait) ? "–" : fmt::format("{:.0f}%", wait * 100),
                        num(cell_mean(c, "launch_s_max") * 1000, 1), html(checks));
  }
  page += "</table>\n<h2>Environment</h2>\n<table>\n";
  for (const auto& [k, v] : run.environment) page += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", html(k), html(v));
  page += "</table>\n";
  page += fmt::format("<script type=\"application/json\" id=\"chart-data\">{}</script>\n<script>{}</script>\n</body></html>\n",
                      script_json(charts), kScript);
  return page;
}

}  // namespace sharebench
