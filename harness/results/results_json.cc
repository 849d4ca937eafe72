// results_json: the JSON form of the results model (docs/results-schema.md). The plain structs are
// mapped with nlohmann/json's type macros; by hand only what the macros cannot say: enums as
// words (an unknown word is an error, not the first value), optional and non-finite numbers as
// null, series points as [step, time, value], and a cell's computed fields (id, outcome).
#include "harness/results/results_json.h"
#include "harness/util/bounded_json.h"
#include "harness/config/cell_config_json.h"
#include "harness/results/recommendation.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string_view>

#include <tuple>

#include <fmt/format.h>

namespace sharebench {

using nlohmann::json;

namespace {
constexpr const char* kFormatTag = "sharebench-results";

template <typename Enum>
Enum word_to_enum(const json& j, std::optional<Enum> (*parse)(const std::string&), const char* what) {
  const auto v = parse(j.get<std::string>());
  if (!v) throw ResultsFormatError(fmt::format("results file: unknown {} '{}'", what, j.get<std::string>()));
  return *v;
}

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
double number_or_nan(const json& v) { return v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN(); }
}  // namespace

void to_json(json& j, Verdict v) { j = to_string(v); }
void from_json(const json& j, Verdict& v) { v = word_to_enum<Verdict>(j, &parse_verdict, "verdict"); }
void to_json(json& j, RunStatus s) { j = to_string(s); }
void from_json(const json& j, RunStatus& s) { s = word_to_enum<RunStatus>(j, &parse_run_status, "status"); }

void to_json(json& j, const Check& c) {
  j = json{{"name", c.name}, {"verdict", c.verdict}, {"value", c.value ? number_or_null(*c.value) : json(nullptr)},
           {"message", c.message}};
  if (c.exposure) j["exposure"] = json{{"count", c.exposure->count}, {"what", c.exposure->what}};
  if (!c.tests.empty()) j["tests"] = c.tests;
}
void from_json(const json& j, Check& c) {
  c.name = j.at("name").get<std::string>();
  c.verdict = j.at("verdict").get<Verdict>();
  c.value.reset();
  if (j.contains("value") && j.at("value").is_number()) c.value = j.at("value").get<double>();
  c.message = j.at("message").get<std::string>();
  c.exposure.reset();
  if (j.contains("exposure") && j.at("exposure").is_object()) {
    c.exposure = Exposure{j.at("exposure").at("count").get<double>(), j.at("exposure").at("what").get<std::string>()};
  }
  c.tests.clear();
  if (j.contains("tests") && j.at("tests").is_array()) c.tests = j.at("tests").get<std::vector<std::string>>();
}

void to_json(json& j, const SeriesPoint& p) {
  j = json::array({number_or_null(p.step), number_or_null(p.time_s), number_or_null(p.value)});
}
void from_json(const json& j, SeriesPoint& p) {
  p = SeriesPoint{number_or_nan(j.at(0)), number_or_nan(j.at(1)), number_or_nan(j.at(2))};
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Series, name, rank, points)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(WorkerRecord, rank, pid, exited, exit_code, signal, steps, launch_s,
                                                error, stderr_tail, stall, stacks, chaos_recent, rss_mb_peak, pss_mb_peak,
                                                uss_mb_peak, shared_mb_peak, uss_mb_start, uss_mb_end)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ProcessRecord, pid, ppid, birth, command, role, end, python,
                                                first_seen_s, last_seen_s, cpu_s, steps, rss_mb_peak, pss_mb_peak,
                                                uss_mb_peak, shared_mb_peak, state, python_stack, native_stack, error,
                                                fds_peak, fd_limit, fds_nearest_limit, test)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Expectation, must_fail, may_fail, others_free, must_pass)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ShardInfo, index, total, planned_cells)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RepetitionPolicy, automatic, fixed, target, budget_s, min_timed_s,
                                                budget_ran_out, tie_margin, tie_margin_given, blocks,
                                                blocks_adaptive, blocks_min, blocks_max, blocks_ran)

