// Scenario `averaging`: every worker trains a
// private replica; they agree through averaging, over one of three transports:
//   params-shm, grads-shm    shared-memory slots and the process-shared barrier
//   params-pipe, grads-pipe  a manager process that collects every vector over a Unix socket and
//                            sends the mean back (harness/ipc/averaging_manager.h)
//   params-gloo, grads-gloo  c10d all-reduce (ProcessGroupGloo), rendezvous through a FileStore or,
//                            under torchrun's variables, a TCPStore (gloo_transport.h)
// `params` averages parameters every --average-every steps; `grads` averages gradients every
// step, before the update: the serial equivalent is SGD on the workers' batches concatenated.
//   no-barrier   (known bug, shm) readers do not wait for writers: the first worker averages
//                before the others have written this round's parameters
//   skip-round   (known bug, shm) one replica skips one averaging round and drifts
// The shm and pipe transports sum in rank order, so correct replicas agree bit for bit; Gloo's
// all-reduce is held to kAllreduceTolerance instead (its reduction order is its own).
// Checks: replicas agree after every round (checksums per round and rank; for Gloo, the spread
// across ranks from all-reduce MAX and MIN); grads-* matches the large-batch serial gradient; all
// converge within tolerance of large-batch serial SGD.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "harness/ipc/averaging_manager.h"
#include "harness/proc/leak_check.h"
#include "harness/scenario/scenario.h"
#include "scenarios/averaging/gloo_transport.h"
#include "scenarios/shared_training.h"
#include "harness/checkers/replica_agreement.h"
#include "harness/checkers/value_checks.h"
#include "workload/serial_reference.h"
#include "workload/shared_model.h"
#include "workload/standard_workload.h"

namespace sharebench {

namespace {
constexpr const char* kState = "averaging.state";
constexpr const char* kSlots = "averaging.slots";
constexpr const char* kChecksums = "averaging.checksums";
// Rounds whose agreement is recorded (the first ones); later rounds still average.
constexpr std::int64_t kRecordedRounds = 4096;
// grads-shm against large-batch SGD, step by step: over the first kExactRounds steps rank 0 also
// computes the gradient of the concatenated batches on its current parameters; the averaged
// gradient must equal it up to float summation order. (Whole trajectories are no good oracle:
// SGD amplifies a 1e-8 rounding difference to 1e-3 within a thousand steps; measured in
// docs/scenarios.md.)
constexpr std::int64_t kExactRounds = 10;
constexpr double kGradientTolerance = 1e-5;
// Gloo: rounds whose cross-rank spread is measured (two extra all-reduces each), and the largest
// spread allowed between replicas after a round.
constexpr std::int64_t kSpreadRounds = 64;
constexpr double kAllreduceTolerance = 1e-6;

enum class Transport { kShm, kPipe, kGloo };
Transport transport_of(const std::string& variant) {
  if (variant.find("-pipe") != std::string::npos) return Transport::kPipe;
  if (variant.find("-gloo") != std::string::npos) return Transport::kGloo;
  return Transport::kShm;
}

struct AveragingState {
  explicit AveragingState(int procs) : written(static_cast<std::uint32_t>(procs)),
                                       read(static_cast<std::uint32_t>(procs)),
                                       rendezvous(static_cast<std::uint32_t>(procs)) {}
  ProcessBarrier written;     // every slot of this round is written
  ProcessBarrier read;        // every worker has read the slots: they may be overwritten
  ProcessBarrier rendezvous;  // orders the planted no-barrier bug; guards no data
  std::int64_t floats = 0;
  std::int64_t rounds = 0;
  char endpoint[108] = {};   // pipe: the manager's socket; gloo: the FileStore (both in the private directory)
  std::int32_t gloo_sequence = 0;  // gloo under torchrun: this repetition's port offset
};

std::int64_t parameter_floats(Model& model) {
  std::int64_t n = 0;
  for (const auto& p : model.parameters()) n += p.numel();
  return n;
}

// Copies every parameter (or gradient) into `out`, in module order.
void gather(Model& model, bool grads, float* out) {
  for (const auto& p : model.parameters()) {
    const torch::Tensor t = (grads ? p.grad() : p.detach()).contiguous();
    std::copy(t.data_ptr<float>(), t.data_ptr<float>() + t.numel(), out);
    out += t.numel();
  }
}

// Writes the mean of the slots, summed in rank order, into every parameter (or gradient).
void scatter_mean(Model& model, bool grads, const float* slots, int procs, std::int64_t floats) {
  std::int64_t offset = 0;
  for (auto& p : model.parameters()) {
    torch::Tensor t = grads ? p.mutable_grad() : p.data();
    float* dst = t.data_ptr<float>();
    for (std::int64_t k = 0; k < t.numel(); ++k) {
      float sum = 0;
      for (int r = 0; r < procs; ++r) sum += slots[r * floats + offset + k];
      dst[k] = sum / static_cast<float>(procs);
    }
    offset += t.numel();
  }
}

// Writes `flat` back into every parameter (or gradient), in module order.
void scatter(Model& model, bool grads, const float* flat) {
  for (auto& p : model.parameters()) {
    torch::Tensor t = grads ? p.mutable_grad() : p.data();
    std::copy(flat, flat + t.numel(), t.data_ptr<float>());
    flat += t.numel();
  }
}

class AveragingScenario : public Scenario {
 public:
  explicit AveragingScenario(const CellConfig& c)
      : cell_(c), grads_(c.variant.rfind("grads", 0) == 0), transport_(transport_of(c.variant)) {
    world_rank_offset_ = 0;
    world_ = c.procs;
    if (transport_ == Transport::kGloo) {
      torchrun_ = torchrun_env();
      if (torchrun_) {
        world_ = torchrun_->nodes * c.procs;
        world_rank_offset_ = torchrun_->node_rank * c.procs;
      }
    }
  }

