// Console report writer.
#include "reports/console_report.h"

#include <cmath>
#include <optional>

#include <algorithm>
#include <map>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/env/environment.h"
#include "reports/report_writers.h"

namespace sharebench {

namespace {
// Stack lines shown per worker on the console; the results file keeps them all.
constexpr int kMaxStackLines = 40;

// The mean of a metric over a cell's repetitions, or nothing.
std::optional<double> mean_metric(const CellResult& c, const std::string& name) {
  const double v = cell_mean(c, name);
  return std::isnan(v) ? std::nullopt : std::optional<double>(v);
}

std::string fixed(const std::optional<double>& v, int precision) {
  return v ? fmt::format("{:.{}f}", *v, precision) : "-";
}

std::string paint(bool colour, const char* code, const std::string& text) {
  return colour ? fmt::format("\033[{}m{}\033[0m", code, text) : text;
}
}  // namespace

std::string render_console(const RunResult& run, bool colour) {
  std::string out;
  out += fmt::format("{:<44} {:<11} {:>9} {:>10} {:>15} {:>9} {:>9}\n", "CELL", "RESULT", "STEPS/S",
                     "SAMPLES/S", "LOSS (SERIAL)", "LOCKWAIT", "LAUNCH");
  int unexpected = 0, caught = 0, skipped = 0;
  for (const CellResult& c : run.cells) {
    const bool ok = c.as_expected();
    const bool is_skipped = !c.repetitions.empty() && std::all_of(c.repetitions.begin(), c.repetitions.end(), [](auto& r) {
      return r.status == RunStatus::kSkipped;
    });
    std::string result;
    if (is_skipped) {
      result = paint(colour, "33", fmt::format("{:<11}", "skipped"));
      ++skipped;
    } else if (!ok) {
      result = paint(colour, "1;31", fmt::format("{:<11}", "UNEXPECTED"));
      ++unexpected;
    } else if (!c.expected.clean()) {
      result = paint(colour, "36", fmt::format("{:<11}", "bug caught"));
      ++caught;
    } else {
      result = paint(colour, "32", fmt::format("{:<11}", "ok"));
    }
    const auto loss = mean_metric(c, "heldout_loss");
    const auto serial = mean_metric(c, "serial_heldout_loss");
    std::string loss_text = loss ? fmt::format("{:.3f} ({})", *loss, fixed(serial, 3)) : "-";
    const auto wait = mean_metric(c, "lock_wait_frac");
    const auto launch = mean_metric(c, "launch_s_max");
    out += fmt::format("{:<44} {} {:>9} {:>10} {:>15} {:>9} {:>9}\n", c.config.id(), result,
                       fixed(mean_metric(c, "steps_per_s"), 0), fixed(mean_metric(c, "samples_per_s"), 0),
                       loss_text, wait ? fmt::format("{:.0f}%", *wait * 100) : "-",
                       launch ? fmt::format("{:.0f} ms", *launch * 1000) : "-");
  }

  for (const CellResult& c : run.cells) {
    if (c.as_expected()) continue;
    out += fmt::format("\n{} {}\n", paint(colour, "1;31", "UNEXPECTED"), c.config.id());
    for (const auto& r : c.repetitions) {
      if (r.as_expected) continue;
      out += fmt::format("  repetition {}: {}\n", r.index, r.expectation_message);
      if (r.status != RunStatus::kCompleted) out += fmt::format("    {}: {}\n", to_string(r.status), r.status_message);
      for (const auto& ch : r.checks) {
        if (ch.verdict != Verdict::kPass) out += fmt::format("    {} {}: {}\n", to_string(ch.verdict), ch.name, ch.message);
      }
      for (const auto& w : r.workers) {
        if (!w.stall.empty()) out += fmt::format("    rank {} stuck: {}\n", w.rank, w.stall);
        if (!w.stacks.empty()) {
          out += fmt::format("    rank {} stacks (gdb):\n", w.rank);
          std::size_t start = 0;
          int lines = 0;
          while (start < w.stacks.size() && lines < kMaxStackLines) {
            const std::size_t end = w.stacks.find('\n', start);
            out += "      " + w.stacks.substr(start, end - start) + "\n";
            start = end == std::string::npos ? w.stacks.size() : end + 1;
            ++lines;
          }
          if (start < w.stacks.size()) out += "      ... (all of it in results.json)\n";
        }
        if (!w.error.empty()) out += fmt::format("    rank {} said: {}\n", w.rank, w.error);
      }
    }
    out += fmt::format("  reproduce: {}\n", c.repro);
  }

  // Why each skipped cell was skipped, once per distinct reason.
  std::map<std::string, std::vector<std::string>> skip_reasons;
  for (const CellResult& c : run.cells) {
    for (const auto& r : c.repetitions) {
      if (r.status == RunStatus::kSkipped) {
        skip_reasons[r.status_message].push_back(c.config.id());
        break;
      }
    }
  }
  for (const auto& [reason, ids] : skip_reasons) {
    out += fmt::format("\n{} {}: {}\n", paint(colour, "33", "skipped"), fmt::join(ids, ", "), reason);
  }

  out += fmt::format("\n{} cells: {} as expected ({} planted bugs caught, {} skipped), {} unexpected. Run {}.\n",
                     run.cells.size(), run.cells.size() - unexpected, caught, skipped, unexpected, run.status);
  const auto cores = run.environment.count("cores") ? std::atoi(run.environment.at("cores").c_str()) : 0;
  int max_procs = 0;
  for (const auto& c : run.cells) max_procs = std::max(max_procs, c.config.procs * static_cast<int>(c.config.workload.threads_per_worker));
  if (cores > 0 && max_procs > cores) {
    out += fmt::format("warning: up to {} worker threads on {} cores: throughput above {} processes measures "
                       "oversubscription, not scaling.\n", max_procs, cores, cores);
  }
  const bool any_thread_cells = std::any_of(run.cells.begin(), run.cells.end(),
                                            [](const CellResult& c) { return c.config.start == StartMethod::kThread; });
  if (any_thread_cells && blas_unsafe_for_threads(run.environment)) {
    out += fmt::format("warning: this BLAS ({}) is not safe for concurrent calls: cells under --start thread may "
                       "compute wrong results. Install libopenblas0-pthread (ci/setup does).\n",
                       run.environment.at("blas_config"));
  }
  auto env = [&](const char* key) {
    auto it = run.environment.find(key);
    return it == run.environment.end() ? std::string("?") : it->second;
  };
  out += fmt::format("Machine: {} ({} cores), LibTorch {}, {} intra-op thread(s) per worker\nBLAS: {}\n",
                     env("cpu_model"), env("cores"), env("libtorch"), env("threads_per_worker"), env("blas"));
  return out;
}

}  // namespace sharebench
