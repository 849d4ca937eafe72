// SharedTrainingScenario: the training loop shared by `locked` and `hogwild`, and its checks.
#include "scenarios/shared_training.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "torch_support/parameter_checks.h"
#include "workload/serial_reference.h"
#include "workload/shared_model.h"
#include "workload/standard_workload.h"

namespace sharebench {

namespace {
constexpr const char* kStateRegion = "training.state";
constexpr const char* kParamsPrefix = "model";
constexpr const char* kMomentumPrefix = "momentum";

}  // namespace

// A worker that dies in the middle of its critical section, without unlocking: the process is
// killed; a thread (thread start method) ends itself without unwinding, so no destructor unlocks.
// Either way the kernel marks the robust mutex owner-dead for the next locker.
void SharedTrainingScenario::die_holding_the_lock() const {
  if (cell_.start == StartMethod::kThread) ::syscall(SYS_exit, 0);
  ::raise(SIGKILL);
  std::abort();  // not reached: SIGKILL cannot be caught
}

void SharedTrainingScenario::setup(SetupContext& ctx) {
  const WorkloadOptions& w = cell_.workload;
  SharedArena& arena = ctx.arena();
  auto* state = arena.create<SharedState>(kStateRegion);
  const auto model = publish_training_workload(arena, w, kParamsPrefix);
  state->initial_checksum = parameter_checksum(model->parameters());
  if (w.momentum > 0) parameter_shaped(arena, model->parameters(), kMomentumPrefix, /*create=*/true);
}

void SharedTrainingScenario::work(WorkerContext& ctx) {
  const WorkloadOptions& w = cell_.workload;
  SharedArena& arena = ctx.arena();
  auto* state = arena.lookup<SharedState>(kStateRegion);
  const Dataset data = bind_dataset(arena, w);
  const auto model = make_model(w);
  bind_parameters(arena, model->parameters(), kParamsPrefix);
  if (planted_ == Planted::kForkedCopy) {
    // The mistake: the worker trains a copy. After fork, a deep copy of a model (or gradients
    // computed on one) lives in copy-on-write private pages; the shared parameters never move.
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.set_data(p.detach().clone());
  }
  const auto params = model->parameters();
  std::vector<torch::Tensor> buffers;
  if (w.momentum > 0) buffers = parameter_shaped(arena, params, kMomentumPrefix, /*create=*/false);

  // The bug of kLocalLock: this lock lives in the worker's private memory.
  ProcessMutex private_lock("private-lock");
  ProcessMutex& lock = policy_ == LockPolicy::kLocalLock ? private_lock : state->mutex;

  const int rank = ctx.rank();
  const std::int64_t every = series_interval(w.steps);
  std::int64_t wait_ns = 0;
  double window = 0;

  ctx.wait_for_start();
  for (std::int64_t s = 0; s < w.steps; ++s) {
    const std::int64_t t = s * ctx.procs() + rank;
    const torch::Tensor x = batch_x(data, w, t);
    const torch::Tensor y = batch_y(data, w, t);
    double loss = 0;
    if (planted_ == Planted::kOwnerDeath && ctx.procs() >= 2 && rank != ctx.procs() - 1 && s == 0) {
      // Order, not protect: the others take their first lock only once the victim holds it and is
      // dying, so somebody is certain to meet the dead owner.
      while (state->owner_dying.load() == 0) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        ctx.beat(0);
      }
    }
    // Every locked step: the wait, and a dead owner's lock recovered (it never left its section:
    // repair the instrumentation it left behind).
    const auto note_acquired = [&](const ProcessLockGuard& guard) {
      wait_ns += guard.result().waited_ns;
      if (guard.result().recovered_owner_death) {
        state->recovered_by.store(rank);
        state->section.repair_after_owner_death();
      }
    };
    switch (policy_) {
      case LockPolicy::kWholeStep:
      case LockPolicy::kLocalLock: {
        ProcessLockGuard guard(lock, rank);
        note_acquired(guard);
        if (planted_ == Planted::kOwnerDeath && ctx.procs() >= 2 && rank == ctx.procs() - 1 && s == 0) {
          state->owner_dying.store(1);
          die_holding_the_lock();
        }
        GuardedSection section(state->section);
        loss = compute_gradients(*model, x, y);
        apply_sgd(params, buffers, w.lr, w.momentum);
        break;
      }
      case LockPolicy::kUpdateOnly: {
        loss = compute_gradients(*model, x, y);
        ProcessLockGuard guard(lock, rank);
        note_acquired(guard);
        GuardedSection section(state->section);
        apply_sgd(params, buffers, w.lr, w.momentum);
        break;
      }
      case LockPolicy::kNone: {
        loss = compute_gradients(*model, x, y);
        GuardedSection section(state->section);
        apply_sgd(params, buffers, w.lr, w.momentum);
        break;
      }
    }
    window += loss;
    if ((s + 1) % every == 0) {
      ctx.record_point(static_cast<double>((s + 1) * ctx.procs()), window / every);
      window = 0;
    }
    ctx.beat(s + 1);  // and pauses for --step-delay-us, when set
  }
  ctx.finish();
  ctx.metric("lock_wait_s", wait_ns * 1e-9);
}