  std::optional<std::string> unavailable() const override {
    return transport_ == Transport::kGloo ? gloo_unavailable() : std::nullopt;
  }

  void setup(SetupContext& ctx) override {
    const WorkloadOptions& w = cell_.workload;
    SharedArena& arena = ctx.arena();
    publish_dataset(arena, make_dataset(w));
    const auto owned = make_model(w);
    Model& model = *owned;
    publish_parameters(arena, model.parameters(), "initial");  // every replica starts from these
    auto* state = arena.create<AveragingState>(kState, cell_.procs);
    state->floats = parameter_floats(model);
    state->rounds = grads_ ? w.steps : w.steps / option_int(cell_, "average-every");
    // Both rendezvous live in the repetition's private directory: no other user can connect,
    // squat the name or plant a symlink there, and the directory goes with the repetition.
    const std::string endpoint = ctx.private_path(transport_ == Transport::kGloo ? "gloo-store" : "averaging.sock");
    if (endpoint.size() >= sizeof(state->endpoint)) {
      throw std::runtime_error(fmt::format("the rendezvous path {} is too long: set a shorter TMPDIR", endpoint));
    }
    std::snprintf(state->endpoint, sizeof(state->endpoint), "%s", endpoint.c_str());
    if (transport_ == Transport::kPipe) {
      manager_ = AveragingManager::start(endpoint, cell_.procs, state->floats, cell_.hang_timeout_s);
    }
    if (transport_ == Transport::kGloo) {
      static int gloo_sequence = 0;
      state->gloo_sequence = gloo_sequence++;
    }
    arena.allocate(kSlots, sizeof(float) * static_cast<std::size_t>(state->floats * cell_.procs));
    ReplicaLog::create(arena, kChecksums, cell_.procs, std::max<std::int64_t>(1, std::min(state->rounds, kRecordedRounds)));
    arena_tensor(arena, "final", {cell_.procs, state->floats});
  }

