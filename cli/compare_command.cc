// `sharebench compare BASE CANDIDATE`: exit 1 on a significant slowdown past the threshold or on
// any correctness regression, 0 otherwise, 2 for a foreign or malformed file.
#include <cstdio>

#include "cli/commands.h"
#include "harness/results/results_json.h"
#include "harness/results/run_directory.h"
#include "reports/compare.h"

namespace sharebench::cli {

std::function<int()> add_compare_command(CLI::App& app) {
  struct Flags {
    std::string base, candidate, format = "md", out;
    CompareOptions options;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("compare", "compare a candidate run against a baseline run");
  cmd->add_option("base", f->base, "the baseline results.json")->required();
  cmd->add_option("candidate", f->candidate, "the candidate results.json")->required();
  cmd->add_option("--threshold", f->options.threshold, "relative slowdown that fails, if significant")
      ->capture_default_str()->check(CLI::Range(0.0, 10.0));
  cmd->add_option("--alpha", f->options.alpha, "significance level of the Mann-Whitney U test")
      ->capture_default_str()->check(CLI::Range(1e-9, 0.5));
  cmd->add_option("--format", f->format, "md or json")->check(CLI::IsMember({"md", "json"}))->capture_default_str();
  cmd->add_option("--out", f->out, "write the comparison to this file instead of stdout");
  return [f] {
    const std::optional<RunResult> base = load_results_or_report(f->base);
    if (!base) return kExitUsage;
    const std::optional<RunResult> candidate = load_results_or_report(f->candidate);
    if (!candidate) return kExitUsage;
    const Comparison c = compare_runs(*base, *candidate, f->options);
    const std::string text = f->format == "json" ? render_comparison_json(c, f->options)
                                                 : render_comparison_markdown(c, f->options);
    if (f->out.empty()) {
      std::fputs(text.c_str(), stdout);
    } else {
      try {
        write_file_atomically(f->out, text);
      } catch (const std::runtime_error& e) {
        return usage_error(e.what());
      }
    }
    return c.regressed() ? kExitUnexpected : kExitOk;
  };
}

}  // namespace sharebench::cli
