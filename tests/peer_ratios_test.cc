// peer_ratios: the arithmetic of `sharebench peers` (medians, ratios, scaling, the overall figure),
// the peers.json round trip, the gate's decision against a baseline, and the peer program's run
// (a real child process: a figure, a failure with its stderr, a deadline that kills the whole tree).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>

#include "wings/peers/peer_program.h"
#include "wings/peers/peer_ratios.h"
#include "wings/peers/peer_report.h"

namespace sharebench {
namespace {

PeerRow row(const std::string& cell, int procs, std::vector<std::pair<double, double>> rounds) {
  PeerRow r;
  r.cell = cell;
  r.peer = "p";
  r.start = "fork";
  r.procs = procs;
  for (const auto& [ours, theirs] : rounds) r.rounds.push_back(PeerRound{ours, theirs, true});
  return r;
}

TEST(PeerRatios, TheRatioIsTheMedianOfTheRoundsRatiosWithItsRange) {
  const PeerSummary s = summarise(row("hogwild/lock-free", 1, {{1200, 1000}, {900, 1000}, {1500, 1000}}));
  EXPECT_EQ(s.rounds, 3);
  EXPECT_DOUBLE_EQ(s.ratio, 1.2);
  EXPECT_DOUBLE_EQ(s.ratio_low, 0.9);
  EXPECT_DOUBLE_EQ(s.ratio_high, 1.5);
  EXPECT_DOUBLE_EQ(s.sharebench, 1200);
  EXPECT_DOUBLE_EQ(s.peer, 1000);
}

TEST(PeerRatios, AFailedSideLeavesItsRoundOut) {
  const PeerSummary s = summarise(row("x/y", 1, {{1200, 1000}, {0, 1000}, {1300, 0}}));
  EXPECT_EQ(s.rounds, 1);
  EXPECT_DOUBLE_EQ(s.ratio, 1.2);
  EXPECT_EQ(summarise(row("x/y", 1, {{0, 1000}})).rounds, 0);
}

TEST(PeerRatios, ScalingPairsOneProcessWithTwoOfTheSameStrategyAndStart) {
  std::vector<PeerRow> rows = {row("a/b", 1, {{100, 100}}), row("a/b", 2, {{190, 180}}), row("c/d", 2, {{50, 50}})};
  const auto scaling = scaling_one_to_two(rows);
  ASSERT_EQ(scaling.size(), 1u);
  EXPECT_EQ(scaling[0].cell, "a/b");
  EXPECT_DOUBLE_EQ(scaling[0].sharebench, 1.9);
  EXPECT_DOUBLE_EQ(scaling[0].peer, 1.8);
}

TEST(PeerRatios, OverallIsTheGeometricMeanOfTheRowsRatios) {
  std::vector<PeerRow> rows = {row("a/b", 1, {{200, 100}}), row("a/b", 2, {{50, 100}}), row("c/d", 1, {{0, 100}})};
  EXPECT_NEAR(overall_ratio(rows), 1.0, 1e-12);  // sqrt(2 * 0.5); the unmeasured row is left out
}

TEST(PeerRatios, PeersJsonRoundTrips) {
  PeerRun run;
  run.rows = {row("a/b", 1, {{1200, 1000}, {1100, 1000}}), row("a/b", 2, {{0, 900}})};
  run.rows[1].error = "sharebench: hang";
  run.rounds_planned = 2;
  run.steps = 2000;
  run.command = {"sharebench", "peers"};
  run.environment = {{"cores", "2"}};
  const nlohmann::json j = peer_run_to_json(run);
  EXPECT_EQ(j.at("kind"), "sharebench-peers");
  EXPECT_DOUBLE_EQ(j.at("rows").at(0).at("summary").at("ratio").get<double>(), 1.15);
  EXPECT_FALSE(j.at("rows").at(1).contains("summary"));
  const PeerRun back = peer_run_from_json(j);
  ASSERT_EQ(back.rows.size(), 2u);
  EXPECT_EQ(back.rows[1].error, "sharebench: hang");
  EXPECT_EQ(back.rows[0].rounds.size(), 2u);
  EXPECT_EQ(back.environment.at("cores"), "2");
  EXPECT_EQ(back.steps, 2000);
}

TEST(PeerRatios, AFileOfAnotherKindIsRefusedByName) {
  EXPECT_THROW(peer_run_from_json(nlohmann::json{{"kind", "sharebench-results"}}), std::runtime_error);
  EXPECT_THROW(peer_run_from_json(nlohmann::json{{"kind", "sharebench-peers"}, {"schema", 1}, {"rows", 3}}),
               std::runtime_error);
}

PeerRun run_of(std::vector<PeerRow> rows) {
  PeerRun r;
  r.rows = std::move(rows);
  return r;
}

TEST(PeerGate, AnUnchangedCandidatePasses) {
  const PeerRun base = run_of({row("a/b", 1, {{1200, 1000}}), row("a/b", 2, {{2200, 2000}})});
  const PeerRun same = run_of({row("a/b", 1, {{1150, 1000}}), row("a/b", 2, {{2300, 2000}})});
  const GateDecision d = judge_against_baseline(base, same, GateTolerances{0.25, 0.10});
  EXPECT_FALSE(d.regressed());
  ASSERT_EQ(d.rows.size(), 2u);
  EXPECT_NEAR(d.rows[0].change, 1.15 / 1.2 - 1, 1e-12);
}

TEST(PeerGate, ARowThatFellBeyondItsToleranceFails) {
  const PeerRun base = run_of({row("a/b", 1, {{1200, 1000}}), row("c/d", 1, {{1200, 1000}})});
  const PeerRun slow = run_of({row("a/b", 1, {{800, 1000}}), row("c/d", 1, {{1200, 1000}})});
  const GateDecision d = judge_against_baseline(base, slow, GateTolerances{0.25, 0.50});
  EXPECT_TRUE(d.regressed());
  EXPECT_TRUE(d.rows[0].regressed);
  EXPECT_FALSE(d.rows[1].regressed);
  EXPECT_FALSE(d.overall_regressed);
}

TEST(PeerGate, ASmallDropEverywhereFailsTheOverallRatio) {
  // A planted cost per step slows every strategy a little: no row alone crosses 25 %, the whole does.
  const PeerRun base = run_of({row("a/b", 1, {{1200, 1000}}), row("c/d", 1, {{1500, 1000}})});
  const PeerRun slow = run_of({row("a/b", 1, {{1020, 1000}}), row("c/d", 1, {{1275, 1000}})});
  const GateDecision d = judge_against_baseline(base, slow, GateTolerances{0.25, 0.10});
  EXPECT_FALSE(d.rows[0].regressed);
  EXPECT_TRUE(d.overall_regressed);
  EXPECT_NEAR(d.overall_change, -0.15, 1e-9);
  EXPECT_TRUE(d.regressed());
}

TEST(PeerGate, AFailedRowIsARegressionAndMissingRowsAreNamedNotJudged) {
  PeerRow failed = row("a/b", 1, {{0, 1000}});
  failed.error = "sharebench: hang";
  const PeerRun base = run_of({row("a/b", 1, {{1200, 1000}}), row("e/f", 1, {{1000, 1000}})});
  const PeerRun cand = run_of({failed, row("g/h", 1, {{1000, 1000}})});
  const GateDecision d = judge_against_baseline(base, cand, GateTolerances{});
  ASSERT_EQ(d.rows.size(), 3u);
  EXPECT_TRUE(d.rows[0].regressed);
  EXPECT_NE(d.rows[0].note.find("hang"), std::string::npos);
  EXPECT_FALSE(d.rows[1].regressed);
  EXPECT_NE(d.rows[1].note.find("not in the baseline"), std::string::npos);
  EXPECT_NE(d.rows[2].note.find("not run"), std::string::npos);
  const std::string text = render_peer_gate(d, GateTolerances{}, "base.json");
  EXPECT_NE(text.find("REGRESSED"), std::string::npos);
}

TEST(PeerStrategies, EveryPeerNameIsOneThePeerProgramKnows) {
  const std::string source = peer_program_source();
  for (const PeerStrategy& s : peer_strategies()) {
    EXPECT_NE(source.find("\"" + s.peer + "\""), std::string::npos) << s.peer;
    const auto slash = s.cell.find('/');
    EXPECT_EQ(peer_for(s.cell.substr(0, slash), s.cell.substr(slash + 1)), s.peer);
  }
  EXPECT_FALSE(peer_for("ipc", "fd-reuse").has_value());
}

// A stand-in for Python: a shell script that prints, fails or hangs as told by its first argument
// (the script path the runner passes).
std::string fake_python(const std::string& dir, const std::string& body) {
  const std::string path = dir + "/fake-python";
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

std::string temp_dir() {
  char tmpl[] = "/tmp/peer-program-test-XXXXXX";
  return ::mkdtemp(tmpl);
}

TEST(PeerProgram, ReadsTheFigureFromTheLastLine) {
  const std::string dir = temp_dir();
  const std::string py = fake_python(dir, "echo starting; echo '{\"steps_per_s\": 1234.5}'");
  CellConfig cell;
  const PeerProgramResult r = run_peer_program(py, "script.py", "hogwild", cell, 30, dir + "/err");
  EXPECT_EQ(r.error, "");
  EXPECT_DOUBLE_EQ(r.steps_per_s, 1234.5);
}

TEST(PeerProgram, AFailureCarriesItsStatusAndTheLastLinesOfStderr) {
  const std::string dir = temp_dir();
  const std::string py = fake_python(dir, "echo 'ModuleNotFoundError: No module named torch' >&2; exit 1");
  CellConfig cell;
  const PeerProgramResult r = run_peer_program(py, "script.py", "hogwild", cell, 30, dir + "/err");
  EXPECT_EQ(r.steps_per_s, 0);
  EXPECT_NE(r.error.find("status 1"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("No module named torch"), std::string::npos) << r.error;
}

TEST(PeerProgram, TheDeadlineKillsTheWholeTreeAndReturns) {
  const std::string dir = temp_dir();
  // The program leaves a grandchild that would outlive it, then hangs itself.
  const std::string py = fake_python(dir, "sleep 300 & echo $! > " + dir + "/grandchild; sleep 300");
  CellConfig cell;
  const auto t0 = std::chrono::steady_clock::now();
  const PeerProgramResult r = run_peer_program(py, "script.py", "hogwild", cell, 1, dir + "/err");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10);
  EXPECT_NE(r.error.find("killed"), std::string::npos) << r.error;
  pid_t grandchild = 0;
  std::ifstream(dir + "/grandchild") >> grandchild;
  ASSERT_GT(grandchild, 0);
  // Gone, or a zombie waiting for whoever inherited it: not running either way.
  const auto running = [&] {
    std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
    std::string pid, comm, state;
    if (!(stat >> pid >> comm >> state)) return false;
    return state != "Z";
  };
  bool gone = false;
  for (int i = 0; i < 50 && !gone; ++i) {
    gone = !running();
    if (!gone) ::usleep(100'000);
  }
  EXPECT_TRUE(gone) << "the program's child outlived the deadline";
}

}  // namespace
}  // namespace sharebench