void SharedTrainingScenario::check(CheckContext& ctx) {
  const WorkloadOptions& w = cell_.workload;
  SharedArena& arena = ctx.arena();
  const bool exact = ctx.all_completed();
  auto& state = *arena.lookup<SharedState>(kStateRegion);  // not const: the checker may recover its lock

  std::int64_t steps = 0;
  double run_s = 0;
  for (const auto& wv : ctx.workers()) {
    steps += wv.steps;
    run_s += wv.run_s;
  }
  ctx.worker_series("loss", w.batch);

  // Hogwild: figures, no verdict. The local-lock bug's shared lock is one nobody takes: no exposure.
  judge_training_section(ctx, state.section, uses_lock(), steps, run_s,
                         policy_ == LockPolicy::kLocalLock ? nullptr : &state.mutex);
  {
    const auto shared = make_model(w);
    bind_parameters(arena, shared->parameters(), kParamsPrefix);
    check_parameters_changed(ctx, shared->parameters(), state.initial_checksum);
    record_model_size(ctx, *shared);
  }
  // A rank that died holding the lock after every survivor had taken it for the last time (an
  // unfair mutex lets one rank run far ahead) left it owner-dead with nobody to recover it: the
  // checker takes it once, so whether the lock is recoverable is judged whatever the schedule.
  bool recovered_by_checker = false;
  if (uses_lock() && state.mutex.try_lock(0, &recovered_by_checker)) state.mutex.unlock();
  // A planted owner death, or one a fault injected (kill-holding-lock): the lock must be recovered.
  if ((planted_ == Planted::kOwnerDeath && ctx.cell().procs >= 2) || state.mutex.owner_deaths() > 0) {
    const auto deaths = state.mutex.owner_deaths();
    const auto by = state.recovered_by.load();
    int survivors_done = 0;
    std::vector<int> dead;
    for (const auto& wv : ctx.workers()) {
      survivors_done += wv.completed ? 1 : 0;
      if (!wv.completed) dead.push_back(wv.rank);
    }
    const bool ok = deaths >= 1 && (by >= 0 || recovered_by_checker) &&
                    survivors_done == ctx.cell().procs - static_cast<int>(deaths);
    const std::string recoverer = by >= 0 ? fmt::format("rank {}", by) : "the checker, after the survivors had finished,";
    ctx.check(checks::kOwnerDeathRecovered, ok ? Verdict::kPass : Verdict::kFail, static_cast<double>(deaths),
              ok ? fmt::format("rank {} died holding the lock; {} recovered it (EOWNERDEAD, made consistent) "
                               "and the {} survivor(s) finished", fmt::join(dead, ", "), recoverer, survivors_done)
                 : fmt::format("owner deaths {}, recovered by rank {}, {} survivor(s) finished", deaths, by,
                               survivors_done));
  }

  // Convergence against the serial reference of the same total steps.
  if (!exact || steps == 0) {
    ctx.check(checks::kConvergence, Verdict::kUnknown, std::nullopt, "training did not complete");
    return;
  }
  const SerialReference& ref = serial_reference(w, steps);
  const auto model = make_model(w);
  bind_parameters(arena, model->parameters(), kParamsPrefix);
  const double loss = heldout_loss(*model, bind_dataset(arena, w));
  ctx.metric("serial_steps_per_s", ref.steps_per_s);
  ctx.series(Series{"serial-loss", -1, ref.loss});
  check_convergence(ctx, loss, ref.heldout_loss, kConvergenceTolerance, fmt::format("a serial run of {} steps", steps));
}

}  // namespace sharebench
