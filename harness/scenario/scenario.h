// The public scenario interface. A sharing strategy is a class derived from Scenario plus one
// SHAREBENCH_SCENARIO line; every launcher, detector and report then works for it.
//
//   class MyStrategy : public sharebench::Scenario {
//     void setup(SetupContext& ctx) override;   // runner: lay out shared state in ctx.arena()
//     void work(WorkerContext& ctx) override;   // each worker: ctx.wait_for_start(), loop, ctx.beat()
//     void check(CheckContext& ctx) override;   // runner: ctx.check(...), ctx.metric(...)
//   };
//   SHAREBENCH_SCENARIO(MyStrategy, "my-strategy")
//       ->Describe("what the workers do")
//       ->Variant("default", "the correct version")
//       ->KnownBug("broken", "a planted bug", sharebench::Expectation{{"my-check"}, {}});
//
// Lifecycle per cell repetition: a fresh Scenario object in the runner runs setup(); each worker
// (a process or a thread, per start method) constructs its own object with the same CellConfig
// and runs work(); after every worker has ended, the runner's object runs check(). State shared
// between them lives in the arena only: a member set in setup() is NOT visible in work() under
// spawn or forkserver.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/arena/shared_arena.h"
#include "harness/results/results.h"
#include "harness/scenario/scenario_option.h"
#include "harness/config/cell_config.h"
#include "harness/scenario/worker_slot.h"

namespace sharebench {

class SetupContext {
 public:
  SetupContext(const CellConfig& cell, SharedArena& arena, std::string private_dir = "")
      : cell_(cell), arena_(arena), private_dir_(std::move(private_dir)) {}
  const CellConfig& cell() const { return cell_; }
  SharedArena& arena() { return arena_; }
  // A path for `name` in the repetition's private directory: 0700, made with mkdtemp, reachable by
  // this user alone, removed with its contents when the repetition ends. Put every rendezvous
  // there (a Unix socket, a c10d FileStore): no other user can connect to it, squat its name or
  // redirect it with a symlink, and nothing of it outlives the repetition.
  std::string private_path(const std::string& name) const;

 private:
  const CellConfig& cell_;
  SharedArena& arena_;
  std::string private_dir_;
};

class WorkerContext {
 public:
  WorkerContext(const CellConfig& cell, SharedArena& arena, int rank);
  const CellConfig& cell() const { return cell_; }
  SharedArena& arena() { return arena_; }
  int rank() const { return rank_; }
  int procs() const { return cell_.procs; }

  // Waits until every worker is ready, then starts the clock. Call once, before the timed loop.
  void wait_for_start();
  // Reports progress to the watchdog: call at least once per unit of work (a step, a message).
  void beat(std::int64_t steps_done);
  // True once another worker of this repetition died or failed. A loop that waits on a peer (a
  // reader until the writer is done, a consumer until the producer's last message) checks it and
  // ends, so a dead peer ends the cell at once instead of at its deadline.
  bool peer_failed() const;
  // Seconds since this worker left the start barrier.
  double elapsed_s() const;
  // A named figure for check(); the last value for a name wins.
  void metric(std::string_view name, double value);
  // A point of this worker's loss curve (or other series); kept up to WorkerSlot::kMaxSeriesPoints.
  void record_point(double step, double value);
  // Marks the end of the timed region; the harness calls it if work() returns without it.
  void finish();

  WorkerSlot& slot() { return *slot_; }

