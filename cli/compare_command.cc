// `sharebench compare BASE CANDIDATE`: per cell, regression, improvement, no change or inconclusive
// for throughput, convergence and lock wait (reports/compare.h). Exit codes:
//   0  no regression (inconclusive cells are said, and do not fail unless --strict)
//   1  a regression: a decided slowdown past the threshold, or a correctness regression
//   2  bad input: a foreign or malformed file, files that share no cell, a bad threshold
//   4  with --strict, some change was inconclusive (and none regressed)
#include <cstdio>

#include <fmt/format.h>

#include "cli/commands.h"
#include "harness/results/results_json.h"
#include "harness/results/run_directory.h"
#include "harness/plan/cell_flags.h"
#include "reports/compare.h"

namespace sharebench::cli {

inline constexpr int kExitInconclusive = 4;

std::function<int()> add_compare_command(CLI::App& app) {
  struct Flags {
    std::string base, candidate, format = "md", out, threshold = "0.05", lock_wait = "0.05", alpha = "0.05";
    bool strict = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("compare", "compare a candidate run against a baseline run");
  cmd->add_option("base", f->base, "the baseline results.json")->required();
  cmd->add_option("candidate", f->candidate, "the candidate results.json")->required();
  cmd->add_option("--threshold", f->threshold, "relative throughput change that matters (0.001..10)")->capture_default_str();
  cmd->add_option("--lock-wait-threshold", f->lock_wait, "lock-wait share change that matters, as a fraction (0.001..1)")
      ->capture_default_str();
  cmd->add_option("--alpha", f->alpha, "1 - the confidence of the intervals (0.001..0.5)")->capture_default_str();
  cmd->add_flag("--strict", f->strict, "exit 4 when a change is inconclusive (too few repetitions or too much spread)");
  cmd->add_option("--format", f->format, "md or json")->check(one_of({"md", "json"}))->capture_default_str();
  cmd->add_option("--out", f->out, "write the comparison to this file instead of stdout");
  return [f] {
    CompareOptions options;
    try {
      options.threshold = parse_flag_double("--threshold", f->threshold, 0.001, 10);
      options.lock_wait_threshold = parse_flag_double("--lock-wait-threshold", f->lock_wait, 0.001, 1);
      options.alpha = parse_flag_double("--alpha", f->alpha, 0.001, 0.5);
    } catch (const UsageError& e) {
      return usage_error(e.what());
    }
    const std::optional<RunResult> base = load_results_or_report(f->base);
    if (!base) return kExitUsage;
    const std::optional<RunResult> candidate = load_results_or_report(f->candidate);
    if (!candidate) return kExitUsage;
    const Comparison c = compare_runs(*base, *candidate, options);
    if (c.paired_cells == 0) {
      return usage_error(fmt::format("{} and {} share no cell: nothing to compare", f->base, f->candidate));
    }
    const std::string text = f->format == "json" ? render_comparison_json(c, options)
                                                 : render_comparison_markdown(c, options);
    if (f->out.empty()) {
      std::fputs(text.c_str(), stdout);
    } else {
      try {
        write_file_atomically(f->out, text);
      } catch (const std::runtime_error& e) {
        return usage_error(e.what());
      }
    }
    if (c.regressed()) return kExitUnexpected;
    return f->strict && c.inconclusive() ? kExitInconclusive : kExitOk;
  };
}

}  // namespace sharebench::cli
