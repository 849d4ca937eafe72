// The detectors of the locked and hogwild scenarios against their planted bug: a lock each
// worker holds its own copy of must be caught at 2 processes in every run, under every
// start method; the correct lock must come out clean; Hogwild must converge.
#include <algorithm>
#include <cstdlib>

#include <gtest/gtest.h>

#include "harness/runner/runner.h"
#include "harness/scenario/scenario.h"

// Instantiates a parameterised suite once per start method, named after it.
#define SHAREBENCH_FOR_EVERY_START_METHOD(Suite)                                                            \
  INSTANTIATE_TEST_SUITE_P(Detectors, Suite,                                                                \
                           ::testing::Values(::sharebench::StartMethod::kFork, ::sharebench::StartMethod::kSpawn, \
                                             ::sharebench::StartMethod::kForkserver,                        \
                                             ::sharebench::StartMethod::kThread),                           \
                           [](const auto& info) { return std::string(::sharebench::to_string(info.param)); })

namespace sharebench {
namespace {

PlannedCell cell(const std::string& scenario, const std::string& variant, StartMethod m, int procs,
                 std::int64_t steps = 300) {
  PlannedCell c;
  c.config.scenario = scenario;
  c.config.variant = variant;
  c.config.start = m;
  c.config.procs = procs;
  c.config.stacks = "proc";  // gdb costs seconds per process; tests that want it say so
  c.config.workload.steps = steps;
  const VariantInfo* v = ScenarioRegistry::instance().find(scenario)->find_variant(variant);
  c.expected = v->expectation_for(procs, m);
  c.known_bug = v->known_bug;
  return c;
}

const Check& check_named(const Repetition& rep, const std::string& name) {
  for (const auto& c : rep.checks) {
    if (c.name == name) return c;
  }
  throw std::out_of_range("no check " + name);
}

class Methods : public ::testing::TestWithParam<StartMethod> {};

TEST_P(Methods, LocalLockIsCaughtEveryTimeAtTwoProcesses) {
  constexpr int kRuns = 10;
  for (int i = 0; i < kRuns; ++i) {
    const Repetition rep = run_repetition(cell("locked", "local-lock", GetParam(), 2, 200), i);
    const Check& mx = check_named(rep, "mutual-exclusion");
    ASSERT_EQ(mx.verdict, Verdict::kFail) << "run " << i << ": " << mx.message;
    EXPECT_GT(*mx.value, 0);
    EXPECT_TRUE(rep.as_expected) << rep.expectation_message;
  }
}

TEST_P(Methods, SharedLockIsClean) {
  for (const char* variant : {"whole-step", "update-only"}) {
    const Repetition rep = run_repetition(cell("locked", variant, GetParam(), 2), 0);
    EXPECT_EQ(rep.verdict, Verdict::kPass) << variant << ": " << rep.expectation_message;
    EXPECT_EQ(check_named(rep, "mutual-exclusion").value, 0.0);
    EXPECT_EQ(check_named(rep, "lost-updates").value, 0.0);
    EXPECT_TRUE(rep.as_expected);
  }
}

TEST_P(Methods, HogwildConvergesAndReportsLostUpdates) {
  const Repetition rep = run_repetition(cell("hogwild", "lock-free", GetParam(), 2), 0);
  EXPECT_EQ(check_named(rep, "convergence").verdict, Verdict::kPass) << check_named(rep, "convergence").message;
  EXPECT_TRUE(rep.metrics.count("lost_update_rate"));
  EXPECT_TRUE(rep.as_expected) << rep.expectation_message;
}

SHAREBENCH_FOR_EVERY_START_METHOD(Methods);

TEST(Detectors, OneWorkerLocalLockIsNotABug) {
  // With one process there is nobody to exclude: the variant must come out clean.
  const Repetition rep = run_repetition(cell("locked", "local-lock", StartMethod::kFork, 1), 0);
  EXPECT_EQ(rep.verdict, Verdict::kPass);
  EXPECT_TRUE(rep.as_expected);
}

TEST(Detectors, OneLockedWorkerMatchesTheSerialReferenceExactly) {
  // Same initial weights, same batches, same step function: the same bits.
  const Repetition rep = run_repetition(cell("locked", "whole-step", StartMethod::kFork, 1), 0);
  EXPECT_EQ(rep.metrics.at("heldout_loss"), rep.metrics.at("serial_heldout_loss"));
}

TEST(Detectors, ASerialReferenceTrainedInAChildIsTheSameBits) {
  // A CUDA build of LibTorch trains the reference in a fork child (serial_reference.cc); the
  // variable takes that path here. 137 steps: a reference no other test has cached.
  ::setenv("SHAREBENCH_SERIAL_REFERENCE_IN_CHILD", "1", 1);
  const Repetition rep = run_repetition(cell("locked", "whole-step", StartMethod::kFork, 1, 137), 0);
  ::unsetenv("SHAREBENCH_SERIAL_REFERENCE_IN_CHILD");
  EXPECT_EQ(rep.metrics.at("heldout_loss"), rep.metrics.at("serial_heldout_loss"));
  EXPECT_GT(rep.metrics.at("serial_steps_per_s"), 0);
}

}  // namespace
}  // namespace sharebench