void to_json(json& j, const Repetition& r) {
  json metrics = json::object();
  for (const auto& [k, v] : r.metrics) metrics[k] = number_or_null(v);  // a diverged loss is NaN: null
  j = json{{"index", r.index},
           {"status", r.status},
           {"status_message", r.status_message},
           {"verdict", r.verdict},
           {"as_expected", r.as_expected},
           {"expectation_message", r.expectation_message},
           {"wall_s", r.wall_s},
           {"checks", r.checks},
           {"metrics", metrics},
           {"series", r.series},
           {"workers", r.workers}};
  if (!r.processes.empty()) j["processes"] = r.processes;
  if (!r.sanitizer_report.empty()) j["sanitizer_report"] = r.sanitizer_report;
  if (!r.diagnosis.empty()) j["diagnosis"] = r.diagnosis;
  if (!r.notes.empty()) j["notes"] = r.notes;
  if (r.calibration) j["calibration"] = true;
  if (r.block >= 0) j["block"] = r.block;
  if (r.control) j["control"] = true;
}
void from_json(const json& j, Repetition& r) {
  r.index = j.at("index").get<int>();
  r.status = j.at("status").get<RunStatus>();
  r.status_message = j.at("status_message").get<std::string>();
  r.verdict = j.at("verdict").get<Verdict>();
  r.as_expected = j.at("as_expected").get<bool>();
  r.expectation_message = j.at("expectation_message").get<std::string>();
  r.wall_s = j.at("wall_s").get<double>();
  r.checks = j.at("checks").get<std::vector<Check>>();
  r.metrics.clear();
  for (const auto& [name, value] : j.at("metrics").items()) {
    if (value.is_number()) r.metrics[name] = value.get<double>();  // null: not finite when written
  }
  r.series = j.at("series").get<std::vector<Series>>();
  r.workers = j.at("workers").get<std::vector<WorkerRecord>>();
  r.processes = j.value("processes", std::vector<ProcessRecord>());
  r.sanitizer_report = j.value("sanitizer_report", std::string());
  r.diagnosis = j.value("diagnosis", std::string());
  r.notes = j.value("notes", std::vector<std::string>());
  r.calibration = j.value("calibration", false);
  r.block = j.value("block", -1);
  r.control = j.value("control", false);
}

std::string dump_json(const json& j, int indent) { return j.dump(indent, ' ', false, json::error_handler_t::replace); }

static json outcome_json(const CellOutcome& o) {
  json evidence = json::array();
  for (const Evidence& e : o.evidence) {
    evidence.push_back({{"check", e.check}, {"verdict", e.verdict}, {"message", e.message}, {"repetition", e.repetition}});
  }
  return json{{"kind", to_string(o.kind)}, {"summary", o.summary}, {"reason", o.reason}, {"evidence", evidence}};
}

void to_json(json& j, const CellResult& c) {
  json config = c.config;
  config.erase("repetition");
  j = json{{"id", c.config.id()},
           {"scenario", c.config.scenario},
           {"variant", c.config.variant},
           {"start", to_string(c.config.start)},
           {"procs", c.config.procs},
           {"kind", to_string(c.kind)},
           {"config", config},
           {"known_bug", c.known_bug},
           {"expected", c.expected},
           {"outcome", outcome_json(c.outcome())},  // written for readers; recomputed on load
           {"as_expected", c.as_expected()},
           {"repro", c.repro},
           {"repetitions", c.repetitions}};
}
// Schema 2 kept a few scenarios' options as fields of their own; they are config.options now.
void migrate_scenario_options(json& config) {
  json& options = config["options"];
  if (!options.is_object()) options = json::object();
  const auto move = [&](json& from, const char* field, const char* option) {
    const auto it = from.find(field);
    if (it == from.end()) return;
    if (it->is_boolean()) {
      options[option] = it->get<bool>() ? "on" : "off";
    } else if (it->is_number()) {
      options[option] = fmt::format("{}", it->get<double>());
    }
    from.erase(it);
  };
  if (config.contains("workload") && config["workload"].is_object()) {
    move(config["workload"], "average_every", "average-every");
    move(config["workload"], "sync_every", "sync-every");
  }
  move(config, "duration_s", "duration");
  move(config, "sharing_checks", "sharing-checks");
  // Files before 27 Nov 2026 kept a program cell's forced start method in a field of its own, beside
  // the variant "default"; it is the variant now ("own": the program's choice).
  const auto forced = config.find("mp_start");
  if (forced != config.end()) {
    const std::vector<std::string>& python = python_start_methods();
    const std::string m = forced->is_string() ? forced->get<std::string>() : forced->dump();
    if (!m.empty() && std::find(python.begin(), python.end(), m) == python.end()) {
      throw ResultsFormatError(fmt::format("results file: a cell has mp_start '{}' (fork, spawn, forkserver or none)", m));
    }
    if (config.value("variant", "") == "default") config["variant"] = m.empty() ? "own" : m;
    config.erase(forced);
  }
}

