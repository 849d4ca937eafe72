// `sharebench peers`: each strategy beside the plain torch.multiprocessing program a user would
// write for it (wings/peers/torch_mp_peer.py), on the same workload, steps and start method, round
// after round in one run, the order alternating each round so neither side always runs on a
// warmer machine. Prints each side's median, the ratio with its range over rounds and the scaling
// from one process to two; writes peers.json (after every round: an interrupt keeps what finished)
// and peers.md. With --baseline, judges the ratios against a stored run (bench/baselines/) and
// exits 1 on a drop beyond the tolerance: ci/gate's ratio check.
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "wings/peers/peers_command.h"

#include "cli/commands.h"
#include "harness/util/find_executable.h"
#include "harness/util/bounded_json.h"
#include "harness/env/environment.h"
#include "harness/launch/forkserver.h"
#include "harness/launch/launcher.h"
#include "wings/peers/peer_program.h"
#include "wings/peers/peer_ratios.h"
#include "harness/plan/matrix.h"
#include "harness/plan/resource_limits.h"
#include "harness/results/results_json.h"
#include "harness/results/run_directory.h"
#include "harness/util/interrupt.h"
#include "harness/util/terminal.h"
#include "harness/util/text.h"
#include "wings/peers/peer_report.h"

namespace sharebench::cli {

namespace {
struct PeersFlags {
  std::vector<std::string> scenarios, starts{"fork"}, procs{"1", "2"}, formats{"console"};
  int rounds = 3;
  std::string python, out, baseline;
  double peer_timeout_s = 300, row_tolerance = 25, overall_tolerance = 10;
  CellFlagValues cell_values;
};

// The cells to run, in rounds' order: every (strategy, start, procs) with a peer.
std::vector<PlannedCell> plan_peer_cells(PeersFlags& f, CellConfig base) {
  MatrixRequest request;
  for (const std::string& s : f.scenarios) {
    if (s.find('/') == std::string::npos || !peer_for(s.substr(0, s.find('/')), s.substr(s.find('/') + 1))) {
      std::vector<std::string> names;
      for (const PeerStrategy& p : peer_strategies()) names.push_back(p.cell);
      throw UsageError(fmt::format("--scenario {}: no peer program is written for it; these have one: {}", s,
                                   fmt::join(names, ", ")));
    }
  }
  if (f.scenarios.empty()) {
    for (const PeerStrategy& p : peer_strategies()) request.scenarios.push_back(p.cell);
  } else {
    request.scenarios = f.scenarios;
  }
  for (const std::string& s : f.starts) {
    if (s == "thread") throw UsageError("--start thread: a torch.multiprocessing program has no thread start method");
  }
  request.starts = f.starts;
  for (const std::string& p : f.procs) request.procs.push_back(static_cast<int>(parse_flag_int("--procs", p, 1, kMaxProcs)));
  if (base.workload.model != "mlp") throw UsageError("peers compare the standard MLP only (--model mlp)");
  request.base = std::move(base);
  return plan_matrix(request);
}

// One side of one round: sharebench's cell, one repetition.
double run_sharebench_side(const PlannedCell& cell, int round, std::string& error) {
  const Repetition rep = run_repetition(cell, round);
  const auto it = rep.metrics.find("steps_per_s");
  if (!rep.as_expected || rep.status != RunStatus::kCompleted || it == rep.metrics.end()) {
    error = fmt::format("sharebench: {}", rep.status_message.empty() ? rep.expectation_message : rep.status_message);
    if (error == "sharebench: ") error = "sharebench: the repetition did not end as expected";
    return 0;
  }
  return it->second;
}

std::string cell_name(const PlannedCell& c) { return c.config.scenario + "/" + c.config.variant; }
}  // namespace

static std::function<int()> add_peers_command(CLI::App& app, int argc, char** argv) {
  CLI::App* cmd = app.add_subcommand(
      "peers", "each strategy beside the plain torch.multiprocessing program a user would write for it, interleaved "
               "round by round; prints the ratios and the scaling from 1 process to 2");
  auto f = std::make_shared<PeersFlags>();
  cmd->add_option("--scenario", f->scenarios, "scenario/variant names with a peer, comma-separated (default: all)")
      ->delimiter(',');
  cmd->add_option("--start", f->starts, "start methods: fork, spawn, forkserver")->delimiter(',')->capture_default_str();
  cmd->add_option("--procs", f->procs, "process counts, comma-separated")->delimiter(',')->capture_default_str();
  cmd->add_option("--rounds", f->rounds, "rounds: each runs every cell once on each side")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_option("--python", f->python, "the Python with torch to run the peers (default: python3 on PATH)");
  cmd->add_option("--peer-timeout", f->peer_timeout_s, "seconds one peer run may take before it is killed")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  cmd->add_option("--baseline", f->baseline, "a peers.json to judge the ratios against (bench/baselines/)");
  cmd->add_option("--row-tolerance", f->row_tolerance, "with --baseline: % a row's ratio may fall")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  cmd->add_option("--overall-tolerance", f->overall_tolerance, "with --baseline: % the overall ratio may fall")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  cmd->add_option("--out", f->out, "write peers.json and peers.md into this directory (default: runs/peers-<time>)");
  cmd->add_option("--format", f->formats, "console (the table), json (peers.json to stdout), none")
      ->delimiter(',')
      ->check(one_of({"console", "json", "none"}))
      ->capture_default_str();
  CellConfig defaults;
  defaults.workload.steps = 2000;
  add_cell_flag_options(*cmd, f->cell_values, defaults, false);

  return [f, argc, argv, defaults]() -> int {
    CellConfig base = defaults;
    std::vector<PlannedCell> cells;
    std::optional<PeerRun> baseline;
    const std::string python = find_executable(f->python.empty() ? "python3" : f->python);
    try {
      apply_cell_flags(f->cell_values, base);
      cells = plan_peer_cells(*f, base);
      if (python.empty()) throw UsageError(fmt::format("--python {}: not found or not executable", f->python.empty() ? "python3" : f->python));
      if (!f->baseline.empty()) {
        std::ifstream in(f->baseline);
        if (!in) throw UsageError(fmt::format("--baseline {}: cannot be read", f->baseline));
        try {
          baseline = peer_run_from_json(parse_json_bounded(in));
        } catch (const std::exception& e) {
          throw UsageError(fmt::format("--baseline {}: {}", f->baseline, e.what()));
        }
      }
      ensure_resource_limits(resource_needs(cells));
    } catch (const UsageError& e) {
      return usage_error(e.what());
    }
    const std::string dir = absolute_out_dir(f->out.empty() ? "runs/peers-" + utc_now("%Y%m%d-%H%M%S") : f->out);
    const std::string script = dir + "/torch_mp_peer.py";
    try {
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      if (ec) throw std::runtime_error(fmt::format("cannot create it: {}", ec.message()));
      write_file_atomically(script, peer_program_source());
    } catch (const std::exception& e) {
      return usage_error(fmt::format("--out {}: {}", dir, e.what()));
    }
    // Before anything runs: a Python without torch is bad input, said in one line. Without --python,
    // python3 on PATH, then Debian's /usr/bin/python3 (a pyenv or venv python3 often has no torch).
    std::vector<std::string> candidates{python};
    if (f->python.empty() && python != "/usr/bin/python3" && ::access("/usr/bin/python3", X_OK) == 0) {
      candidates.push_back("/usr/bin/python3");
    }
    std::string chosen;
    std::vector<std::string> failures;
    for (const std::string& candidate : candidates) {
      CellConfig tiny = base;
      tiny.procs = 1;
      tiny.workload.steps = 20;
      const PeerProgramResult probe = run_peer_program(candidate, script, "inference", tiny, 120, dir + "/peer-probe.stderr");
      if (probe.error.empty()) {
        chosen = candidate;
        break;
      }
      failures.push_back(probe.error);
    }
    if (chosen.empty()) {
      return usage_error(fmt::format("the peer program needs a Python with torch (Debian: apt-get install python3-torch; "
                                     "or --python PATH): {}",
                                     fmt::join(failures, "; ")));
    }
    for (const PlannedCell& c : cells) {
      if (c.config.start == StartMethod::kForkserver) {
        ForkServer::instance().start();
        break;
      }
    }
    install_interrupt_handlers();
    run_runner_init_hook(base);

    PeerRun run;
    run.rounds_planned = f->rounds;
    run.steps = static_cast<int>(base.workload.steps);
    run.command.assign(argv, argv + argc);
    run.environment = collect_environment();
    run.environment["peer_python"] = chosen;
    run.started_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
    for (const PlannedCell& c : cells) {
      PeerRow row;
      row.cell = cell_name(c);
      row.peer = *peer_for(c.config.scenario, c.config.variant);
      row.start = std::string(to_string(c.config.start));
      row.procs = c.config.procs;
      run.rows.push_back(row);
    }
    const bool progress = terminal::is_interactive(stderr);
    const int total = f->rounds * static_cast<int>(cells.size());
    for (int round = 0; round < f->rounds && !interrupt_requested(); ++round) {
      for (std::size_t i = 0; i < cells.size() && !interrupt_requested(); ++i) {
        PeerRow& row = run.rows[i];
        const int done = round * static_cast<int>(cells.size()) + static_cast<int>(i);
        std::fprintf(stderr, "%speers: round %d/%d, %s under %s at %d process(es) (%d/%d)%s", progress ? "\r\033[K" : "",
                     round + 1, f->rounds, row.cell.c_str(), row.start.c_str(), row.procs, done + 1, total,
                     progress ? "" : "\n");
        PeerRound r;
        r.sharebench_first = (round + static_cast<int>(i)) % 2 == 0;
        std::string error;
        const auto run_peer = [&] {
          const PeerProgramResult p = run_peer_program(
              chosen, script, row.peer, cells[i].config, f->peer_timeout_s,
              fmt::format("{}/peer-{}-{}-{}.stderr", dir, row.peer, row.start, row.procs));
          r.peer = p.steps_per_s;
          if (!p.error.empty() && error.empty()) error = "torch.multiprocessing: " + p.error;
        };
        if (!r.sharebench_first) run_peer();
        if (!interrupt_requested()) r.sharebench = run_sharebench_side(cells[i], round, error);
        if (r.sharebench_first && !interrupt_requested()) run_peer();
        if (interrupt_requested()) break;
        if (!error.empty() && row.error.empty()) row.error = error;
        row.rounds.push_back(r);
      }
      write_file_atomically(dir + "/peers.json", dump_json(peer_run_to_json(run), 2));
    }
    if (progress) std::fputs("\r\033[K", stderr);
    ForkServer::instance().stop();
    run.interrupted = interrupt_requested();
    write_file_atomically(dir + "/peers.json", dump_json(peer_run_to_json(run), 2));
    write_file_atomically(dir + "/peers.md", render_peers_markdown(run));

    const GateTolerances tol{f->row_tolerance / 100, f->overall_tolerance / 100};
    std::optional<GateDecision> decision;
    if (baseline) decision = judge_against_baseline(*baseline, run, tol);
    for (const std::string& format : f->formats) {
      if (format == "console") {
        std::fputs(render_peers_console(run).c_str(), stdout);
        if (decision) std::fputs(render_peer_gate(*decision, tol, f->baseline).c_str(), stdout);
        std::printf("peers: %s/peers.json\n", dir.c_str());
      }
      if (format == "json") std::printf("%s\n", dump_json(peer_run_to_json(run), 2).c_str());
    }
    std::fflush(stdout);
    if (run.interrupted) return interrupted_exit_code();
    bool failed = false;
    for (const PeerRow& row : run.rows) failed |= !row.error.empty();
    if (decision && decision->regressed()) failed = true;
    return failed ? kExitUnexpected : kExitOk;
  };
}

Command peers_command() {
  return {"peers", [](CLI::App& a, const CommandLine& l) { return add_peers_command(a, l.argc, l.argv); },
          "0 every round measured (and, with --baseline, no ratio fell beyond its tolerance), 1 a side failed or a "
          "ratio fell"};
}

}  // namespace sharebench::cli