 private:
  const CellConfig& cell_;
  SharedArena& arena_;
  HarnessBlock* block_;
  WorkerSlot* slot_;
  int rank_;
  std::int64_t next_memory_reading_ns_ = 0;  // beat() reads its own process's memory at most this often
};

// What check() sees of one worker.
struct WorkerView {
  int rank;
  bool completed;  // returned from work() normally
  std::int64_t steps;
  double run_s;    // between start barrier and finish
  const WorkerSlot* slot;
  double metric(std::string_view name, double fallback = 0) const;
};

class CheckContext {
 public:
  CheckContext(const CellConfig& cell, SharedArena& arena, Repetition& rep);
  const CellConfig& cell() const { return cell_; }
  SharedArena& arena() { return arena_; }
  const std::vector<WorkerView>& workers() const { return workers_; }
  // True when every worker returned from work(): totals are exact. When false, a killed worker's
  // last step is indeterminate and count-based checks should say unknown.
  bool all_completed() const;
  // Sum of a worker metric over all workers.
  double sum_metric(std::string_view name) const;

  void check(std::string name, Verdict verdict, std::optional<double> value, std::string message);
  // The same, with how often the situation the check guards against arose (results.h: Exposure),
  // said after the message, with what to raise (`--steps or --procs`) when it never did.
  void check(std::string name, Verdict verdict, std::optional<double> value, std::string message,
             const Exposure& exposure, const std::string& to_raise);
  void metric(std::string name, double value);
  void series(Series s);
  // Each worker's recorded points (WorkerContext::record_point) as a series `name`, one per rank;
  // and, when the harness measured steps_per_s, samples_per_s for `batch` samples a step.
  void worker_series(const std::string& name, std::int64_t batch);
  Repetition& repetition() { return rep_; }

 private:
  const CellConfig& cell_;
  SharedArena& arena_;
  Repetition& rep_;
  std::vector<WorkerView> workers_;
};

class Scenario {
 public:
  virtual ~Scenario() = default;
  virtual void setup(SetupContext& ctx) = 0;
  virtual void work(WorkerContext& ctx) = 0;
  virtual void check(CheckContext& ctx) = 0;
  // Runner, when the watchdog gives up on the workers (hang, deadline, interrupt): they are frozen
  // and not yet killed. Snapshot here what only a live, stuck state shows (lock owners, waiters);
  // check() runs afterwards on the same object.
  virtual void before_teardown(SharedArena& /*arena*/) {}
  // Runner, before setup(): why this cell cannot run here (no GPU, a start method the variant
  // cannot use), or nullopt. A reason makes the cell `skipped`, with the reason in the results.
  virtual std::optional<std::string> unavailable() const { return std::nullopt; }
  // Worker, before its open descriptors are counted for the no-leaks check and before work():
  // open what a library keeps for the process's lifetime (the CUDA driver's eventfd, pipes and
  // device files), so that it is not read as a leak of work().
  virtual void prepare_worker_process() {}
};

struct VariantInfo {
  std::string name;
  std::string description;
  bool known_bug = false;
  Expectation expect;       // applies at procs >= min_procs; below it the variant must be clean
  int min_procs_for_bug = 2;
  std::vector<StartMethod> bug_starts;  // the start methods the bug shows under; empty: all
  bool locks_every_step = false;        // workers take a ProcessMutex in every step
  std::string no_random_faults;         // why random fault plans (`soak`) leave this clean variant out
  std::vector<std::string> must_fail_under_chaos;  // may-fail checks that --chaos makes certain
  std::vector<std::pair<std::string, std::string>> opt_outs;  // harness check → why not for this variant
  bool bug_shows_under(StartMethod m) const {
    return bug_starts.empty() || std::find(bug_starts.begin(), bug_starts.end(), m) != bug_starts.end();
  }
  Expectation expectation_for(int procs, StartMethod start, bool chaos = false) const {
    if (!(known_bug && procs >= min_procs_for_bug && bug_shows_under(start))) return Expectation{};
    Expectation e = expect;
    if (chaos) {
      for (const std::string& check : must_fail_under_chaos) {
        e.may_fail.erase(std::remove(e.may_fail.begin(), e.may_fail.end(), check), e.may_fail.end());
        e.must_fail.push_back(check);
      }
    }
    return e;
  }
};

class ScenarioInfo {
 public:
  using Factory = std::function<std::unique_ptr<Scenario>(const CellConfig&)>;
  ScenarioInfo(std::string name, Factory factory) : name_(std::move(name)), factory_(std::move(factory)) {}

