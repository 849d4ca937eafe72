// The soak's figures as text and as JSON (soak_report.h).
#include "wings/soak/soak_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "harness/results/results_json.h"

namespace sharebench {

std::string render_soak_console(const SoakFigures& f, double wall_s, const std::string& results_path) {
  std::string out = fmt::format("Soak: {} cells in {:.0f} s, {} as expected\n", f.cells, wall_s, f.as_expected);
  for (const auto& [kind, planned] : f.faults_planned) {
    const auto it = f.faults_injected.find(kind);
    if (kind == "none") {
      out += fmt::format("  no fault            {:>4} cells\n", planned);
    } else {
      out += fmt::format("  {:<19} {:>4} planned, {:>4} injected\n", kind, planned,
                         it == f.faults_injected.end() ? 0 : it->second);
    }
  }
  out += fmt::format("  hangs detected      {:>4}\n  workers killed      {:>4} (by faults and by hang teardowns)\n",
                     f.hangs, f.worker_deaths);
  out += fmt::format("  leftover processes  {:>4}{}\n", f.leftover_processes.size(),
                     f.leftover_processes.empty() ? "" : fmt::format(" (pids {})", fmt::join(f.leftover_processes, ", ")));
  out += fmt::format("  leftover /dev/shm   {:>4}{}\n", f.leftover_segments.size(),
                     f.leftover_segments.empty() ? "" : fmt::format(" ({})", fmt::join(f.leftover_segments, ", ")));
  for (const std::string& u : f.unexpected) out += fmt::format("  UNEXPECTED {}\n", u);
  out += fmt::format("{}\nresults: {}\n", f.ok() ? "Soak passed." : "Soak FAILED.", results_path);
  return out;
}

std::string render_soak_json(const SoakFigures& f, const SoakOptions& o, double wall_s) {
  return dump_json(nlohmann::json{{"cells", f.cells},
                        {"as_expected", f.as_expected},
                        {"seed", o.seed},
                        {"steps", o.steps},
                        {"hang_timeout_s", o.hang_timeout_s},
                        {"chaos_seed", o.chaos_seed},
                        {"faults_planned", f.faults_planned},
                        {"faults_injected", f.faults_injected},
                        {"hangs", f.hangs},
                        {"worker_deaths", f.worker_deaths},
                        {"unexpected", f.unexpected},
                        {"leftover_processes", f.leftover_processes},
                        {"leftover_segments", f.leftover_segments},
                        {"wall_s", wall_s},
                        {"passed", f.ok()}},
                   1) +
         "\n";
}
}  // namespace sharebench
