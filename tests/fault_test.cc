// Faults and fork hazards against real workers: each injected fault (kill at a step, kill while
// holding a lock, a stall shorter and longer than the hang timeout, the ipc producer killed
// mid-stream) must end the cell by its deadline with a verdict that names what happened and
// nothing left behind; a fork with a thread holding a lock must hang under fork, with the
// stuck lock in the stacks, and be clean under spawn and forkserver.
#include <gtest/gtest.h>

#include <string>

#include "harness/faults/fault_injector.h"
#include "harness/runner/runner.h"
#include "harness/scenario/scenario.h"

namespace sharebench {
namespace {

PlannedCell faulted(const std::string& scenario, const std::string& variant, StartMethod m, int procs,
                    std::int64_t steps, const std::string& fault, double hang_timeout_s = 3) {
  PlannedCell c;
  c.config.scenario = scenario;
  c.config.variant = variant;
  c.config.start = m;
  c.config.procs = procs;
  c.config.stacks = "proc";  // gdb costs seconds per process; tests that want it say so
  c.config.workload.steps = steps;
  c.config.hang_timeout_s = hang_timeout_s;
  c.config.deadline_s = 60;
  c.config.fault = FaultPlan::parse(fault);
  c.expected = c.config.fault.active()
                   ? expectation_under_fault(c.config.fault, hang_timeout_s)
                   : ScenarioRegistry::instance().find(scenario)->find_variant(variant)->expectation_for(procs, m);
  return c;
}

const Check& check_named(const Repetition& rep, const std::string& name) {
  for (const auto& c : rep.checks) {
    if (c.name == name) return c;
  }
  throw std::out_of_range("no check " + name);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(FaultPlan, ParsesAndPrintsItsTextForm) {
  EXPECT_FALSE(FaultPlan::parse("").active());
  EXPECT_FALSE(FaultPlan::parse("none").active());
  const FaultPlan kill = FaultPlan::parse("kill:1@20");
  EXPECT_EQ(kill.kind, "kill");
  EXPECT_EQ(kill.rank, 1);
  EXPECT_EQ(kill.at_step, 20);
  EXPECT_EQ(kill.spec(), "kill:1@20");
  const FaultPlan stall = FaultPlan::parse("stall:0@5+2.5");
  EXPECT_EQ(stall.kind, "stall");
  EXPECT_DOUBLE_EQ(stall.hold_s, 2.5);
  EXPECT_EQ(FaultPlan::parse(stall.spec()).spec(), stall.spec());
  EXPECT_EQ(FaultPlan::parse("kill-holding-lock:3@1").kind, "kill-holding-lock");
  for (const char* bad : {"kill", "kill:1", "kill@3", "explode:1@2", "kill:-1@2", "kill:1@0", "kill:1@x",
                          "stall:1@5", "stall:1@5+0", "stall:1@5+abc", "stall:1@5+1e9", "kill:1@5+3"}) {
    EXPECT_THROW(parse_fault_plan(bad), std::invalid_argument) << bad;
  }
}

TEST(FaultPlan, TargetsAProgramsChildAtATime) {
  const FaultPlan first = FaultPlan::parse("kill:child@1");
  EXPECT_EQ(first.target, FaultTarget::kChild);
  EXPECT_EQ(first.child, 1);
  EXPECT_DOUBLE_EQ(first.at_s, 1);
  EXPECT_TRUE(first.targets_tree());
  EXPECT_EQ(first.spec(), "kill:child@1");
  const FaultPlan third = FaultPlan::parse("stall:child3@0.5+2");
  EXPECT_EQ(third.child, 3);
  EXPECT_DOUBLE_EQ(third.at_s, 0.5);
  EXPECT_DOUBLE_EQ(third.hold_s, 2);
  EXPECT_EQ(FaultPlan::parse(third.spec()).spec(), third.spec());
  EXPECT_EQ(FaultPlan::parse("kill:random@2").target, FaultTarget::kRandom);
  EXPECT_EQ(FaultPlan::parse("kill:random@2").spec(), "kill:random@2");
  EXPECT_FALSE(FaultPlan::parse("kill:1@20").targets_tree());
  for (const char* bad : {"kill:child@", "kill:child@-1", "kill:child@x", "kill:child0@1", "kill:childx@1",
                          "kill-holding-lock:child@1", "stall:child@1", "stall:child@1+0", "kill:child@1+2",
                          "kill:random3@1", "kill:child@1e9", "kill:child@nan"}) {
    EXPECT_THROW(parse_fault_plan(bad), std::invalid_argument) << bad;
  }
  // A program under a fault must end and leave nothing; how it ends (an error exit) is its own.
  // The scenario names its own checks of that (exec's: ScenarioInfo::MustPassUnderFault).
  const Expectation e = expectation_under_fault(FaultPlan::parse("kill:child@1"), 3, {"no-survivors", "shm-reclaimed"});
  EXPECT_TRUE(e.must_fail.empty());
  EXPECT_TRUE(e.others_free);
  for (const char* must : {"liveness", "fault-injected", "no-leaks", "no-survivors", "shm-reclaimed"}) {
    EXPECT_NE(std::find(e.must_pass.begin(), e.must_pass.end(), must), e.must_pass.end()) << must;
  }
}

TEST(FaultPlan, ExpectationHoldsTheHarnessChecksOnly) {
  const Expectation kill = expectation_under_fault(FaultPlan::parse("kill:1@2"), 3);
  EXPECT_EQ(kill.must_fail, std::vector<std::string>{"liveness"});
  EXPECT_TRUE(kill.others_free);
  Repetition rep;
  rep.checks = {Check{"liveness", Verdict::kFail, 1.0, ""}, Check{"lost-updates", Verdict::kUnknown, {}, ""},
                Check{"fault-injected", Verdict::kPass, 2.0, ""}, Check{"no-leaks", Verdict::kPass, 0.0, ""}};
  judge_against(kill, rep);
  EXPECT_TRUE(rep.as_expected) << rep.expectation_message;
  rep.checks.back().verdict = Verdict::kFail;  // a leak under a fault is still a failure
  judge_against(kill, rep);
  EXPECT_FALSE(rep.as_expected);
  // A stall shorter than the hang timeout must leave the cell clean.
  EXPECT_TRUE(expectation_under_fault(FaultPlan::parse("stall:1@2+1"), 3).must_fail.empty());
  EXPECT_FALSE(expectation_under_fault(FaultPlan::parse("stall:1@2+1"), 3).others_free);
  EXPECT_EQ(expectation_under_fault(FaultPlan::parse("stall:1@2+4"), 3).must_fail, std::vector<std::string>{"liveness"});
}

class Faults : public ::testing::TestWithParam<StartMethod> {};

TEST_P(Faults, KillAtAStepIsNamedInTheVerdict) {
  const Repetition rep = run_repetition(faulted("locked", "whole-step", GetParam(), 2, 400, "kill:1@30"), 0);
  const Check& liveness = check_named(rep, "liveness");
  EXPECT_EQ(liveness.verdict, Verdict::kFail);
  EXPECT_TRUE(contains(liveness.message, "signal 9")) << liveness.message;
  EXPECT_TRUE(contains(liveness.message, "[fault: rank 1 killed with SIGKILL at step")) << liveness.message;
  const Check& injected = check_named(rep, "fault-injected");
  EXPECT_EQ(injected.verdict, Verdict::kPass) << injected.message;
  EXPECT_GE(injected.value.value_or(0), 30);
  EXPECT_EQ(check_named(rep, "lost-updates").verdict, Verdict::kUnknown);  // indeterminate, not failed
  EXPECT_EQ(check_named(rep, "no-leaks").verdict, Verdict::kPass) << check_named(rep, "no-leaks").message;
  EXPECT_TRUE(rep.as_expected) << rep.expectation_message;
}

TEST_P(Faults, KillWhileHoldingTheLockLeavesItRecoverable) {
  const Repetition rep =
      run_repetition(faulted("locked", "whole-step", GetParam(), 2, 400, "kill-holding-lock:0@20"), 0);
  const Check& injected = check_named(rep, "fault-injected");
  ASSERT_EQ(injected.verdict, Verdict::kPass) << injected.message;
  EXPECT_TRUE(contains(injected.message, "while holding a lock")) << injected.message;
  // The survivor recovered the robust mutex and finished its steps: no hang.
  ASSERT_EQ(rep.workers.size(), 2u);
  EXPECT_TRUE(rep.workers[1].exited && rep.workers[1].exit_code == 0) << rep.status_message;
  EXPECT_EQ(rep.workers[1].steps, 400);
  EXPECT_NE(rep.status, RunStatus::kHang) << rep.status_message;
  const Check& recovered = check_named(rep, "owner-death-recovered");
  EXPECT_EQ(recovered.verdict, Verdict::kPass) << recovered.message;
  EXPECT_GE(recovered.value.value_or(0), 1.0);
  EXPECT_TRUE(rep.as_expected) << rep.expectation_message;
}

TEST_P(Faults, StallShorterThanTheHangTimeoutIsNotAHang) {
  const Repetition rep =
      run_repetition(faulted("locked", "whole-step", GetParam(), 2, 300, "stall:1@20+0.5", 3), 0);
  EXPECT_EQ(rep.status, RunStatus::kCompleted) << rep.status_message;
  EXPECT_EQ(check_named(rep, "fault-injected").verdict, Verdict::kPass);
  EXPECT_EQ(rep.verdict, Verdict::kPass) << rep.expectation_message;
  EXPECT_TRUE(rep.as_expected) << rep.expectation_message;
  EXPECT_GE(rep.wall_s, 0.5);
}

TEST_P(Faults, StallLongerThanTheHangTimeoutIsAHangThatNamesTheStall) {
  const Repetition rep =
      // A hang timeout of 3 s: a spawn launch of two LibTorch processes on a loaded 2-core machine
      // (the whole suite at -j2) can take more than 1.5 s, which reads as a hang at launch.
      run_repetition(faulted("locked", "whole-step", GetParam(), 2, 300, "stall:1@20+8", 3), 0);
  EXPECT_EQ(rep.status, RunStatus::kHang) << rep.status_message;
  const Check& liveness = check_named(rep, "liveness");
  EXPECT_TRUE(contains(liveness.message, "rank 1 stopped with SIGSTOP")) << liveness.message;
  EXPECT_LT(rep.wall_s, 8.0) << "the hang is declared by the timeout, not by waiting the stall out";
  EXPECT_TRUE(rep.as_expected) << rep.expectation_message;
}

TEST_P(Faults, ProducerKilledMidStreamEndsTheStreamAndReclaimsItsSegments) {
  const Repetition rep =
      run_repetition(faulted("ipc", "named-fresh", GetParam(), 3, 400, "kill:0@3"), 0);
  EXPECT_EQ(check_named(rep, "fault-injected").verdict, Verdict::kPass);
  const Check& lifetime = check_named(rep, "producer-lifetime");
  EXPECT_EQ(lifetime.verdict, Verdict::kFail);
  EXPECT_TRUE(contains(lifetime.message, "ProducerExited")) << lifetime.message;
  EXPECT_EQ(check_named(rep, "segments-reclaimed").verdict, Verdict::kPass);
  EXPECT_EQ(check_named(rep, "no-leaks").verdict, Verdict::kPass) << check_named(rep, "no-leaks").message;
  EXPECT_NE(rep.status, RunStatus::kHang) << rep.status_message;
  EXPECT_TRUE(rep.as_expected) << rep.expectation_message;
}

INSTANTIATE_TEST_SUITE_P(Detectors, Faults,
                         ::testing::Values(StartMethod::kFork, StartMethod::kSpawn, StartMethod::kForkserver),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// A thread of the parent holds a lock at fork().
class ForkHazard : public ::testing::TestWithParam<StartMethod> {};

TEST_P(ForkHazard, ThreadsHoldingALockHangForkOnlyAndTheStacksShowTheLock) {
  PlannedCell stuck = faulted("fork", "threads-holding-lock", GetParam(), 2, 100, "", 1.5);
  stuck.config.stacks = "gdb";
  const Repetition rep = run_repetition(stuck, 0);
  EXPECT_TRUE(rep.as_expected) << rep.expectation_message;
  if (GetParam() != StartMethod::kFork) {
    EXPECT_EQ(rep.verdict, Verdict::kPass) << rep.expectation_message;
    return;
  }
  EXPECT_EQ(rep.status, RunStatus::kHang) << rep.status_message;
  const Check& safe = check_named(rep, "fork-safe");
  EXPECT_EQ(safe.verdict, Verdict::kFail);
  EXPECT_EQ(safe.value, 2.0);
  EXPECT_TRUE(contains(safe.message, "runner thread held at fork()")) << safe.message;
  for (const WorkerRecord& w : rep.workers) {
    EXPECT_TRUE(contains(w.stall, "futex")) << w.stall;
    if (!w.stacks.empty()) EXPECT_TRUE(contains(w.stacks, "LoggingLibrary")) << w.stacks;
  }
  EXPECT_EQ(check_named(rep, "no-leaks").verdict, Verdict::kPass);

  const Repetition guarded = run_repetition(faulted("fork", "atfork-guarded", GetParam(), 2, 100, ""), 0);
  EXPECT_EQ(guarded.verdict, Verdict::kPass) << guarded.expectation_message;
}

INSTANTIATE_TEST_SUITE_P(Detectors, ForkHazard,
                         ::testing::Values(StartMethod::kFork, StartMethod::kSpawn, StartMethod::kForkserver),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace sharebench
