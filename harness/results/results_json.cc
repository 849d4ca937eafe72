// results_json: the JSON form of the results model (docs/results-schema.md).
#include "harness/results/results_json.h"

#include <fstream>
#include <limits>

#include <fmt/format.h>

namespace sharebench {

using nlohmann::json;

namespace {
constexpr const char* kFormatTag = "sharebench-results";

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json check_json(const Check& c) {
  return json{{"name", c.name}, {"verdict", to_string(c.verdict)}, {"value", optional_number(c.value)},
              {"message", c.message}};
}

json series_json(const Series& s) {
  json points = json::array();
  for (const auto& p : s.points) points.push_back(json::array({p.step, p.time_s, p.value}));
  return json{{"name", s.name}, {"rank", s.rank}, {"points", points}};
}

json worker_json(const WorkerRecord& w) {
  return json{{"rank", w.rank},   {"pid", w.pid},           {"exited", w.exited},
              {"exit_code", w.exit_code}, {"signal", w.signal}, {"steps", w.steps},
              {"launch_s", w.launch_s},   {"error", w.error},   {"stall", w.stall},
              {"stacks", w.stacks}};
}

json repetition_json(const Repetition& r) {
  json checks = json::array(), series = json::array(), workers = json::array();
  for (const auto& c : r.checks) checks.push_back(check_json(c));
  for (const auto& s : r.series) series.push_back(series_json(s));
  for (const auto& w : r.workers) workers.push_back(worker_json(w));
  return json{{"index", r.index},
              {"status", to_string(r.status)},
              {"status_message", r.status_message},
              {"verdict", to_string(r.verdict)},
              {"as_expected", r.as_expected},
              {"expectation_message", r.expectation_message},
              {"wall_s", r.wall_s},
              {"checks", checks},
              {"metrics", r.metrics},
              {"series", series},
              {"workers", workers}};
}

json expected_json(const Expectation& e) {
  json j{{"must_fail", e.must_fail}, {"may_fail", e.may_fail}};
  if (e.others_free) {
    j["others_free"] = true;
    j["must_pass"] = e.must_pass;
  }
  return j;
}

json cell_json(const CellResult& c) {
  json reps = json::array();
  for (const auto& r : c.repetitions) reps.push_back(repetition_json(r));
  json config = json::parse(c.config.to_json());
  config.erase("repetition");
  return json{{"id", c.config.id()},
              {"scenario", c.config.scenario},
              {"variant", c.config.variant},
              {"start", to_string(c.config.start)},
              {"procs", c.config.procs},
              {"config", config},
              {"known_bug", c.known_bug},
              {"expected", expected_json(c.expected)},
              {"as_expected", c.as_expected()},
              {"repro", c.repro},
              {"repetitions", reps}};
}

// Non-finite numbers are written as null; they read back as NaN.
double number_or_nan(const json& v) {
  return v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN();
}

template <typename T>
T field(const json& j, const char* name, const char* where) {
  if (!j.contains(name)) throw ResultsFormatError(fmt::format("results file: {} lacks '{}'", where, name));
  try {
    return j.at(name).get<T>();
  } catch (const json::exception&) {
    throw ResultsFormatError(fmt::format("results file: {}.{} has the wrong type", where, name));
  }
}
}  // namespace

json results_to_json(const RunResult& run) {
  json cells = json::array();
  for (const auto& c : run.cells) cells.push_back(cell_json(c));
  int unexpected = 0;
  for (const auto& c : run.cells) unexpected += c.as_expected() ? 0 : 1;
  return json{{"format", kFormatTag},
              {"schema_version", run.schema_version},
              {"run_id", run.run_id},
              {"status", run.status},
              {"started_at", run.started_at},
              {"finished_at", run.finished_at},
              {"command", run.command},
              {"environment", run.environment},
              {"summary", {{"cells", run.cells.size()}, {"unexpected", unexpected}}},
              {"cells", cells}};
}

RunResult results_from_json(const json& j) {
  if (!j.is_object() || j.value("format", "") != kFormatTag) {
    throw ResultsFormatError("not a sharebench results file (no \"format\": \"sharebench-results\")");
  }
  RunResult run;
  run.schema_version = field<int>(j, "schema_version", "run");
  if (run.schema_version > kResultsSchemaVersion || run.schema_version < 1) {
    throw ResultsFormatError(fmt::format("results schema version {} is not supported (this build reads 1..{})",
                                         run.schema_version, kResultsSchemaVersion));
  }
  run.run_id = field<std::string>(j, "run_id", "run");
  run.status = field<std::string>(j, "status", "run");
  run.started_at = field<std::string>(j, "started_at", "run");
  run.finished_at = field<std::string>(j, "finished_at", "run");
  run.command = field<std::vector<std::string>>(j, "command", "run");
  run.environment = field<std::map<std::string, std::string>>(j, "environment", "run");
  for (const json& cj : field<json>(j, "cells", "run")) {
    CellResult c;
    json config = field<json>(cj, "config", "cell");
    config["repetition"] = 0;
    try {
      c.config = CellConfig::from_json(config.dump());
    } catch (const std::exception& e) {
      throw ResultsFormatError(fmt::format("results file: a cell's config is malformed: {}", e.what()));
    }
    c.known_bug = field<bool>(cj, "known_bug", "cell");
    c.expected.must_fail = field<std::vector<std::string>>(cj.at("expected"), "must_fail", "cell.expected");
    c.expected.may_fail = field<std::vector<std::string>>(cj.at("expected"), "may_fail", "cell.expected");
    c.expected.others_free = cj.at("expected").value("others_free", false);
    if (c.expected.others_free) {
      c.expected.must_pass = field<std::vector<std::string>>(cj.at("expected"), "must_pass", "cell.expected");
    }
    c.repro = field<std::string>(cj, "repro", "cell");
    for (const json& rj : field<json>(cj, "repetitions", "cell")) {
      Repetition r;
      r.index = field<int>(rj, "index", "repetition");
      auto status = parse_run_status(field<std::string>(rj, "status", "repetition"));
      auto verdict = parse_verdict(field<std::string>(rj, "verdict", "repetition"));
      if (!status || !verdict) throw ResultsFormatError("results file: unknown status or verdict");
      r.status = *status;
      r.verdict = *verdict;
      r.status_message = field<std::string>(rj, "status_message", "repetition");
      r.as_expected = field<bool>(rj, "as_expected", "repetition");
      r.expectation_message = field<std::string>(rj, "expectation_message", "repetition");
      r.wall_s = field<double>(rj, "wall_s", "repetition");
      const json metrics = field<json>(rj, "metrics", "repetition");
      for (const auto& [name, value] : metrics.items()) {
        if (value.is_number()) r.metrics[name] = value.get<double>();  // null: not finite when written
      }
      for (const json& k : field<json>(rj, "checks", "repetition")) {
        Check ch;
        ch.name = field<std::string>(k, "name", "check");
        auto v = parse_verdict(field<std::string>(k, "verdict", "check"));
        if (!v) throw ResultsFormatError("results file: unknown check verdict");
        ch.verdict = *v;
        if (k.contains("value") && k.at("value").is_number()) ch.value = k.at("value").get<double>();
        ch.message = field<std::string>(k, "message", "check");
        r.checks.push_back(ch);
      }
      for (const json& sj : field<json>(rj, "series", "repetition")) {
        Series s;
        s.name = field<std::string>(sj, "name", "series");
        s.rank = field<int>(sj, "rank", "series");
        for (const json& p : field<json>(sj, "points", "series")) {
          s.points.push_back(SeriesPoint{number_or_nan(p.at(0)), number_or_nan(p.at(1)), number_or_nan(p.at(2))});
        }
        r.series.push_back(std::move(s));
      }
      for (const json& wj : field<json>(rj, "workers", "repetition")) {
        WorkerRecord w;
        w.rank = field<int>(wj, "rank", "worker");
        w.pid = field<int>(wj, "pid", "worker");
        w.exited = field<bool>(wj, "exited", "worker");
        w.exit_code = field<int>(wj, "exit_code", "worker");
        w.signal = field<int>(wj, "signal", "worker");
        w.steps = field<std::int64_t>(wj, "steps", "worker");
        w.launch_s = field<double>(wj, "launch_s", "worker");
        w.error = field<std::string>(wj, "error", "worker");
        w.stall = field<std::string>(wj, "stall", "worker");
        w.stacks = wj.value("stacks", "");
        r.workers.push_back(w);
      }
      c.repetitions.push_back(std::move(r));
    }
    run.cells.push_back(std::move(c));
  }
  return run;
}

RunResult read_results_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ResultsFormatError(fmt::format("cannot read results file '{}'", path));
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    throw ResultsFormatError(fmt::format("'{}' is not valid JSON: {}", path, e.what()));
  }
  return results_from_json(j);
}

}  // namespace sharebench
