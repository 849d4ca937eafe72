// A small, fixed RunResult for the report output tests: one cell of every outcome (a clean pass, a
// caught planted bug, a handled fault, a skipped cell, an interrupted cell and an unexpected hang
// with a stuck worker), so every writer's branches show.
#pragma once

#include "harness/results/results.h"

namespace sharebench::testing {

inline RunResult report_fixture() {
  RunResult run;
  run.run_id = "20260101-000000-1";
  run.status = "complete";
  run.started_at = "2026-01-01T00:00:00Z";
  run.finished_at = "2026-01-01T00:01:00Z";
  run.command = {"build/sharebench", "run"};
  run.environment = {{"cores", "2"}, {"cpu_model", "Test CPU"}, {"blas", "/usr/lib/libopenblas.so.0"},
                     {"libtorch", "1.13.0"}, {"host", "testhost"}, {"threads_per_worker", "1"}};
  auto make = [](const char* scenario, const char* variant, StartMethod m, int procs, ScenarioKind kind) {
    CellResult c;
    c.config.scenario = scenario;
    c.config.variant = variant;
    c.config.start = m;
    c.config.procs = procs;
    c.kind = kind;
    c.repro = std::string("build/sharebench run --scenario ") + scenario + "/" + variant;
    return c;
  };
  auto finish = [](CellResult& c, Repetition r) {
    r.verdict = overall_verdict(r.checks);
    judge_against(c.expected, r);
    c.repetitions.push_back(r);
  };
  {
    CellResult c = make("locked", "whole-step", StartMethod::kFork, 2, ScenarioKind::kTraining);
    Repetition r;
    r.checks = {{"liveness", Verdict::kPass, 0.0, "ok"}, {"mutual-exclusion", Verdict::kPass, 0.0, "none overlapped"}};
    r.metrics = {{"steps_per_s", 2500}, {"samples_per_s", 80000}, {"heldout_loss", 0.88}, {"serial_heldout_loss", 0.84},
                 {"heldout_loss_limit", 1.016}, {"lock_wait_frac", 0.36}, {"launch_s_max", 0.02}, {"steps_total", 2000},
                 {"run_s", 0.8}};
    r.series = {Series{"loss", 0, {{2, 0.001, 2.3}, {4, 0.002, 2.1}}}, Series{"serial-loss", -1, {{2, 0.001, 2.2}}}};
    finish(c, r);
    r.index = 1;
    r.metrics["steps_per_s"] = 2300;
    finish(c, r);
    run.cells.push_back(c);
  }
  {
    CellResult c = make("locked", "local-lock", StartMethod::kSpawn, 2, ScenarioKind::kTraining);
    c.known_bug = true;
    c.expected = Expectation{{"mutual-exclusion"}, {"lost-updates"}};
    Repetition r;
    r.checks = {{"liveness", Verdict::kPass, 0.0, "ok"},
                {"mutual-exclusion", Verdict::kFail, 1900.0, "1900 of 2000 guarded sections overlapped"}};
    r.metrics = {{"steps_per_s", 4500}, {"launch_s_max", 0.7}, {"steps_total", 2000}, {"run_s", 0.15}};
    finish(c, r);
    run.cells.push_back(c);
  }
  {
    CellResult c = make("locked", "whole-step", StartMethod::kFork, 2, ScenarioKind::kTraining);
    c.config.fault = FaultPlan::parse("kill:1@20");
    c.expected.must_fail = {"liveness"};
    c.expected.others_free = true;
    c.expected.must_pass = {"no-leaks", "fault-injected"};
    Repetition r;
    r.status = RunStatus::kWorkerFailed;
    r.status_message = "rank 1: signal 9 (Killed)";
    r.checks = {{"liveness", Verdict::kFail, 1.0, "worker-failed: rank 1: signal 9 (Killed) [fault: SIGKILL at step 20]"},
                {"fault-injected", Verdict::kPass, 20.0, "SIGKILL at step 20"},
                {"no-leaks", Verdict::kPass, 0.0, "nothing left"}};
    finish(c, r);
    run.cells.push_back(c);
  }
  {
    CellResult c = make("ipc", "cuda", StartMethod::kSpawn, 2, ScenarioKind::kMessages);
    Repetition r;
    r.status = RunStatus::kSkipped;
    r.status_message = "no CUDA device";
    finish(c, r);
    run.cells.push_back(c);
  }
  {
    CellResult c = make("hogwild", "lock-free", StartMethod::kFork, 1, ScenarioKind::kTraining);
    Repetition r;
    r.status = RunStatus::kInterrupted;
    r.status_message = "interrupted by signal 2";
    r.checks = {{"liveness", Verdict::kFail, 1.0, "interrupted: interrupted by signal 2"}};
    finish(c, r);
    run.cells.push_back(c);
  }
  {
    CellResult c = make("hogwild", "lock-free", StartMethod::kForkserver, 4, ScenarioKind::kTraining);
    Repetition r;
    r.status = RunStatus::kHang;
    r.status_message = "no progress for 10.0 s from rank(s) 1";
    r.checks = {{"liveness", Verdict::kFail, 1.0, "hang: no progress for 10.0 s from rank(s) 1"},
                {"convergence", Verdict::kUnknown, std::nullopt, "training did not complete"}};
    WorkerRecord stuck;
    stuck.rank = 1;
    stuck.pid = 77;
    stuck.signal = 9;
    stuck.steps = 12;
    stuck.launch_s = 0.01;
    stuck.stall = "running at step 12; tid 77 state S wchan futex_wait";
    stuck.stacks = "#0 futex_wait\n#1 ProcessMutex::lock";
    r.workers = {stuck};
    r.metrics = {{"launch_s_max", 0.03}};
    finish(c, r);
    run.cells.push_back(c);
  }
  return run;
}

}  // namespace sharebench::testing