namespace sharebench {
namespace {

// The deadlock catalogue: a forced lock-order deadlock is reported as a hang with its wait-for
// cycle, under every start method; the staggered inversion is caught without a hang; the
// same-order twin is clean.
class DeadlockMethods : public ::testing::TestWithParam<StartMethod> {};

TEST_P(DeadlockMethods, LockOrderHangNamesTheCycle) {
  // Long enough for a spawn under AddressSanitizer (over 1.5 s) not to look like a hang at launch.
  PlannedCell c = cell("deadlock", "lock-order", GetParam(), 2);
  c.config.hang_timeout_s = 3;
  const Repetition rep = run_repetition(c, 0);
  EXPECT_EQ(rep.status, RunStatus::kHang);
  EXPECT_TRUE(rep.as_expected) << rep.expectation_message;
  const Check& d = check_named(rep, "deadlock-free");
  EXPECT_EQ(d.verdict, Verdict::kFail);
  EXPECT_NE(d.message.find("wait-for cycle: rank 0 (step 0) holds A and waits for B (held by rank 1, step 0); "
                           "rank 1 (step 0) holds B and waits for A (held by rank 0, step 0)"),
            std::string::npos)
      << d.message;
  // The harness reads the same graph by itself, for any scenario: it is in the liveness message.
  EXPECT_NE(check_named(rep, "liveness").message.find("wait-for cycle: rank 0 (step 0) holds A"), std::string::npos)
      << check_named(rep, "liveness").message;
  const Check& order = check_named(rep, "lock-order");
  EXPECT_EQ(order.verdict, Verdict::kFail);
  EXPECT_NE(order.message.find("A then B by rank 0"), std::string::npos) << order.message;
  EXPECT_NE(order.message.find("B then A by rank 1"), std::string::npos) << order.message;
  EXPECT_LT(rep.wall_s, 3 + 10);
}

TEST_P(DeadlockMethods, StaggeredInversionIsCaughtWithoutAHang) {
  const Repetition rep = run_repetition(cell("deadlock", "lock-order-staggered", GetParam(), 2), 0);
  EXPECT_EQ(rep.status, RunStatus::kCompleted);
  EXPECT_EQ(check_named(rep, "lock-order").verdict, Verdict::kFail);
  EXPECT_TRUE(rep.as_expected) << rep.expectation_message;
}

TEST_P(DeadlockMethods, SameOrderIsClean) {
  const Repetition rep = run_repetition(cell("deadlock", "same-order", GetParam(), 2), 0);
  EXPECT_EQ(rep.verdict, Verdict::kPass);
  EXPECT_TRUE(rep.as_expected);
}

SHAREBENCH_FOR_EVERY_START_METHOD(DeadlockMethods);

TEST(Detectors, GdbStacksOfAHungWorkerShowWhereItWaits) {
  PlannedCell c = cell("deadlock", "lock-order", StartMethod::kFork, 2);
  c.config.hang_timeout_s = 1;
  c.config.stacks = "gdb";
  const Repetition rep = run_repetition(c, 0);
  ASSERT_EQ(rep.workers.size(), 2u);
  for (const auto& w : rep.workers) {
    EXPECT_NE(w.stacks.find("ProcessMutex::lock"), std::string::npos) << w.stacks;
    EXPECT_NE(w.stall.find("state S"), std::string::npos) << w.stall;
  }
}

}  // namespace
}  // namespace sharebench

