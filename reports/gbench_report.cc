// Google Benchmark JSON (json_schema_version 1), so google/benchmark's compare.py and the
// dashboards that read its format take sharebench runs as they are. One benchmark per cell and
// repetition: name and run_name are the cell id, an "iteration" is a training step, real_time
// and cpu_time are microseconds per step over all workers (1 / steps_per_s; the harness does not
// measure CPU time separately, so both carry the wall figure), and the other figures are counters.
// A cell that is not as expected carries error_occurred and error_message, as a benchmark that
// called SkipWithError does. A skipped or interrupted cell has no timing, and compare.py reads
// real_time from every benchmark it averages (its OVERALL_GEOMEAN: KeyError 'real_time'), so such
// a cell is listed in the context (sharebench_not_run) instead of among the benchmarks.
#include <cmath>

#include <nlohmann/json.hpp>

#include "reports/report_writers.h"
#include "harness/results/results_json.h"

namespace sharebench {

std::string render_gbench_json(const RunResult& run) {
  using nlohmann::json;
  auto env = [&](const char* key) {
    auto it = run.environment.find(key);
    return it == run.environment.end() ? std::string() : it->second;
  };
  json context{{"date", run.started_at},
               {"host_name", env("host")},
               {"executable", run.command.empty() ? "sharebench" : run.command.front()},
               {"num_cpus", std::atoi(env("cores").c_str())},
               {"mhz_per_cpu", 0},
               {"cpu_scaling_enabled", false},
               {"caches", json::array()},
               {"load_avg", json::array()},
               {"library_build_type", "release"},
               {"json_schema_version", 1},
               {"sharebench_run_id", run.run_id},
               {"libtorch", env("libtorch")},
               {"blas", env("blas")}};
  json benchmarks = json::array();
  json not_run = json::array();
  int family = 0;
  for (const auto& c : run.cells) {
    const CellOutcome outcome = c.outcome();
    if (outcome.kind == Outcome::kSkipped || outcome.kind == Outcome::kInterrupted) {
      not_run.push_back({{"name", c.config.id()}, {"sharebench_outcome", to_string(outcome.kind)},
                         {"reason", outcome.summary}});
      continue;
    }
    for (const auto& r : c.repetitions) {
      auto sps = r.metrics.find("steps_per_s");
      if (r.calibration || sps == r.metrics.end() || !(sps->second > 0)) continue;  // a pilot's figures do not count
      const double us_per_step = 1e6 / sps->second;
      json b{{"name", c.config.id()},
             {"family_index", family},
             {"per_family_instance_index", 0},
             {"run_name", c.config.id()},
             {"run_type", "iteration"},
             {"repetitions", static_cast<int>(c.repetitions.size())},
             {"repetition_index", r.index},
             {"threads", c.config.procs},
             {"iterations", static_cast<std::int64_t>(r.metrics.count("steps_total") ? r.metrics.at("steps_total") : 0)},
             {"real_time", us_per_step},
             {"cpu_time", us_per_step},
             {"time_unit", "us"},
             {"sharebench_outcome", to_string(outcome.kind)}};
      if (outcome.red()) {
        b["error_occurred"] = true;
        b["error_message"] = outcome.summary;
      }
      for (const auto& [k, v] : r.metrics) {
        if (std::isfinite(v)) b[k] = v;
      }
      benchmarks.push_back(b);
    }
    ++family;
  }
  if (!not_run.empty()) context["sharebench_not_run"] = not_run;
  return dump_json(json{{"context", context}, {"benchmarks", benchmarks}}, 2) + "\n";
}

}  // namespace sharebench
