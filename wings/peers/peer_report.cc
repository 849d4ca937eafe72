// peer_report: the peers table, scaling and the gate's decision as text (peer_report.h).
#include "wings/peers/peer_report.h"

#include <fmt/format.h>

namespace sharebench {

namespace {
std::string rate(double v) {
  std::string digits = fmt::format("{:.0f}", v);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3) digits.insert(static_cast<std::size_t>(at), " ");
  return digits;
}

std::string ratio_text(const PeerSummary& s) {
  return s.rounds > 1 ? fmt::format("{:.2f}x ({:.2f}-{:.2f})", s.ratio, s.ratio_low, s.ratio_high)
                      : fmt::format("{:.2f}x", s.ratio);
}
}  // namespace

std::string render_peers_console(const PeerRun& run) {
  std::string out = fmt::format(
      "sharebench beside plain torch.multiprocessing: steps/s over all workers, medians of {} interleaved round(s), "
      "{} steps per worker\n\n",
      run.rounds_planned, run.steps);
  out += fmt::format("{:<24} {:<10} {:>5} {:>12} {:>12}  {}\n", "strategy", "start", "procs", "sharebench",
                     "torch.mp", "ratio (range over rounds)");
  for (const PeerRow& row : run.rows) {
    const PeerSummary s = summarise(row);
    if (s.rounds == 0) {
      out += fmt::format("{:<24} {:<10} {:>5} {:>12} {:>12}  not measured: {}\n", row.cell, row.start, row.procs, "-",
                         "-", row.error.empty() ? "no round ran" : row.error);
      continue;
    }
    out += fmt::format("{:<24} {:<10} {:>5} {:>12} {:>12}  {}{}\n", row.cell, row.start, row.procs, rate(s.sharebench),
                       rate(s.peer), ratio_text(s),
                       row.error.empty() ? "" : fmt::format(" ({} round(s) failed: {})",
                                                            static_cast<int>(row.rounds.size()) - s.rounds, row.error));
  }
  const auto scaling = scaling_one_to_two(run.rows);
  if (!scaling.empty()) {
    out += "\nscaling from 1 process to 2 (the median at 2 over the median at 1)\n";
    for (const PeerScaling& s : scaling) {
      out += fmt::format("  {:<24} {:<10} sharebench {:.2f}x, torch.mp {:.2f}x\n", s.cell, s.start, s.sharebench, s.peer);
    }
  }
  if (const double overall = overall_ratio(run.rows); overall > 0) {
    out += fmt::format("\noverall (geometric mean of the rows' ratios): {:.2f}x\n", overall);
  }
  if (run.interrupted) out += "interrupted: the rounds above are the ones that finished\n";
  return out;
}

std::string render_peers_markdown(const PeerRun& run) {
  std::string out = "| strategy | start | procs | sharebench steps/s | torch.multiprocessing steps/s | ratio | range over rounds |\n"
                    "|---|---|---|---|---|---|---|\n";
  for (const PeerRow& row : run.rows) {
    const PeerSummary s = summarise(row);
    if (s.rounds == 0) {
      out += fmt::format("| {} | {} | {} | — | — | not measured | {} |\n", row.cell, row.start, row.procs, row.error);
      continue;
    }
    out += fmt::format("| {} | {} | {} | {} | {} | {:.2f}x | {:.2f}-{:.2f} |\n", row.cell, row.start, row.procs,
                       rate(s.sharebench), rate(s.peer), s.ratio, s.ratio_low, s.ratio_high);
  }
  const auto scaling = scaling_one_to_two(run.rows);
  if (!scaling.empty()) {
    out += "\n| strategy | start | scaling 1 → 2, sharebench | scaling 1 → 2, torch.multiprocessing |\n|---|---|---|---|\n";
    for (const PeerScaling& s : scaling) {
      out += fmt::format("| {} | {} | {:.2f}x | {:.2f}x |\n", s.cell, s.start, s.sharebench, s.peer);
    }
  }
  return out;
}

std::string render_peer_gate(const GateDecision& d, const GateTolerances& tol, const std::string& baseline_path) {
  std::string out = fmt::format("\nagainst the baseline {} (a row fails below -{:.0f} %, the whole below -{:.0f} %)\n",
                                baseline_path, tol.row * 100, tol.overall * 100);
  for (const RowDecision& r : d.rows) {
    if (!r.note.empty() && !r.regressed) {
      out += fmt::format("  {:<36} {}\n", r.key, r.note);
    } else if (!r.note.empty()) {
      out += fmt::format("  {:<36} REGRESSED: {}\n", r.key, r.note);
    } else {
      out += fmt::format("  {:<36} {:.2f}x -> {:.2f}x ({:+.0f} %){}\n", r.key, r.baseline, r.candidate, r.change * 100,
                         r.regressed ? "  REGRESSED" : "");
    }
  }
  out += fmt::format("  {:<36} {:.2f}x -> {:.2f}x ({:+.0f} %){}\n", "overall", d.overall_baseline, d.overall_candidate,
                     d.overall_change * 100, d.overall_regressed ? "  REGRESSED" : "");
  out += d.regressed() ? "peers: a ratio fell beyond its tolerance\n" : "peers: no ratio fell beyond its tolerance\n";
  return out;
}

}  // namespace sharebench