namespace sharebench {
namespace {

// Inference: readers of shared parameters agree bit for bit with the runner;
// a worker that writes during a read-only run is caught by both the checksum and the probes.
class InferenceMethods : public ::testing::TestWithParam<StartMethod> {};

TEST_P(InferenceMethods, ReadOnlyWorkersAgreeBitForBit) {
  const Repetition rep = run_repetition(cell("inference", "read-only", GetParam(), 2, 200), 0);
  EXPECT_EQ(check_named(rep, "probe-identical").verdict, Verdict::kPass) << check_named(rep, "probe-identical").message;
  EXPECT_EQ(check_named(rep, "parameters-unchanged").verdict, Verdict::kPass);
  EXPECT_GT(rep.metrics.at("latency_p99_us"), 0);
  EXPECT_GT(rep.metrics.at("scaling_efficiency"), 0);
  EXPECT_TRUE(rep.as_expected) << rep.expectation_message;
}

TEST_P(InferenceMethods, AWorkerThatWritesIsCaught) {
  const Repetition rep = run_repetition(cell("inference", "writer", GetParam(), 2, 200), 0);
  EXPECT_EQ(check_named(rep, "parameters-unchanged").verdict, Verdict::kFail);
  EXPECT_EQ(check_named(rep, "probe-identical").verdict, Verdict::kFail);
  EXPECT_EQ(check_named(rep, "probe-identical").value, 2.0);  // the writer and the reader both see it
  EXPECT_TRUE(rep.as_expected) << rep.expectation_message;
}

SHAREBENCH_FOR_EVERY_START_METHOD(InferenceMethods);

}  // namespace
}  // namespace sharebench

namespace sharebench {
namespace {

// Averaging over shared-memory slots: correct replicas agree bit for bit after every round and
// gradient averaging is large-batch SGD; a reader that does not wait for the writers, and a
// replica that skips one round, are caught.
class AveragingMethods : public ::testing::TestWithParam<StartMethod> {};

TEST_P(AveragingMethods, ReplicasAgreeAndGradientsMatchLargeBatchSgd) {
  for (const char* variant : {"params-shm", "grads-shm"}) {
    const Repetition rep = run_repetition(cell("averaging", variant, GetParam(), 2, 100), 0);
    EXPECT_EQ(check_named(rep, "replicas-agree").verdict, Verdict::kPass) << variant;
    EXPECT_TRUE(rep.as_expected) << variant << ": " << rep.expectation_message;
  }
  const Repetition grads = run_repetition(cell("averaging", "grads-shm", GetParam(), 2, 20), 0);
  EXPECT_EQ(check_named(grads, "matches-serial").verdict, Verdict::kPass) << check_named(grads, "matches-serial").message;
}

TEST_P(AveragingMethods, NoBarrierAndSkippedRoundAreCaught) {
  const Repetition no_barrier = run_repetition(cell("averaging", "no-barrier", GetParam(), 2, 100), 0);
  EXPECT_EQ(check_named(no_barrier, "replicas-agree").verdict, Verdict::kFail);
  EXPECT_TRUE(no_barrier.as_expected) << no_barrier.expectation_message;
  const Repetition skip = run_repetition(cell("averaging", "skip-round", GetParam(), 2, 100), 0);
  const Check& agree = check_named(skip, "replicas-agree");
  EXPECT_EQ(agree.verdict, Verdict::kFail);
  EXPECT_EQ(agree.value, 1.0) << agree.message;  // exactly the skipped round
  EXPECT_TRUE(skip.as_expected) << skip.expectation_message;
}

SHAREBENCH_FOR_EVERY_START_METHOD(AveragingMethods);

}  // namespace
}  // namespace sharebench