void from_json(const json& j, CellResult& c) {
  json config = j.at("config");
  config["repetition"] = 0;
  migrate_scenario_options(config);
  // A number that is not a whole number in range is refused here, not wrapped by the conversion
  // ("procs": 1e20 read as -2147483648).
  for (const char* field : {"procs", "hang_timeout_s", "deadline_s", "arena_mb"}) {
    const auto it = config.find(field);
    if (it == config.end()) continue;
    const bool whole = std::string_view(field) == "procs" || std::string_view(field) == "arena_mb";
    if (!it->is_number() || (whole && !it->is_number_integer()) || it->get<double>() < 0 || it->get<double>() > 1e9) {
      throw ResultsFormatError(fmt::format("results file: a cell's config has {} {}, not a {} in range", field, it->dump(),
                                           whole ? "whole number" : "number"));
    }
  }
  try {
    c.config = config.get<CellConfig>();
  } catch (const std::exception& e) {
    throw ResultsFormatError(fmt::format("results file: a cell's config is malformed: {}", e.what()));
  }
  c.kind = parse_scenario_kind(j.value("kind", "lock-only")).value_or(ScenarioKind::kLockOnly);
  c.known_bug = j.at("known_bug").get<bool>();
  c.expected = j.at("expected").get<Expectation>();
  c.repro = j.at("repro").get<std::string>();
  c.repetitions = j.at("repetitions").get<std::vector<Repetition>>();
}

namespace {
// What no honest results file holds: the reader refuses it rather than report nonsense.
void validate_loaded(const RunResult& run) {
  for (const CellResult& c : run.cells) {
    if (c.config.procs < 1 || c.config.procs > 64) {
      throw ResultsFormatError(fmt::format("results file: cell {} has procs {} (1..64)", c.config.id(), c.config.procs));
    }
    if (c.config.scenario.empty() || c.config.variant.empty()) throw ResultsFormatError("results file: a cell has no scenario or variant");
    // The values `run` and `exec` refuse are refused here too: `repro` would otherwise run them.
    if (c.config.stacks != "gdb" && c.config.stacks != "proc" && c.config.stacks != "auto") {
      throw ResultsFormatError(fmt::format("results file: cell {} has stacks '{}' (gdb, proc or auto)", c.config.id(), c.config.stacks));
    }
    for (const Repetition& r : c.repetitions) {
      if (r.index < 0 || r.workers.size() > 64) {
        throw ResultsFormatError(fmt::format("results file: cell {} has a malformed repetition", c.config.id()));
      }
    }
  }
  if (run.shard.total < 1 || run.shard.index < 1 || run.shard.index > run.shard.total) {
    throw ResultsFormatError(fmt::format("results file: shard {}/{} is not a shard", run.shard.index, run.shard.total));
  }
}
}  // namespace

json results_to_json(const RunResult& run) {
  json cells = json::array();
  int unexpected = 0, skipped = 0, interrupted = 0;
  for (const auto& c : run.cells) {
    cells.push_back(c);
    const Outcome o = c.outcome().kind;
    unexpected += o == Outcome::kUnexpected;
    skipped += o == Outcome::kSkipped;
    interrupted += o == Outcome::kInterrupted;
  }
  json j{{"format", kFormatTag},
         {"schema_version", run.schema_version},
         {"run_id", run.run_id},
         {"status", run.status},
         {"started_at", run.started_at},
         {"finished_at", run.finished_at},
         {"command", run.command},
         {"environment", run.environment},
         {"shard", run.shard},
         {"repetition_policy", run.repetitions},
         {"summary", {{"cells", run.cells.size()}, {"unexpected", unexpected}, {"skipped", skipped},
                      {"interrupted", interrupted}}},
         {"cells", cells}};
  if (!run.merged_from.empty()) j["merged_from"] = run.merged_from;
  if (!run.stop_reason.empty()) j["stop_reason"] = run.stop_reason;
  if (run.readable_results) j["readable_results"] = true;
  j["recommendation"] = recommendation_json(recommend(run));  // written for readers; recomputed on load
  return j;
}