  void work(WorkerContext& ctx) override {
    const WorkloadOptions& w = cell_.workload;
    const std::int64_t average_every = option_int(cell_, "average-every");
    SharedArena& arena = ctx.arena();
    auto* state = arena.lookup<AveragingState>(kState);
    auto* slots = static_cast<float*>(arena.get(kSlots));
    ReplicaLog log = ReplicaLog::attach(arena, kChecksums);
    const Dataset data = bind_dataset(arena, w);
    // A private replica: a copy of the initial parameters, out of the arena.
    const auto owned = make_model(w);
    Model& model = *owned;
    copy_parameters(arena, model.parameters(), "initial");
    const auto params = model.parameters();
    std::vector<torch::Tensor> buffers;
    for (const auto& p : params) buffers.push_back(torch::zeros_like(p));
    const int rank = world_rank_offset_ + ctx.rank(), procs = world_;
    const std::int64_t floats = state->floats;
    if (transport_ == Transport::kPipe) pipe_ = std::make_unique<AveragingClient>(state->endpoint, ctx.rank(), io_timeout_s());
    if (transport_ == Transport::kGloo) {
      GlooRendezvous where{state->endpoint, torchrun_, state->gloo_sequence};
      gloo_ = std::make_unique<GlooAverager>(where, rank, world_, io_timeout_s());
    }
    std::vector<float> mine(static_cast<std::size_t>(floats));
    std::int64_t round = 0;
    double gradient_error = 0;
    const std::int64_t every = series_interval(w.steps);
    double window = 0;

    // One backward before the clock starts, so every gradient tensor exists before the first
    // round. Without it, under the thread start method, the first averaged gradient differed from
    // the large-batch one by about 0.02 (every later step: 1e-8) when two threads ran their first
    // backward at once; under fork, spawn and forkserver it made no difference. compute_gradients
    // zeroes the gradients again, so the training itself is unchanged.
    compute_gradients(model, batch_x(data, w, 0), batch_y(data, w, 0));
    ctx.wait_for_start();
    for (std::int64_t s = 0; s < w.steps; ++s) {
      const std::int64_t t = s * procs + rank;
      window += compute_gradients(model, batch_x(data, w, t), batch_y(data, w, t));
      if (grads_) {
        average(*state, model, /*grads=*/true, slots, ctx.rank(), round++, log);
        if (rank == 0 && s < kExactRounds) gradient_error = std::max(gradient_error, large_batch_error(model, data, s, procs));
      }
      apply_sgd(params, buffers, w.lr, w.momentum);
      if (!grads_ && (s + 1) % average_every == 0) average(*state, model, false, slots, ctx.rank(), round++, log);
      if ((s + 1) % every == 0) {
        ctx.record_point(static_cast<double>((s + 1) * procs), window / every);
        window = 0;
      }
      ctx.beat(s + 1);
    }
    ctx.finish();
    if (gloo_) {
      gloo_->barrier();  // nobody tears the group down while another rank still all-reduces
      ctx.metric("replica_spread", spread_);
    }
    if (grads_ && rank == 0) ctx.metric("gradient_max_abs_diff", gradient_error);
    if (rounds_ > 0) ctx.metric("round_ms", 1e3 * round_s_ / static_cast<double>(rounds_));
    gather(model, false, arena_view(arena, "final", {ctx.procs(), floats}).data_ptr<float>() + ctx.rank() * floats);
  }

