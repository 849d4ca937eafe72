// peer_ratios: medians, ratios, scaling, peers.json and the gate's decision (peer_ratios.h).
#include "wings/peers/peer_ratios.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/util/statistics.h"

namespace sharebench {

std::string PeerRow::key() const { return fmt::format("{} {} {}", cell, start, procs); }

PeerSummary summarise(const PeerRow& row) {
  PeerSummary s;
  std::vector<double> ours, theirs, ratios;
  for (const PeerRound& r : row.rounds) {
    if (r.ratio() <= 0) continue;
    ours.push_back(r.sharebench);
    theirs.push_back(r.peer);
    ratios.push_back(r.ratio());
  }
  s.rounds = static_cast<int>(ratios.size());
  if (ratios.empty()) return s;
  s.sharebench = median(ours);
  s.peer = median(theirs);
  s.ratio = median(ratios);
  s.ratio_low = *std::min_element(ratios.begin(), ratios.end());
  s.ratio_high = *std::max_element(ratios.begin(), ratios.end());
  return s;
}

std::vector<PeerScaling> scaling_one_to_two(const std::vector<PeerRow>& rows) {
  std::vector<PeerScaling> out;
  for (const PeerRow& one : rows) {
    if (one.procs != 1) continue;
    for (const PeerRow& two : rows) {
      if (two.procs != 2 || two.cell != one.cell || two.start != one.start) continue;
      const PeerSummary a = summarise(one), b = summarise(two);
      if (a.rounds == 0 || b.rounds == 0) continue;
      out.push_back(PeerScaling{one.cell, one.start, b.sharebench / a.sharebench, b.peer / a.peer});
    }
  }
  return out;
}

double overall_ratio(const std::vector<PeerRow>& rows) {
  double log_sum = 0;
  int n = 0;
  for (const PeerRow& row : rows) {
    const PeerSummary s = summarise(row);
    if (s.rounds == 0) continue;
    log_sum += std::log(s.ratio);
    ++n;
  }
  return n == 0 ? 0 : std::exp(log_sum / n);
}

nlohmann::json peer_run_to_json(const PeerRun& run) {
  nlohmann::json rows = nlohmann::json::array();
  for (const PeerRow& row : run.rows) {
    nlohmann::json rounds = nlohmann::json::array();
    for (const PeerRound& r : row.rounds) {
      rounds.push_back({{"sharebench_steps_per_s", r.sharebench}, {"peer_steps_per_s", r.peer},
                        {"sharebench_first", r.sharebench_first}});
    }
    const PeerSummary s = summarise(row);
    nlohmann::json j = {{"cell", row.cell}, {"peer", row.peer}, {"start", row.start}, {"procs", row.procs},
                        {"rounds", rounds}};
    if (s.rounds > 0) {
      j["summary"] = {{"rounds", s.rounds},       {"sharebench_steps_per_s", s.sharebench},
                      {"peer_steps_per_s", s.peer}, {"ratio", s.ratio},
                      {"ratio_low", s.ratio_low}, {"ratio_high", s.ratio_high}};
    }
    if (!row.error.empty()) j["error"] = row.error;
    rows.push_back(std::move(j));
  }
  nlohmann::json scaling = nlohmann::json::array();
  for (const PeerScaling& s : scaling_one_to_two(run.rows)) {
    scaling.push_back({{"cell", s.cell}, {"start", s.start}, {"sharebench", s.sharebench}, {"peer", s.peer}});
  }
  return {{"kind", "sharebench-peers"},
          {"schema", 1},
          {"started_at", run.started_at},
          {"command", run.command},
          {"environment", run.environment},
          {"rounds_planned", run.rounds_planned},
          {"steps", run.steps},
          {"interrupted", run.interrupted},
          {"overall_ratio", overall_ratio(run.rows)},
          {"rows", rows},
          {"scaling_1_to_2", scaling}};
}

PeerRun peer_run_from_json(const nlohmann::json& j) {
  if (!j.is_object() || j.value("kind", "") != "sharebench-peers") {
    throw std::runtime_error("not a peers file (its \"kind\" is not \"sharebench-peers\")");
  }
  if (j.value("schema", 0) != 1) throw std::runtime_error(fmt::format("peers schema {} is not 1", j.value("schema", 0)));
  PeerRun run;
  try {
    run.started_at = j.value("started_at", "");
    run.rounds_planned = j.value("rounds_planned", 0);
    run.steps = j.value("steps", 0);
    run.interrupted = j.value("interrupted", false);
    if (j.contains("command")) run.command = j.at("command").get<std::vector<std::string>>();
    if (j.contains("environment")) run.environment = j.at("environment").get<std::map<std::string, std::string>>();
    for (const auto& r : j.at("rows")) {
      PeerRow row;
      row.cell = r.at("cell").get<std::string>();
      row.peer = r.at("peer").get<std::string>();
      row.start = r.at("start").get<std::string>();
      row.procs = r.at("procs").get<int>();
      row.error = r.value("error", "");
      for (const auto& round : r.at("rounds")) {
        row.rounds.push_back(PeerRound{round.at("sharebench_steps_per_s").get<double>(),
                                       round.at("peer_steps_per_s").get<double>(),
                                       round.value("sharebench_first", true)});
      }
      run.rows.push_back(std::move(row));
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("malformed peers file: {}", e.what()));
  }
  return run;
}

bool GateDecision::regressed() const {
  if (overall_regressed) return true;
  return std::any_of(rows.begin(), rows.end(), [](const RowDecision& r) { return r.regressed; });
}

GateDecision judge_against_baseline(const PeerRun& baseline, const PeerRun& candidate, const GateTolerances& tol) {
  GateDecision d;
  std::map<std::string, const PeerRow*> base;
  for (const PeerRow& row : baseline.rows) base[row.key()] = &row;
  std::vector<PeerRow> judged_base, judged_candidate;  // the overall figure over rows both sides have
  for (const PeerRow& row : candidate.rows) {
    RowDecision r;
    r.key = row.key();
    const PeerSummary c = summarise(row);
    r.candidate = c.ratio;
    const auto it = base.find(r.key);
    if (it == base.end() || summarise(*it->second).rounds == 0) {
      r.note = "not in the baseline: not judged";
      d.rows.push_back(r);
      continue;
    }
    const PeerRow& base_row = *it->second;
    base.erase(it);
    r.baseline = summarise(base_row).ratio;
    if (c.rounds == 0) {
      r.regressed = true;
      r.note = row.error.empty() ? "no round measured" : "failed: " + row.error;
      d.rows.push_back(r);
      continue;
    }
    r.change = r.candidate / r.baseline - 1;
    r.regressed = r.change < -tol.row;
    judged_base.push_back(base_row);
    judged_candidate.push_back(row);
    d.rows.push_back(r);
  }
  for (const auto& [key, row] : base) {
    RowDecision r;
    r.key = key;
    r.baseline = summarise(*row).ratio;
    r.note = "in the baseline, not run: not judged";
    d.rows.push_back(r);
  }
  d.overall_baseline = overall_ratio(judged_base);
  d.overall_candidate = overall_ratio(judged_candidate);
  if (d.overall_baseline > 0 && d.overall_candidate > 0) {
    d.overall_change = d.overall_candidate / d.overall_baseline - 1;
    d.overall_regressed = d.overall_change < -tol.overall;
  }
  return d;
}

}  // namespace sharebench