  ScenarioInfo* Describe(std::string text) { description_ = std::move(text); return this; }
  ScenarioInfo* Variant(std::string name, std::string description);
  // A variant that plants a bug; `expect` says which checks must catch it at >= min_procs.
  ScenarioInfo* KnownBug(std::string name, std::string description, Expectation expect, int min_procs = 2);
  // The last known bug shows only under these start methods; under the others it must be clean
  // (a fork hazard: hangs under fork, clean under spawn and forkserver).
  ScenarioInfo* OnlyUnder(std::initializer_list<StartMethod> methods);
  // The last variant's workers take a ProcessMutex in every step: `soak` may then kill a worker
  // while it holds the lock (kill-holding-lock: the worker's next acquisition after the planned
  // step kills its own process, however briefly the lock is held), and the lock must be recovered.
  ScenarioInfo* LocksEveryStep();
  // The last known bug's may-fail checks that must fail under --chaos: a bug that needs an unlucky
  // interleaving, which chaos makes certain (docs/chaos.md measures each one).
  ScenarioInfo* MustFailUnderChaos(std::initializer_list<std::string> checks);
  // `soak` leaves the last (clean) variant out, saying why (shown by `list`). Without it, `soak`
  // draws from every clean variant of every scenario that has not opted out of "soak".
  ScenarioInfo* NoRandomFaults(std::string reason);
  // Start methods this scenario supports (default: all four).
  ScenarioInfo* Starts(std::initializer_list<StartMethod> methods);
  // The fewest processes a cell needs (a producer and a consumer: 2). Smaller counts in a
  // requested matrix are left out; asking only for them is a usage error.
  ScenarioInfo* MinProcs(int procs) { min_procs_ = procs; return this; }
  // What the workers produce, which picks the report columns (default: lock-only, operations/s).
  ScenarioInfo* Kind(ScenarioKind kind) { kind_ = kind; return this; }
  // Its workers share the model `--model` names, whatever its kind (training and inference
  // scenarios always do): a `--model` list is then one of its matrix axes. Without it, a scenario
  // of another kind runs once, on the default model's config.
  ScenarioInfo* SharesModel() { shares_model_ = true; return this; }
  // Its cells run a user's program (CellConfig::command): only the command `command` plans them
  // (`sharebench exec`), the default matrix leaves the scenario out, and a cell's variant is what
  // `variant_flag` chose ("--mp-start spawn"; the first variant is the default, given by no flag).
  // A cell's reproduce line is then `COMMAND [VARIANT_FLAG VARIANT] [flags] -- PROGRAM`.
  ScenarioInfo* RunsCommand(std::string command, std::string variant_flag) {
    runs_command_ = true;
    command_ = std::move(command);
    variant_flag_ = std::move(variant_flag);
    return this;
  }
  // Options of the scenario's own (scenario_option.h): a flag each, stored in CellConfig::options.
  ScenarioInfo* IntOption(std::string name, std::int64_t default_value, std::int64_t min, std::int64_t max,
                          std::string help);
  ScenarioInfo* DoubleOption(std::string name, double default_value, double min, double max, std::string help);
  ScenarioInfo* ChoiceOption(std::string name, std::string default_value, std::vector<std::string> choices,
                             std::string help);
  const std::vector<ScenarioOption>& options() const { return options_; }
  // Switches one of the harness's own detectors off for this scenario, saying why (shown by
  // `list`): ->OptOut("memory", "the producer's buffers grow with the message size by design").
  ScenarioInfo* OptOut(std::string check, std::string reason) {
    opt_outs_.emplace_back(std::move(check), std::move(reason));
    return this;
  }
  // The same for the last variant alone (a lock-free variant beside a locked one: its race is by
  // design, the locked one's would be a bug): ->VariantOptOut("sanitizer", "...").
  ScenarioInfo* VariantOptOut(std::string check, std::string reason);
  // Whether `check` is off for the scenario, or (given) for its variant `variant`.
  bool opted_out(std::string_view check, std::string_view variant = {}) const {
    const auto named = [&](const auto& o) { return o.first == check; };
    if (std::any_of(opt_outs_.begin(), opt_outs_.end(), named)) return true;
    const VariantInfo* v = variant.empty() ? nullptr : find_variant(variant);
    return v != nullptr && std::any_of(v->opt_outs.begin(), v->opt_outs.end(), named);
  }
  const std::vector<std::pair<std::string, std::string>>& opt_outs() const { return opt_outs_; }
  // Checks of the scenario's own that must still pass when a fault is injected (exec's: nothing left
  // behind, whatever the program did about the fault): ->MustPassUnderFault({"no-survivors"}).
  ScenarioInfo* MustPassUnderFault(std::vector<std::string> checks) {
    must_pass_under_fault_ = std::move(checks);
    return this;
  }
  const std::vector<std::string>& must_pass_under_fault() const { return must_pass_under_fault_; }

  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  const std::vector<VariantInfo>& variants() const { return variants_; }
  const VariantInfo* find_variant(std::string_view v) const;
  bool supports(StartMethod m) const;
  const std::vector<StartMethod>& starts() const { return starts_; }
  int min_procs() const { return min_procs_; }
  ScenarioKind kind() const { return kind_; }
  bool runs_command() const { return runs_command_; }
  const std::string& command() const { return command_; }
  const std::string& variant_flag() const { return variant_flag_; }
  bool shares_model() const {
    return shares_model_ || kind_ == ScenarioKind::kTraining || kind_ == ScenarioKind::kInference;
  }
  std::unique_ptr<Scenario> create(const CellConfig& c) const { return factory_(c); }