namespace sharebench {
namespace {

// Faults and mistakes planted on the training scenarios: a worker that dies holding the lock is
// recovered from (no hang) under every start method; a worker that trains a private copy is caught
// because no update reaches the shared model.
class PlantedTrainingMethods : public ::testing::TestWithParam<StartMethod> {};

TEST_P(PlantedTrainingMethods, OwnerDeathIsRecoveredWithoutAHang) {
  const Repetition rep = run_repetition(cell("locked", "owner-death", GetParam(), 2, 200), 0);
  EXPECT_EQ(rep.status, RunStatus::kWorkerFailed) << rep.status_message;
  EXPECT_EQ(check_named(rep, "owner-death-recovered").verdict, Verdict::kPass)
      << check_named(rep, "owner-death-recovered").message;
  EXPECT_EQ(check_named(rep, "mutual-exclusion").verdict, Verdict::kPass);
  EXPECT_TRUE(rep.as_expected) << rep.expectation_message;
}

TEST_P(PlantedTrainingMethods, ForkedCopyNeverReachesTheSharedModel) {
  const Repetition rep = run_repetition(cell("hogwild", "forked-copy", GetParam(), 2, 100), 0);
  EXPECT_EQ(check_named(rep, "updates-reached-model").verdict, Verdict::kFail);
  EXPECT_TRUE(rep.as_expected) << rep.expectation_message;
  const Repetition clean = run_repetition(cell("hogwild", "lock-free", GetParam(), 2, 100), 0);
  EXPECT_EQ(check_named(clean, "updates-reached-model").verdict, Verdict::kPass);
}

SHAREBENCH_FOR_EVERY_START_METHOD(PlantedTrainingMethods);

}  // namespace
}  // namespace sharebench

namespace sharebench {
namespace {

// Torn reads: a lock per element access lets a reader copy half of one version and
// half of the next; the version stripes catch it under every start method, and the whole-array
// lock is clean.
class SnapshotMethods : public ::testing::TestWithParam<StartMethod> {};

TEST_P(SnapshotMethods, ElementLockTearsAndWholeLockDoesNot) {
  const Repetition torn = run_repetition(cell("snapshot", "element-lock", GetParam(), 2, 50), 0);
  const Check& t = check_named(torn, "consistent-snapshots");
  EXPECT_EQ(t.verdict, Verdict::kFail);
  EXPECT_GE(*t.value, 1.0) << t.message;
  EXPECT_TRUE(torn.as_expected) << torn.expectation_message;
  const Repetition whole = run_repetition(cell("snapshot", "whole-lock", GetParam(), 3, 200), 0);
  EXPECT_EQ(check_named(whole, "consistent-snapshots").verdict, Verdict::kPass);
  EXPECT_GT(whole.metrics.count("steps_total"), 0u);
}

SHAREBENCH_FOR_EVERY_START_METHOD(SnapshotMethods);

}  // namespace
}  // namespace sharebench