  void check(CheckContext& ctx) override {
    const WorkloadOptions& w = cell_.workload;
    SharedArena& arena = ctx.arena();
    auto* state = arena.lookup<AveragingState>(kState);
    if (transport_ == Transport::kPipe) {
      const std::string how = manager_.finish(io_timeout_s());
      const bool clean = manager_.ended_cleanly();
      ctx.check(checks::kManagerExited, clean ? Verdict::kPass : Verdict::kFail, clean ? 0.0 : 1.0,
                fmt::format("the averaging manager process {}", how));
    }
    if (!ctx.all_completed()) {
      ctx.check(checks::kReplicasAgree, Verdict::kUnknown, std::nullopt, "a worker did not finish");
      return;
    }
    if (transport_ == Transport::kGloo) {  // summed in ring order: equal up to rounding, not bit for bit
      double spread = 0;
      for (const auto& wv : ctx.workers()) spread = std::max(spread, wv.metric("replica_spread", NAN));
      check_within(ctx, checks::kReplicasAgree, spread, kAllreduceTolerance,
                   fmt::format("after each of the first {} rounds, every parameter of the {} replicas",
                               std::min(std::min(state->rounds, kRecordedRounds), kSpreadRounds), world_));
    } else if (state->rounds == 0) {
      ctx.check(checks::kReplicasAgree, Verdict::kPass, 0.0,
                fmt::format("no averaging round in {} steps (--average-every {})", w.steps, option_int(cell_, "average-every")));
    } else {
      check_replicas_agree(ctx, ReplicaLog::attach(arena, kChecksums));
    }
    ctx.worker_series("loss", w.batch);
    // Against large-batch serial SGD over the same batches.
    const SerialReference& ref = serial_large_batch_reference(w, world_, w.steps);
    const torch::Tensor final = arena_view(arena, "final", {cell_.procs, state->floats});
    const auto owned = make_model(w);
    Model& model = *owned;
    {
      torch::NoGradGuard no_grad;
      std::int64_t offset = 0;
      for (auto& p : model.parameters()) {
        p.data().copy_(final[0].narrow(0, offset, p.numel()).view(p.sizes()));
        offset += p.numel();
      }
    }
    record_model_size(ctx, model);
    {
      double round_ms = 0;
      for (const auto& wv : ctx.workers()) round_ms = std::max(round_ms, wv.metric("round_ms", 0));
      if (round_ms > 0) ctx.metric("round_ms", round_ms);  // the slowest worker's mean round
    }
    const double loss = heldout_loss(model, bind_dataset(arena, w));
    check_convergence(ctx, loss, ref.heldout_loss, kConvergenceTolerance, "large-batch serial SGD");
    if (grads_ && world_rank_offset_ == 0) {  // global rank 0, which measured the gradient, is here
      const torch::Tensor expected = torch::from_blob(const_cast<float*>(ref.final_parameters.data()),
                                                      {state->floats}, torch::kFloat32);
      ctx.metric("final_max_abs_diff_from_serial", (final[0] - expected).abs().max().item<double>());
      check_within(ctx, checks::kMatchesSerial, ctx.workers().front().metric("gradient_max_abs_diff", NAN), kGradientTolerance,
                   fmt::format("over the first {} steps, at most, the averaged gradient against the large-batch one",
                               kExactRounds));
    }
  }

 private:
  double io_timeout_s() const { return std::max(1.0, cell_.hang_timeout_s); }

