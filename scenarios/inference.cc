// Scenario `inference`: workers run forward passes under no-grad on a model
// whose parameters live in the arena; nobody writes. Must hold: every worker's output on a probe
// batch is bit-identical to the runner's reference, and the parameters' checksum is unchanged.
//   read-only  the correct pattern: no lock needed because nobody writes
//   writer     (known bug) one worker nudges a weight before the others start: a process that
//              "only reads" but writes. Both checks must catch it.
// Metrics: samples/s, per-batch latency p50 and p99, and scaling efficiency against one process
// doing the same forward passes in the runner.
#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "harness/scenario/scenario.h"
#include "torch_support/parameter_checks.h"
#include "workload/shared_model.h"
#include "workload/standard_workload.h"

namespace sharebench {

namespace {
constexpr const char* kParams = "model";
constexpr const char* kReference = "inference.reference";
constexpr const char* kState = "inference.state";
constexpr std::int64_t kProbeRows = 64;

struct InferenceState {
  std::uint64_t checksum = 0;  // of the parameters, taken by the runner before launch
};

torch::Tensor probe_batch(const Dataset& d) { return d.test_x.narrow(0, 0, kProbeRows); }

torch::Tensor inference_batch(const Dataset& d, const WorkloadOptions& w, std::int64_t t) {
  const std::int64_t batches = std::max<std::int64_t>(1, d.test_x.size(0) / w.batch);
  return d.test_x.narrow(0, (t % batches) * w.batch, w.batch);
}

// One process doing the same number of forward passes as one worker: the scaling baseline.
double serial_samples_per_s(const WorkloadOptions& w, Model& model, const Dataset& d) {
  static std::mutex mu;
  static std::map<std::string, double> cache;
  const std::string key = fmt::format("{}/{}/{}/{}/{}/{}", w.batch, w.hidden, w.input, w.steps, w.seed, w.model);
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  torch::NoGradGuard no_grad;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::int64_t s = 0; s < w.steps; ++s) model.forward(inference_batch(d, w, s));
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return cache[key] = elapsed > 0 ? static_cast<double>(w.steps * w.batch) / elapsed : 0;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

class InferenceScenario : public Scenario {
 public:
  explicit InferenceScenario(const CellConfig& c) : cell_(c) {}

  void setup(SetupContext& ctx) override {
    const WorkloadOptions& w = cell_.workload;
    SharedArena& arena = ctx.arena();
    const Dataset data = make_dataset(w);
    publish_dataset(arena, data);
    const auto model = make_model(w);
    publish_parameters(arena, model->parameters(), kParams);
    torch::NoGradGuard no_grad;
    const torch::Tensor reference = model->forward(probe_batch(data));
    arena_tensor(arena, kReference, reference.sizes()).copy_(reference);
    arena.create<InferenceState>(kState)->checksum = parameter_checksum(model->parameters());
  }

  void work(WorkerContext& ctx) override {
    const WorkloadOptions& w = cell_.workload;
    SharedArena& arena = ctx.arena();
    const Dataset data = bind_dataset(arena, w);
    const auto model = make_model(w);
    bind_parameters(arena, model->parameters(), kParams);
    torch::NoGradGuard no_grad;
    if (cell_.variant == "writer" && ctx.rank() == 0) {
      // The planted bug: a reader that writes. Before the start barrier, so every other worker's
      // probe (taken after its last batch) sees it.
      model->parameters()[0].data().view(-1)[0].add_(1e-3);
    }
    if (cell_.variant == "private-copy" && ctx.rank() == 0) {
      // The planted bug: a round trip through float64 gives the same values in new, private
      // storage. Every probe still matches and nothing shared changes: only where the bytes live
      // tells.
      for (auto& p : model->parameters()) p.set_data(p.to(torch::kFloat64).to(torch::kFloat32));
    }
    std::vector<double> latencies_us;
    latencies_us.reserve(static_cast<std::size_t>(w.steps));
    ctx.wait_for_start();
    for (std::int64_t s = 0; s < w.steps; ++s) {
      const auto t0 = std::chrono::steady_clock::now();
      const torch::Tensor out = model->forward(inference_batch(data, w, s * ctx.procs() + ctx.rank()));
      (void)out.data_ptr();  // the result exists: CPU ops are synchronous
      latencies_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      ctx.beat(s + 1);
    }
    ctx.finish();
    const torch::Tensor probe = model->forward(probe_batch(data));
    const torch::Tensor reference = arena_view(arena, kReference, probe.sizes());
    ctx.metric("probe_identical", torch::equal(probe, reference) ? 1 : 0);
    ctx.metric("probe_max_abs_diff", (probe - reference).abs().max().item<double>());
    ctx.metric("latency_p50_us", percentile(latencies_us, 0.50));
    ctx.metric("latency_p99_us", percentile(latencies_us, 0.99));
  }

  void check(CheckContext& ctx) override {
    const WorkloadOptions& w = cell_.workload;
    SharedArena& arena = ctx.arena();
    const auto model = make_model(w);
    bind_parameters(arena, model->parameters(), kParams);
    check_parameters_unchanged(ctx, model->parameters(), arena.lookup<InferenceState>(kState)->checksum);
    record_model_size(ctx, *model);
    if (!ctx.all_completed()) {
      ctx.check(checks::kProbeIdentical, Verdict::kUnknown, std::nullopt, "a worker did not finish");
      return;
    }
    int differing = 0;
    double worst = 0, p50 = 0, p99 = 0;
    for (const auto& wv : ctx.workers()) {
      differing += wv.metric("probe_identical") == 1 ? 0 : 1;
      worst = std::max(worst, wv.metric("probe_max_abs_diff"));
      p50 += wv.metric("latency_p50_us") / static_cast<double>(ctx.workers().size());
      p99 = std::max(p99, wv.metric("latency_p99_us"));
    }
    ctx.check(checks::kProbeIdentical, differing == 0 ? Verdict::kPass : Verdict::kFail, differing,
              differing == 0 ? "every worker's probe output is bit-identical to the reference"
                             : fmt::format("{} of {} workers computed a different probe output (max |diff| {:.3g})",
                                           differing, ctx.workers().size(), worst));
    ctx.metric("latency_p50_us", p50);
    ctx.metric("latency_p99_us", p99);
    const auto sps = ctx.repetition().metrics.find("steps_per_s");
    if (sps != ctx.repetition().metrics.end()) {
      const double samples = sps->second * static_cast<double>(w.batch);
      ctx.metric("samples_per_s", samples);
      const double serial = serial_samples_per_s(w, *model, bind_dataset(arena, w));
      if (serial > 0) {
        ctx.metric("serial_samples_per_s", serial);
        ctx.metric("scaling_efficiency", samples / (serial * cell_.procs));
      }
    }
  }

 private:
  CellConfig cell_;
};
}  // namespace

SHAREBENCH_SCENARIO(InferenceScenario, "inference")
    ->Describe("forward passes on a model whose parameters live in shared memory; nobody writes")
    ->Kind(ScenarioKind::kInference)
    ->Variant("read-only", "workers only read the shared parameters")
    ->KnownBug("writer", "one worker writes a weight during a read-only run",
               Expectation{{checks::kParametersUnchanged, checks::kProbeIdentical}, {}}, /*min_procs=*/1)
    ->KnownBug("private-copy", "one worker moves the model to float64 and back: the same values in a private copy",
               Expectation{{checks::kModelShared}, {}}, /*min_procs=*/1);

}  // namespace sharebench