namespace sharebench {
namespace {

// Averaging through a manager process (bitwise, like shared memory) and through c10d Gloo
// (within tolerance): replicas agree, and gradient averaging is large-batch SGD.
class AveragingTransports : public ::testing::TestWithParam<StartMethod> {};

TEST_P(AveragingTransports, PipeAndGlooReplicasAgreeAndMatchLargeBatchSgd) {
  for (const char* variant : {"params-pipe", "params-gloo"}) {
    const Repetition rep = run_repetition(cell("averaging", variant, GetParam(), 2, 100), 0);
    const Check& agree = check_named(rep, "replicas-agree");
    EXPECT_EQ(agree.verdict, Verdict::kPass) << variant << ": " << agree.message;
    EXPECT_TRUE(rep.as_expected) << variant << ": " << rep.expectation_message;
  }
  for (const char* variant : {"grads-pipe", "grads-gloo"}) {
    const Repetition rep = run_repetition(cell("averaging", variant, GetParam(), 2, 20), 0);
    const Check& serial = check_named(rep, "matches-serial");
    EXPECT_EQ(serial.verdict, Verdict::kPass) << variant << ": " << serial.message;
    EXPECT_TRUE(rep.as_expected) << variant << ": " << rep.expectation_message;
  }
  const Repetition pipe = run_repetition(cell("averaging", "params-pipe", GetParam(), 2, 50), 0);
  EXPECT_EQ(check_named(pipe, "manager-exited").verdict, Verdict::kPass) << check_named(pipe, "manager-exited").message;
}

SHAREBENCH_FOR_EVERY_START_METHOD(AveragingTransports);

// IPC: every CPU transport delivers every message intact, with its handoff latency by size; a
// buffer rewritten before its release and a producer that exits early are caught, the latter with
// a named error and no hang.
class IpcMethods : public ::testing::TestWithParam<StartMethod> {};

TEST_P(IpcMethods, EveryCpuTransportDeliversIntact) {
  for (const char* variant : {"fd-reuse", "fd-fresh", "named-reuse", "named-fresh"}) {
    const Repetition rep = run_repetition(cell("ipc", variant, GetParam(), 3, 16), 0);
    EXPECT_EQ(rep.verdict, Verdict::kPass) << variant << ": " << rep.expectation_message;
    EXPECT_EQ(check_named(rep, "message-checksums").value, 0.0) << variant;
    const auto latency = std::find_if(rep.series.begin(), rep.series.end(),
                                      [](const Series& s) { return s.name == "handoff-latency"; });
    ASSERT_NE(latency, rep.series.end()) << variant;
    EXPECT_EQ(latency->points.size(), 8u) << variant;  // 4 KiB .. 64 MiB
    EXPECT_GT(rep.metrics.at("gb_per_s"), 0) << variant;
  }
}

TEST_P(IpcMethods, EarlyReuseAndProducerExitAreCaught) {
  const Repetition reuse = run_repetition(cell("ipc", "early-reuse", GetParam(), 2, 16), 0);
  EXPECT_EQ(check_named(reuse, "message-checksums").verdict, Verdict::kFail);
  EXPECT_EQ(check_named(reuse, "buffer-lifetime").verdict, Verdict::kFail);
  EXPECT_TRUE(reuse.as_expected) << reuse.expectation_message;

  const Repetition exits = run_repetition(cell("ipc", "producer-exits", GetParam(), 3, 16), 0);
  const Check& lifetime = check_named(exits, "producer-lifetime");
  EXPECT_EQ(lifetime.verdict, Verdict::kFail);
  EXPECT_EQ(lifetime.value, 2.0);  // both consumers
  EXPECT_NE(lifetime.message.find("ProducerExited"), std::string::npos) << lifetime.message;
  EXPECT_EQ(exits.status, RunStatus::kCompleted) << "no hang, no crash: " << exits.status_message;
  EXPECT_TRUE(exits.as_expected) << exits.expectation_message;
}

TEST_P(IpcMethods, CudaIsSkippedWithItsReasonWhereItCannotRun) {
  const Repetition rep = run_repetition(cell("ipc", "cuda", GetParam(), 2, 16), 0);
  if (GetParam() == StartMethod::kFork || GetParam() == StartMethod::kThread) {
    EXPECT_EQ(rep.status, RunStatus::kSkipped);
    EXPECT_NE(rep.status_message.find(GetParam() == StartMethod::kFork ? "refused under fork" : "separate processes"),
              std::string::npos) << rep.status_message;
  } else if (rep.status == RunStatus::kSkipped) {
    EXPECT_NE(rep.status_message.find("CUDA"), std::string::npos) << rep.status_message;  // no GPU here
  } else {
    EXPECT_EQ(rep.verdict, Verdict::kPass) << rep.expectation_message;  // a GPU machine
  }
  EXPECT_TRUE(rep.as_expected);
}

SHAREBENCH_FOR_EVERY_START_METHOD(IpcMethods);

}  // namespace
}  // namespace sharebench