  // One averaging round. The known bugs live here, next to the barrier they break.
  void average(AveragingState& state, Model& model, bool grads, float* slots, int local_rank, std::int64_t round,
               ReplicaLog& log) {
    const std::int64_t floats = state.floats;
    const int procs = cell_.procs;
    const auto started = std::chrono::steady_clock::now();
    if (transport_ == Transport::kShm) {
      const bool no_barrier = cell_.variant == "no-barrier";
      if (no_barrier && round == 0 && local_rank != 0) state.rendezvous.wait();  // rank 0 reads first
      gather(model, grads, slots + local_rank * floats);
      if (!no_barrier) state.written.wait();  // the bug: without this wait, readers do not wait for writers
      const bool skip = cell_.variant == "skip-round" && local_rank == procs - 1 && round == 1;
      if (!skip) scatter_mean(model, grads, slots, procs, floats);
      if (no_barrier && round == 0 && local_rank == 0) state.rendezvous.wait();
      state.read.wait();
    } else {
      torch::Tensor flat = torch::empty({floats}, torch::kFloat32);
      gather(model, grads, flat.data_ptr<float>());
      if (pipe_) pipe_->mean(flat.data_ptr<float>(), floats);
      if (gloo_) gloo_->mean(flat);
      scatter(model, grads, flat.data_ptr<float>());
    }
    round_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    ++rounds_;
    if (round < kRecordedRounds) {
      std::vector<float> flat(static_cast<std::size_t>(floats));
      gather(model, false, flat.data());
      log.record(local_rank, round, checksum_words(flat.data(), flat.size() * sizeof(float)));
      if (gloo_ && round < kSpreadRounds) {
        spread_ = std::max(spread_, gloo_->spread(torch::from_blob(flat.data(), {floats}, torch::kFloat32)));
      }
    }
  }

  // The largest difference between the averaged gradient now in the model and the gradient of the
  // concatenated batches of step s at the same parameters; leaves the averaged gradient in place.
  double large_batch_error(Model& model, const Dataset& data, std::int64_t s, int procs) const {
    std::vector<torch::Tensor> averaged, xs, ys;
    for (const auto& p : model.parameters()) averaged.push_back(p.grad().clone());
    const WorkloadOptions& w = cell_.workload;
    for (int r = 0; r < procs; ++r) {
      xs.push_back(batch_x(data, w, s * procs + r));
      ys.push_back(batch_y(data, w, s * procs + r));
    }
    compute_gradients(model, torch::cat(xs), torch::cat(ys));
    double worst = 0;
    auto params = model.parameters();
    for (std::size_t i = 0; i < params.size(); ++i) {
      worst = std::max(worst, (params[i].grad() - averaged[i]).abs().max().item<double>());
      params[i].mutable_grad().copy_(averaged[i]);
    }
    return worst;
  }
  CellConfig cell_;
  bool grads_;
  Transport transport_;
  int world_ = 1;                // ranks in the averaging group (all nodes under torchrun)
  int world_rank_offset_ = 0;    // this node's first global rank
  std::optional<TorchrunEnv> torchrun_;
  AveragingManager manager_;     // runner: the pipe transport's manager process
  std::unique_ptr<AveragingClient> pipe_;  // worker
  std::unique_ptr<GlooAverager> gloo_;     // worker
  double spread_ = 0;                      // worker: largest cross-rank spread seen (gloo)
  double round_s_ = 0;                     // worker: wall time spent in averaging rounds
  std::int64_t rounds_ = 0;
};
}  // namespace

SHAREBENCH_SCENARIO(AveragingScenario, "averaging")
    ->Describe("private replicas averaged over shared memory, a manager process, or c10d Gloo")
    ->Kind(ScenarioKind::kTraining)
    ->IntOption("average-every", 10, 1, 100'000'000, "averaging: steps between parameter-averaging rounds")
    ->Variant("params-shm", "average parameters every --average-every steps")
    ->Variant("grads-shm", "average gradients every step (large-batch SGD)")
    ->Variant("params-pipe", "average parameters through a manager process over Unix sockets")
    ->Variant("grads-pipe", "average gradients through a manager process over Unix sockets")
    ->Variant("params-gloo", "average parameters with c10d Gloo all-reduce (FileStore, or TCPStore under torchrun)")
    ->Variant("grads-gloo", "average gradients with c10d Gloo all-reduce (FileStore, or TCPStore under torchrun)")
    ->KnownBug("no-barrier", "readers do not wait for writers before averaging", Expectation{{checks::kReplicasAgree}, {checks::kConvergence}})
    ->KnownBug("skip-round", "one replica skips one averaging round", Expectation{{checks::kReplicasAgree}, {checks::kConvergence}});

}  // namespace sharebench
