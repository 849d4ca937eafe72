// CSV report: one row per cell and repetition, quoted per RFC 4180, for spreadsheets and scripts;
// the cell's outcome (the same word in every report) after its name, and the environment and the
// cell's reproduce command in the last columns.
#include <cmath>

#include <fmt/format.h>

#include "reports/report_writers.h"

namespace sharebench {

namespace {
std::string quote(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string metric(const Repetition& r, const char* name) {
  auto it = r.metrics.find(name);
  return it == r.metrics.end() ? "" : fmt::format("{:.6g}", it->second);
}

const char* kMetrics[] = {"steps_per_s", "samples_per_s", "heldout_loss", "serial_heldout_loss",
                          "lost_updates", "lock_wait_frac", "sync_frac", "lost_step_increments",
                          "launch_s_max", "run_s"};
}  // namespace

std::string render_csv(const RunResult& run) {
  std::string out = "run_id,cell,outcome,scenario,variant,start,procs,repetition,status,verdict,as_expected,wall_s";
  for (const char* m : kMetrics) out += fmt::format(",{}", m);
  out += ",failed_checks,cpu_model,cores,libtorch,blas,threads_per_worker,repro\n";
  auto env = [&](const char* key) {
    auto it = run.environment.find(key);
    return quote(it == run.environment.end() ? std::string() : it->second);
  };
  const std::string env_columns = fmt::format("{},{},{},{},{}", env("cpu_model"), env("cores"), env("libtorch"),
                                              env("blas"), env("threads_per_worker"));
  for (const auto& c : run.cells) {
    const std::string outcome(to_string(c.outcome().kind));
    for (const auto& r : c.repetitions) {
      std::string failed;
      for (const auto& ch : r.checks) {
        if (ch.verdict != Verdict::kPass && ch.verdict != Verdict::kNotExercised) failed += (failed.empty() ? "" : ";") + ch.name + "=" + to_string(ch.verdict);
      }
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{:.6g}", quote(run.run_id), quote(c.config.id()), outcome,
                         quote(c.config.scenario), quote(c.config.variant), to_string(c.config.start), c.config.procs,
                         r.index, to_string(r.status), to_string(r.verdict), r.as_expected ? "true" : "false", r.wall_s);
      for (const char* m : kMetrics) out += "," + metric(r, m);
      out += "," + quote(failed) + "," + env_columns + "," + quote(c.repro) + "\n";
    }
  }
  return out;
}

}  // namespace sharebench
