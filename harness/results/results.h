// The results model: run → cells → repetitions → checks, metrics, series, workers.
// One plain model reaches every writer (JSON, console, …); writers never see the runner.
// Verdicts are three-valued as in Jepsen's checkers: pass, fail, or unknown (the check could not
// decide: a worker was killed mid-step, a checker threw). The JSON form is documented in
// docs/results-schema.md and versioned by kResultsSchemaVersion.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/results/check_ids.h"
#include "harness/results/outcome.h"
#include "harness/config/cell_config.h"

namespace sharebench {

// 2: cells carry `outcome`, `kind` and the harness options in `config`; runs carry `shard`.
inline constexpr int kResultsSchemaVersion = 3;  // 3: a scenario's own options in config.options

// What a scenario's workers produce, which decides the columns a report shows for it.
enum class ScenarioKind {
  kTraining,   // steps/s, samples/s, held-out loss against the serial reference, lock wait
  kInference,  // batches/s, samples/s, latency p50/p99
  kMessages,   // messages/s, GB/s, handoff latency
  kLockOnly,   // operations/s and lock wait (no model): the default for a user's scenario
  kProgram,    // a user's program run by `sharebench exec`: steps/s, its processes, their memory
};
std::string_view to_string(ScenarioKind k);
std::optional<ScenarioKind> parse_scenario_kind(std::string_view s);

// kNotExercised: the check held, but only vacuously: the situation it guards against never arose
// in the repetition (its Exposure counted 0). Neither a pass nor a failure: a clean cell stays as
// expected, a planted bug whose check was not exercised is neither caught nor missed (judge_against).
enum class Verdict { kPass, kFail, kUnknown, kNotExercised };
std::string to_string(Verdict v);
std::optional<Verdict> parse_verdict(const std::string& s);

// How often the situation a check guards against actually arose in the repetition (what
// Antithesis calls a "sometimes" property; PCT's papers, the bug depth a run reached): lock
// acquisitions that found the lock held, memory samples taken while workers ran, averaging rounds
// with two or more replicas, nested acquisitions. A pass beside a count of 0 held vacuously.
struct Exposure {
  double count = 0;
  std::string what;  // plural, what was counted: "acquisitions found the lock held"
};
// "exercised: 1 204 acquisitions found the lock held", or "not exercised: no …: raise …".
std::string exposure_text(const Exposure& e, const std::string& to_raise);

struct Check {
  Check() = default;
  Check(std::string name_, Verdict verdict_, std::optional<double> value_, std::string message_,
        std::optional<Exposure> exposure_ = std::nullopt)
      : name(std::move(name_)), verdict(verdict_), value(value_), message(std::move(message_)),
        exposure(std::move(exposure_)) {}
  std::string name;      // "mutual-exclusion", "lost-updates", "convergence", …
  Verdict verdict = Verdict::kUnknown;
  std::optional<double> value;  // the figure the verdict rests on (lost updates, loss ratio, …)
  std::string message;   // one sentence a person can act on
  std::optional<Exposure> exposure;  // where the check counts how often it was put to the test
  // exec, a program that is a test runner (pytest, unittest): the tests its findings happened in,
  // named as the runner names them ("tests/test_x.py::test_y"); empty when none is known.
  std::vector<std::string> tests;
};

// A check that counts no exposure of its own gets the repetition's work as its exposure: the worker
// steps it watched (the milliseconds of the repetition when no worker counted steps, as a program
// under `exec` that reports none). Run by the runner before mark_unexercised_checks, so every check
// in the results says how much it saw; the message is left as the check wrote it.
struct Repetition;
void give_every_check_an_exposure(Repetition& rep);

// Every check that passed with an exposure of 0 becomes kNotExercised: run by the runner before a
// repetition is judged, so no check can pass vacuously, whoever wrote it.
void mark_unexercised_checks(std::vector<Check>& checks);

struct SeriesPoint {
  double step = 0;
  double time_s = 0;
  double value = 0;
};

struct Series {
  std::string name;  // "loss" (training loss, mean over a window of steps), "reference-loss", …
  int rank = -1;     // the worker it came from; -1 for the cell as a whole or the reference
  std::vector<SeriesPoint> points;
};

// How a repetition ended, before any check ran.
enum class RunStatus {
  kCompleted,    // every worker ended by itself
  kHang,         // a worker made no progress for the hang timeout; torn down
  kDeadline,     // the cell ran past its deadline; torn down
  kWorkerFailed, // a worker exited non-zero or died of a signal
  kInterrupted,  // SIGINT/SIGTERM reached the runner
  kSkipped,      // the cell cannot run here (reason in status_message)
  kError,        // the harness itself failed to set the cell up
  kSetupTimeout, // the scenario's setup() or check(), which the runner calls, outlived --deadline
};
std::string to_string(RunStatus s);
std::optional<RunStatus> parse_run_status(const std::string& s);

struct WorkerRecord {
  int rank = 0;
  int pid = 0;
  bool exited = false;  // exited normally (exit_code valid); else killed by `signal`
  int exit_code = 0;
  int signal = 0;
  std::int64_t steps = 0;
  double launch_s = 0;  // from the launch call until the worker reached the start barrier
  std::string error;    // the worker's own last words: the exception work() threw, exit() inside
                        // work(), or else the last lines it printed to stderr before it failed
  std::string stderr_tail;  // the end of what the worker process printed to stderr (up to 8 KiB)
  std::string stall;    // on a hang: where it was stuck
  std::string stacks;   // on a hang with gdb stacks asked for: every thread's backtrace
  std::string chaos_recent;  // --chaos: the last perturbations of this worker, oldest first ("" without)
  // Memory of the worker's process (MiB, from smaps_rollup; 0 when not sampled: thread mode, or
  // a worker gone before the first sample). USS is private memory, what the worker really adds.
  double rss_mb_peak = 0, pss_mb_peak = 0, uss_mb_peak = 0, shared_mb_peak = 0;
  double uss_mb_start = 0, uss_mb_end = 0;  // when its work began, and at the last sample
};

// One process of a program run by `sharebench exec` (its tree: the program, every descendant the
// supervisor saw, daemons included), with what it used and, on a hang, where it was.
struct ProcessRecord {
  int pid = 0;
  int ppid = 0;
  int birth = 0;             // 0: the program itself; 1, 2, ...: its descendants in order of birth
  std::string command;       // its command line, shortened
  std::string role;          // "program", "child", "helper" (multiprocessing's resource tracker or forkserver)
  std::string end;           // "ended", "outlived the program: killed", "killed at the hang", "killed by the fault", ...
  bool python = false;       // a Python process (it loaded the injected hooks)
  double first_seen_s = 0;   // since the program started
  double last_seen_s = 0;
  double cpu_s = 0;
  std::int64_t steps = 0;    // its last progress beat
  double rss_mb_peak = 0, pss_mb_peak = 0, uss_mb_peak = 0, shared_mb_peak = 0;
  std::string state;         // on a hang: its threads' state, wait channel, syscall (/proc)
  std::string python_stack;  // on a hang: every thread's Python stack (faulthandler)
  std::string native_stack;  // on a hang, with gdb: every thread's native stack
  std::string error;         // a Python process's uncaught exception: its traceback's last lines
  int fds_peak = 0;          // the most descriptors it held open at once (sampled)
  int fd_limit = 0;          // its soft RLIMIT_NOFILE when it came nearest it (0: unknown or unlimited)
  int fds_nearest_limit = 0; // the descriptors it held then
  std::string test;          // the test its program's test runner was running when it started ("": none)
};

struct Repetition {
  int index = 0;
  RunStatus status = RunStatus::kCompleted;
  std::string status_message;
  Verdict verdict = Verdict::kUnknown;  // fail if any check failed, else unknown if any, else pass
  bool as_expected = false;             // against the cell's Expectation
  std::string expectation_message;
  double wall_s = 0;
  std::vector<Check> checks;
  std::map<std::string, double> metrics;
  std::vector<Series> series;
  std::vector<WorkerRecord> workers;
  std::vector<ProcessRecord> processes;  // exec cells only: the program's process tree
  std::string sanitizer_report;  // the workers' sanitizer reports (sanitizer builds), capped; "" for none
  std::string diagnosis;         // exec cells that hung or failed: one line on why, first in every report
  std::vector<std::string> notes;  // observations that are never failures (exec's headroom, lost increments)
  // --repetitions auto: the cell's first repetition, run at the steps asked for, when it timed too
  // little work and the cell's steps were raised for the rest; its checks count, its figures do not.
  bool calibration = false;
  // Ranking blocks (harness/results/block_ranking.h): the block this repetition ran in (-1: the
  // first pass, or a run without blocks), and whether it is the A/A control's second run of it.
  int block = -1;
  bool control = false;
  // In memory only, never written: the --disable-check names whose checks this repetition dropped,
  // so the command can say which names matched no check at all (a misspelling).
  std::vector<std::string> disabled_dropped;
};

// What a variant must produce. A clean variant: nothing may fail. A planted bug: every check in
// must_fail fails; checks in may_fail are free (a bug that shows only sometimes through them).
// Under an injected fault (harness/faults) the scenario's own checks are free (`others_free`) and
// only the harness's checks in must_pass are held to pass.
struct Expectation {
  Expectation() = default;
  Expectation(std::vector<std::string> must, std::vector<std::string> may = {})  // NOLINT: brace-initialised
      : must_fail(std::move(must)), may_fail(std::move(may)) {}
  std::vector<std::string> must_fail;
  std::vector<std::string> may_fail;
  bool others_free = false;             // every check not in must_fail or must_pass may fail
  std::vector<std::string> must_pass;   // when present, these must pass, whatever else holds
  bool clean() const { return must_fail.empty() && !others_free; }
};

struct CellResult {
  CellConfig config;  // repetition field unused at this level
  ScenarioKind kind = ScenarioKind::kLockOnly;
  Expectation expected;
  bool known_bug = false;
  std::string repro;  // a command that re-runs exactly this cell (generated from config)
  std::vector<Repetition> repetitions;
  // The cell's one answer (outcome.h); every writer formats this and decides nothing itself.
  CellOutcome outcome() const { return decide_outcome(*this); }
  // Not unexpected: ok, bug caught, fault handled, skipped or interrupted.
  bool as_expected() const { return !outcome().red(); }
};

// Which part of a sharded matrix a run holds (run --shard K/N); total 1 for a whole run.
struct ShardInfo {
  int index = 1;  // 1-based
  int total = 1;
  std::size_t planned_cells = 0;  // cells in the whole matrix, over all shards
};

// The tie margin --tie-margin defaults to. Two 10-minute runs of the default matrix on the 2-core VM
// moved each strategy's throughput against its group's median by 6.0 % (standard deviation over 30
// strategies): if each run puts its own error on each strategy, that is also how far one run's
// ratio of two strategies is off, and 12 % is 1.96 times it (docs/reports.md).
inline constexpr double kDefaultTieMargin = 0.12;

// How many repetitions each cell got: a fixed number (--repetitions N), or `auto`: repeated until the
// throughput's 95 % interval is within `target` of the mean, or the run's `budget_s` ran out.
struct RepetitionPolicy {
  bool automatic = false;
  int fixed = 1;              // --repetitions N (automatic: the fewest a ranked cell gets)
  double target = 0.05;       // automatic: relative half-width of the interval asked for (0.05: ±5 %)
  double budget_s = 0;        // automatic: the time allowed for the whole run
  double min_timed_s = 0;     // automatic: the least timed work a repetition of a ranked cell does
  bool budget_ran_out = false;  // automatic: some cells had not settled when the budget ended
  // Strategies whose means are within this share of the fastest's are tied with it even when their
  // intervals part: a run's intervals do not hold the drift between runs (docs/reports.md).
  double tie_margin = kDefaultTieMargin;
  bool tie_margin_given = false;  // --tie-margin was given: it replaces the A/A control's margin in blocks
  // Ranking blocks after the first pass (harness/results/block_ranking.h): whether they ran, `auto`
  // (at least blocks_min, more until each group's leader is told apart, at most blocks_max, within
  // budget_s) or exactly blocks_min.
  bool blocks = false;
  bool blocks_adaptive = false;
  int blocks_min = 0;
  int blocks_max = 0;
  int blocks_ran = -1;  // the most blocks a group completed (-1: not recorded, a file from before)
};

struct RunResult {
  int schema_version = kResultsSchemaVersion;
  std::string run_id;
  std::string started_at;   // ISO 8601, UTC
  std::string finished_at;  // empty while running
  std::string status = "running";  // running | complete | interrupted | error
  std::string stop_reason;         // why a run with status "error" stopped (a full disk); else empty
  std::vector<std::string> command;
  std::map<std::string, std::string> environment;
  ShardInfo shard;
  std::vector<std::string> merged_from;  // run ids of the shards `merge` joined, in order
  RepetitionPolicy repetitions;
  // exec --readable-results: the results and reports, which hold what the program printed, are
  // readable by every user (0644) instead of their owner's alone (0600).
  bool readable_results = false;
  std::vector<CellResult> cells;
};

// Whether a run's files must be its owner's alone: exec's cells keep what the program printed (a
// token, a password), unless the run was asked to keep them readable (exec --readable-results).
// Every writer of a run's files asks this: run, report, merge.
bool keeps_program_output_private(const RunResult& run);


// Pure: the cell's notes over all its repetitions, each once, in order of first appearance.
std::vector<std::string> distinct_notes(const CellResult& cell);
// Per check name, the cells where it was not exercised in some repetition (Verdict::kNotExercised),
// in run order: what every report lists as held only because nothing put it to the test.
std::vector<std::pair<std::string, std::vector<std::string>>> unexercised_checks(const RunResult& run);
// One line of it: "mutual-exclusion in 1 cell (locked/whole-step@fork:1); memory in 6 cells (a, b, c, …)".
std::string unexercised_summary(const RunResult& run);
// Pure: the repetition's overall verdict from its checks.
Verdict overall_verdict(const std::vector<Check>& checks);
// Pure: is this one check's verdict what the expectation allows?
bool check_as_expected(const Expectation& e, const Check& c);
// Pure: does this repetition meet the expectation? Sets as_expected and expectation_message.
void judge_against(const Expectation& e, Repetition& rep);

}  // namespace sharebench