RunResult results_from_json(const json& j) {
  if (!j.is_object() || j.value("format", "") != kFormatTag) {
    throw ResultsFormatError("not a sharebench results file (no \"format\": \"sharebench-results\")");
  }
  RunResult run;
  try {
    run.schema_version = j.at("schema_version").get<int>();
    if (run.schema_version > kResultsSchemaVersion || run.schema_version < 1) {
      throw ResultsFormatError(fmt::format("results schema version {} is not supported (this build reads 1..{})",
                                           run.schema_version, kResultsSchemaVersion));
    }
    run.schema_version = kResultsSchemaVersion;  // read into this version's model; written back as it
    run.run_id = j.at("run_id").get<std::string>();
    run.status = j.at("status").get<std::string>();
    run.started_at = j.at("started_at").get<std::string>();
    run.finished_at = j.at("finished_at").get<std::string>();
    run.stop_reason = j.value("stop_reason", std::string());
    run.command = j.at("command").get<std::vector<std::string>>();
    run.environment = j.at("environment").get<std::map<std::string, std::string>>();
    run.shard = j.value("shard", ShardInfo{});
    run.merged_from = j.value("merged_from", std::vector<std::string>{});
    if (j.contains("repetition_policy") && j["repetition_policy"].is_object()) {
      // Counts read into an int: a 1e308 or a -1 would become garbage ("ranked in -2147483648
      // blocks"), so each is held to what `run` accepts before it is converted.
      const json& policy = j["repetition_policy"];
      for (const auto& [key, lo, hi] : {std::tuple{"fixed", 1, 1000}, std::tuple{"blocks_min", 0, 1000},
                                        std::tuple{"blocks_max", 0, 1000}, std::tuple{"blocks_ran", -1, 1000}}) {
        if (!policy.contains(key)) continue;
        const json& v = policy[key];
        if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi) {
          throw ResultsFormatError(fmt::format("results file: repetition_policy.{} is {} ({}..{})", key, v.dump(), lo, hi));
        }
      }
      for (const char* key : {"target", "budget_s", "min_timed_s", "tie_margin"}) {
        if (policy.contains(key) && (!policy[key].is_number() || !std::isfinite(policy[key].get<double>()) ||
                                     policy[key].get<double>() < 0)) {
          throw ResultsFormatError(fmt::format("results file: repetition_policy.{} is {} (a number, 0 or more)", key,
                                               policy[key].dump()));
        }
      }
    }
    run.repetitions = j.value("repetition_policy", RepetitionPolicy{});
    run.readable_results = j.value("readable_results", false);
    run.cells = j.at("cells").get<std::vector<CellResult>>();
  } catch (const json::exception& e) {
    throw ResultsFormatError(fmt::format("results file is malformed: {}", e.what()));
  }
  validate_loaded(run);
  return run;
}

RunResult read_results_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ResultsFormatError(fmt::format("'{}' is a directory; give its results.json", path));
  }
  std::ifstream in(path);
  if (!in) throw ResultsFormatError(fmt::format("cannot read results file '{}'", path));
  json j;
  try {
    // Read whole, then parsed: nlohmann's stream adapter goes a character at a time.
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (in.bad()) throw std::runtime_error("the read failed");
    j = parse_json_bounded(text);
  } catch (const std::exception& e) {  // a parse error, or the stream failing underneath it
    throw ResultsFormatError(fmt::format("'{}' is not a readable JSON file: {}", path, e.what()));
  }
  try {
    return results_from_json(j);
  } catch (const ResultsFormatError& e) {  // say which file: a command may read several
    throw ResultsFormatError(fmt::format("'{}': {}", path, e.what()));
  }
}

}  // namespace sharebench