 private:
  std::string name_;
  std::string description_;
  Factory factory_;
  std::vector<VariantInfo> variants_;
  std::vector<StartMethod> starts_ = all_start_methods();
  int min_procs_ = 1;
  ScenarioKind kind_ = ScenarioKind::kLockOnly;
  bool shares_model_ = false;
  bool runs_command_ = false;
  std::string command_;       // RunsCommand: the command that plans its cells
  std::string variant_flag_;  // and its flag that chooses the variant
  std::vector<std::pair<std::string, std::string>> opt_outs_;  // harness check → why not here
  std::vector<ScenarioOption> options_;
  std::vector<std::string> must_pass_under_fault_;
};

// The process-wide registry, filled by SHAREBENCH_SCENARIO at static-initialisation time.
class ScenarioRegistry {
 public:
  static ScenarioRegistry& instance();
  ScenarioInfo* add(std::unique_ptr<ScenarioInfo> info);
  const ScenarioInfo* find(std::string_view name) const;
  std::vector<const ScenarioInfo*> all() const;  // sorted by name

 private:
  std::vector<std::unique_ptr<ScenarioInfo>> scenarios_;
};

template <typename T>
ScenarioInfo* RegisterScenario(std::string name) {
  return ScenarioRegistry::instance().add(std::make_unique<ScenarioInfo>(
      std::move(name), [](const CellConfig& c) -> std::unique_ptr<Scenario> {
        if constexpr (std::is_constructible_v<T, const CellConfig&>) {
          return std::make_unique<T>(c);
        } else {
          return std::make_unique<T>();
        }
      }));
}

}  // namespace sharebench

#define SHAREBENCH_CONCAT_INNER(a, b) a##b
#define SHAREBENCH_CONCAT(a, b) SHAREBENCH_CONCAT_INNER(a, b)
#define SHAREBENCH_SCENARIO(Class, name)                                                  \
  [[maybe_unused]] static ::sharebench::ScenarioInfo* SHAREBENCH_CONCAT(sharebench_scenario_, \
                                                                        __LINE__) =       \
      ::sharebench::RegisterScenario<Class>(name)
