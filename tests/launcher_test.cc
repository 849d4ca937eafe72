// Launchers and the watchdog, with real processes, for every start method: N workers run and
// report, exit codes and signals come back per rank, a hang is declared and torn down, and no
// worker process outlives its cell.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/mman.h>

#include "harness/proc/leak_check.h"
#include "harness/proc/sanitizer_reports.h"
#include "tests/test_scenarios.h"

#include "harness/detectors/detector.h"
#include "harness/runner/runner.h"

namespace sharebench {
namespace {

PlannedCell probe(const std::string& variant, StartMethod m, int procs) {
  PlannedCell c;
  c.config.scenario = "probe";
  c.config.variant = variant;
  c.config.start = m;
  c.config.procs = procs;
  c.config.stacks = "proc";  // gdb costs seconds per process; tests that want it say so
  c.config.hang_timeout_s = 1.5;
  c.config.deadline_s = 30;
  return c;
}

bool process_gone(pid_t pid) { return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH; }

void expect_no_survivors(const Repetition& rep) {
  for (const auto& w : rep.workers) EXPECT_TRUE(process_gone(w.pid)) << "rank " << w.rank << " pid " << w.pid;
}

class EveryStartMethod : public ::testing::TestWithParam<StartMethod> {};

TEST_P(EveryStartMethod, RunsEveryWorkerToCompletion) {
  const Repetition rep = run_repetition(probe("ok", GetParam(), 3), 0);
  EXPECT_EQ(rep.status, RunStatus::kCompleted) << rep.status_message;
  EXPECT_EQ(rep.verdict, Verdict::kPass);
  ASSERT_EQ(rep.workers.size(), 3u);
  for (const auto& w : rep.workers) {
    EXPECT_TRUE(w.exited);
    EXPECT_EQ(w.exit_code, 0);
    EXPECT_EQ(w.steps, 5);
    EXPECT_GT(w.pid, 0);
  }
  EXPECT_EQ(rep.metrics.at("steps_total"), 15);
  expect_no_survivors(rep);
}

TEST_P(EveryStartMethod, DeclaresAHangAndTearsItDown) {
  const Repetition rep = run_repetition(probe("hang", GetParam(), 2), 0);
  EXPECT_EQ(rep.status, RunStatus::kHang);
  EXPECT_NE(rep.status_message.find("rank(s) 0"), std::string::npos) << rep.status_message;
  EXPECT_NE(rep.workers.at(0).stall.find("running at step 0"), std::string::npos) << rep.workers.at(0).stall;
  EXPECT_LT(rep.wall_s, 10);
  expect_no_survivors(rep);
}

INSTANTIATE_TEST_SUITE_P(Launchers, EveryStartMethod,
                         ::testing::Values(StartMethod::kFork, StartMethod::kSpawn, StartMethod::kForkserver,
                                           StartMethod::kThread),
                         [](const auto& info) { return std::string(to_string(info.param)); });

class ProcessStartMethod : public ::testing::TestWithParam<StartMethod> {};

TEST_P(ProcessStartMethod, ReportsExitCodesPerRank) {
  const Repetition rep = run_repetition(probe("exit-code", GetParam(), 3), 0);
  EXPECT_EQ(rep.status, RunStatus::kWorkerFailed);
  for (const auto& w : rep.workers) {
    EXPECT_TRUE(w.exited);
    EXPECT_EQ(w.exit_code, w.rank + 3);
  }
  expect_no_survivors(rep);
}

TEST_P(ProcessStartMethod, ReportsASignalAndReleasesTheSiblings) {
  const Repetition rep = run_repetition(probe("signal", GetParam(), 3), 0);
  EXPECT_EQ(rep.status, RunStatus::kWorkerFailed);
  EXPECT_FALSE(rep.workers.at(1).exited);
  EXPECT_EQ(rep.workers.at(1).signal, SIGKILL);
  EXPECT_NE(rep.status_message.find("rank 1: signal 9"), std::string::npos) << rep.status_message;
  expect_no_survivors(rep);
}

// Launching is judged by its own clock: a worker that blocks before it attaches is a hang after the
// hang timeout, one that keeps using CPU (as loading LibTorch does) only at the launch deadline,
// and the stall text, taken before the workers are stopped, says they were launching.
TEST_P(ProcessStartMethod, ALaunchThatBlocksIsAHangAndOneThatSpinsMeetsTheLaunchDeadline) {
  const Repetition blocked = run_repetition(probe("launch-blocks", GetParam(), 2), 0);
  EXPECT_EQ(blocked.status, RunStatus::kHang);
  EXPECT_NE(blocked.status_message.find("while workers were still launching"), std::string::npos)
      << blocked.status_message;
  expect_no_survivors(blocked);

  const Repetition spun = run_repetition(probe("launch-spins", GetParam(), 2), 0);
  EXPECT_EQ(spun.status, RunStatus::kHang);
  EXPECT_NE(spun.status_message.find("still launching after the launch deadline of"), std::string::npos)
      << spun.status_message;
  EXPECT_NE(spun.workers.at(0).stall.find("launching at step 0"), std::string::npos) << spun.workers.at(0).stall;
  // Past the hang timeout (1.5 s), but no later than the launch deadline (hang timeout + 4 x the
  // expected launch) allows, with room for a loaded machine.
  EXPECT_GT(spun.wall_s, 1.5);
  EXPECT_LT(spun.wall_s, 30);
  expect_no_survivors(spun);
}

INSTANTIATE_TEST_SUITE_P(Launchers, ProcessStartMethod,
                         ::testing::Values(StartMethod::kFork, StartMethod::kSpawn, StartMethod::kForkserver),
                         [](const auto& info) { return std::string(to_string(info.param)); });

const Check& no_leaks(const Repetition& rep) {
  for (const auto& c : rep.checks) {
    if (c.name == "no-leaks") return c;
  }
  throw std::out_of_range("no no-leaks check");
}

TEST_P(EveryStartMethod, LeavesNothingBehind) {
  for (const char* variant : {"ok", "hang"}) {
    const Repetition rep = run_repetition(probe(variant, GetParam(), 2), 0);
    EXPECT_EQ(no_leaks(rep).verdict, Verdict::kPass) << variant << ": " << no_leaks(rep).message;
  }
}

// A worker that calls exit() runs no static destructor of the runner's program: the forkserver
// (whose handle the fork child inherits) keeps serving every later cell.
TEST(WorkerExit, ExitInsideWorkNeverDisturbsTheForkserverOrLaterCells) {
  for (StartMethod m : {StartMethod::kFork, StartMethod::kForkserver, StartMethod::kSpawn}) {
    const Repetition rep = run_repetition(probe("calls-exit", m, 2), 0);
    EXPECT_EQ(rep.status, RunStatus::kWorkerFailed) << to_string(m);
    ASSERT_EQ(rep.workers.size(), 2u);
    EXPECT_NE(rep.workers[1].error.find("rank 1 called exit(0) at step 2"), std::string::npos)
        << to_string(m) << ": " << rep.workers[1].error;
    for (StartMethod later : {StartMethod::kForkserver, StartMethod::kFork}) {
      const Repetition next = run_repetition(probe("ok", later, 2), 0);
      EXPECT_EQ(next.status, RunStatus::kCompleted) << "after exit() under " << to_string(m) << ", "
                                                    << to_string(later) << ": " << next.status_message;
      EXPECT_TRUE(next.as_expected) << next.expectation_message;
    }
  }
}

// A worker process that finished its work and then hangs on its way out is a hang, caught at the
// hang timeout (not left to the cell's deadline).
TEST(WorkerExit, AWorkerProcessThatHangsAfterItsWorkIsAHang) {
  for (StartMethod m : {StartMethod::kFork, StartMethod::kSpawn, StartMethod::kForkserver}) {
    PlannedCell c = probe("hangs-on-the-way-out", m, 2);
    c.config.hang_timeout_s = 1;
    c.config.deadline_s = 30;
    const Repetition rep = run_repetition(c, 0);
    EXPECT_EQ(rep.status, RunStatus::kHang) << to_string(m) << ": " << rep.status_message;
    EXPECT_LT(rep.wall_s, 15) << to_string(m);
    ASSERT_EQ(rep.workers.size(), 2u);
    EXPECT_NE(rep.workers[0].stall.find("done, exiting at step 5"), std::string::npos) << rep.workers[0].stall;
  }
}

// setup() and check() run under the deadline too: one that never returns ends its cell as
// setup-timeout, saying where it is stuck, and the next cells run as usual.
TEST(RunnerCalls, ASetupOrCheckThatBlocksEndsItsCellAndTheRunGoesOn) {
  for (const char* variant : {"setup-blocks", "check-blocks"}) {
    PlannedCell c = probe(variant, StartMethod::kFork, 2);
    c.config.hang_timeout_s = 1;
    c.config.deadline_s = 2;
    const auto t0 = std::chrono::steady_clock::now();
    const Repetition rep = run_repetition(c, 0);
    const double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(rep.status, RunStatus::kSetupTimeout) << variant << ": " << rep.status_message;
    EXPECT_LT(took_s, 15) << variant;
    const std::string what = std::string(variant) == "setup-blocks" ? "probe's setup() did not return within 2 s"
                                                                     : "probe's check() did not return within 2 s";
    EXPECT_NE(rep.status_message.find(what), std::string::npos) << rep.status_message;
    EXPECT_NE(rep.status_message.find("stuck: tid "), std::string::npos) << rep.status_message;
    EXPECT_EQ(rep.verdict, Verdict::kFail) << variant;
    for (StartMethod later : {StartMethod::kFork, StartMethod::kForkserver, StartMethod::kSpawn}) {
      const Repetition next = run_repetition(probe("ok", later, 2), 0);
      EXPECT_EQ(next.status, RunStatus::kCompleted) << "after " << variant << ", " << to_string(later) << ": "
                                                    << next.status_message;
      EXPECT_TRUE(next.as_expected) << next.expectation_message;
    }
  }
}

// A worker that dies by std::terminate: the reason it printed reaches the results, and the death
// names its step.
TEST_P(EveryStartMethod, AWorkerDeathCarriesItsStderrAndStep) {
  const Repetition rep = run_repetition(probe("terminates", GetParam(), 2), 0);
  EXPECT_EQ(rep.status, RunStatus::kWorkerFailed);
  if (GetParam() == StartMethod::kThread) {
    // Threads share their host: the abort ends every rank, and the one stderr is not split per rank.
    EXPECT_NE(rep.status_message.find("signal 6 (Aborted)"), std::string::npos) << rep.status_message;
    for (const auto& w : rep.workers) EXPECT_TRUE(w.stderr_tail.empty()) << w.stderr_tail;
    return;
  }
  EXPECT_NE(rep.status_message.find("rank 1: signal 6 (Aborted) at step 3"), std::string::npos) << rep.status_message;
  ASSERT_EQ(rep.workers.size(), 2u);
  EXPECT_NE(rep.workers[1].stderr_tail.find("terminate called after throwing"), std::string::npos)
      << rep.workers[1].stderr_tail;
  EXPECT_NE(rep.workers[1].error.find("planted: a worker that dies by std::terminate"), std::string::npos)
      << rep.workers[1].error;
  EXPECT_TRUE(rep.workers[0].stderr_tail.empty()) << rep.workers[0].stderr_tail;
}

const Check* find_check(const Repetition& rep, const std::string& name) {
  for (const auto& c : rep.checks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// Memory that keeps growing is caught; the same work without it is clean; figures are recorded.
TEST_P(EveryStartMethod, PrivateMemoryThatKeepsGrowingFailsTheMemoryCheck) {
  const Repetition grows = run_repetition(probe("grows", GetParam(), 2), 0);
  if (GetParam() == StartMethod::kThread) {
    // One process for every rank: no figure per worker, so no memory check rather than a wrong one.
    EXPECT_EQ(find_check(grows, "memory"), nullptr);
    for (const auto& w : grows.workers) EXPECT_EQ(w.uss_mb_peak, 0) << w.rank;
    return;
  }
  if (std::string_view(sanitizer_in_build()) == "AddressSanitizer") {
    // Its quarantine holds freed memory privately: no check (never a pass), the figures still there.
    EXPECT_EQ(find_check(grows, "memory"), nullptr);
    EXPECT_GT(grows.workers[1].uss_mb_peak, 0);
    return;
  }
  const Check* m = find_check(grows, "memory");
  ASSERT_NE(m, nullptr) << "no memory check";
  EXPECT_EQ(m->verdict, Verdict::kFail) << m->message;
  EXPECT_NE(m->message.find("rank 1's private memory"), std::string::npos) << m->message;
  EXPECT_GT(grows.workers[1].uss_mb_peak, 100);
  EXPECT_GT(grows.metrics.at("worker_uss_mb_peak"), 100);
  const Repetition steady = run_repetition(probe("steady", GetParam(), 2), 0);
  const Check* s = find_check(steady, "memory");
  ASSERT_NE(s, nullptr) << "no memory check";
  EXPECT_EQ(s->verdict, Verdict::kPass) << s->message;
  EXPECT_GT(steady.workers[0].shared_mb_peak, 0);
}

// A work() too short for the watchdog's samples is judged on its readings as it began and ended:
// 192 MiB in milliseconds fails, the instant clean worker passes; never `not exercised`.
TEST_P(EveryStartMethod, MemoryGrownInABurstTooShortToSampleStillFails) {
  if (GetParam() == StartMethod::kThread) GTEST_SKIP() << "threads share one process: no figure per worker";
  if (std::string_view(sanitizer_in_build()) == "AddressSanitizer") GTEST_SKIP() << "ASan's quarantine: no memory check";
  // A bound of 16 MiB, a twelfth of the burst: on a loaded machine the samples may fall inside the
  // burst, and the growth from the one a quarter of the way through to the end was once 63.9 MiB of
  // the 192 (a fresh clone beside stress-ng --cpu 2, 28 Nov), under the default 64 MiB bound.
  PlannedCell cell = probe("grows-fast", GetParam(), 2);
  cell.config.max_growth_mb = 16;
  const Repetition burst = run_repetition(cell, 0);
  const Check* m = find_check(burst, "memory");
  ASSERT_NE(m, nullptr) << "no memory check";
  EXPECT_EQ(m->verdict, Verdict::kFail) << m->message;
  EXPECT_NE(m->message.find("rank 1's private memory"), std::string::npos) << m->message;
  // Judged on its first and last readings; on a loaded machine, where faulting 192 MiB in takes long
  // enough for samples (CI, 28 Nov), on those: caught either way.
  EXPECT_TRUE(m->message.find("as its work began") != std::string::npos ||
              m->message.find("a quarter of the way through its work") != std::string::npos)
      << m->message;
  const Repetition quick = run_repetition(probe("ok", GetParam(), 2), 0);
  const Check* q = find_check(quick, "memory");
  ASSERT_NE(q, nullptr) << "no memory check";
  EXPECT_EQ(q->verdict, Verdict::kPass) << q->message;
}

// A daemon a worker started is found (the runner and the forkserver are subreapers), named with
// the rank that started it, and killed; its clean twin leaves nothing.
TEST_P(EveryStartMethod, AProcessAWorkerLeftBehindIsReportedAndKilled) {
  const Repetition rep = run_repetition(probe("leaves-helper", GetParam(), 2), 0);
  EXPECT_EQ(no_leaks(rep).verdict, Verdict::kFail);
  if (GetParam() != StartMethod::kThread) {
    EXPECT_NE(no_leaks(rep).message.find("started by rank 0"), std::string::npos) << no_leaks(rep).message;
  }
  const Repetition after = run_repetition(probe("ok", GetParam(), 2), 0);
  EXPECT_EQ(no_leaks(after).verdict, Verdict::kPass) << "the helper was not killed: " << no_leaks(after).message;
}

// A segment a worker names with run_shm_prefix() carries the runner's prefix, so it is found.
TEST_P(EveryStartMethod, ASegmentAWorkerLeftBehindIsFound) {
  const Repetition rep = run_repetition(probe("worker-shm", GetParam(), 2), 0);
  ::shm_unlink(("/" + run_shm_prefix() + "from-a-worker").c_str());
  EXPECT_EQ(no_leaks(rep).verdict, Verdict::kFail);
  EXPECT_NE(no_leaks(rep).message.find(run_shm_prefix() + "from-a-worker"), std::string::npos) << no_leaks(rep).message;
}

TEST(LeakCheck, CatchesADescriptorAndAShmEntryLeftBehind) {
  const Repetition fd = run_repetition(probe("leak-fd", StartMethod::kFork, 1), 0);
  EXPECT_EQ(no_leaks(fd).verdict, Verdict::kFail);
  EXPECT_NE(no_leaks(fd).message.find(fmt::format("({})", testing::leaked_fd)), std::string::npos) << no_leaks(fd).message;
  ::close(testing::leaked_fd);
  const Repetition shm = run_repetition(probe("leak-shm", StartMethod::kFork, 1), 0);
  ::shm_unlink(("/" + run_shm_prefix() + "leak").c_str());
  EXPECT_EQ(no_leaks(shm).verdict, Verdict::kFail);
  EXPECT_NE(no_leaks(shm).message.find("/dev/shm entries left behind: " + run_shm_prefix() + "leak"), std::string::npos)
      << no_leaks(shm).message;
}

}  // namespace
}  // namespace sharebench

namespace sharebench {
namespace {

// A detector that throws on the probe's `detector-throws` variant and stays silent elsewhere,
// registered in this test binary alone.
constexpr CheckId kThrowingDetector{"test-throwing-detector"};
class ThrowingDetector : public Detector {
 public:
  CheckId id() const override { return kThrowingDetector; }
  DetectorStage stage() const override { return DetectorStage::kAfterCheck; }
  void judge(const RepetitionEvidence& evidence, Repetition&) const override {
    if (evidence.cell->variant == "detector-throws") throw std::runtime_error("planted: out of cheese");
  }
};
[[maybe_unused]] const bool throwing_detector_registered = [] {
  DetectorRegistry::instance().add(std::make_unique<ThrowingDetector>());
  return true;
}();

TEST(Detectors, AThrowingDetectorIsItsOwnChecksUnknownAndTheRestStillRun) {
  const Repetition rep = run_repetition(probe("detector-throws", StartMethod::kFork, 2), 0);
  const Check* thrown = nullptr;
  bool liveness_judged = false;
  for (const Check& c : rep.checks) {
    if (c.name == kThrowingDetector) thrown = &c;
    if (c.name == checks::kLiveness) liveness_judged = c.verdict == Verdict::kPass;
  }
  ASSERT_NE(thrown, nullptr) << "no check for the throwing detector";
  EXPECT_EQ(thrown->verdict, Verdict::kUnknown);
  EXPECT_NE(thrown->message.find("out of cheese"), std::string::npos) << thrown->message;
  EXPECT_TRUE(liveness_judged) << "the other detectors did not run";
  EXPECT_EQ(rep.status, RunStatus::kCompleted);
}

}  // namespace
}  // namespace sharebench
