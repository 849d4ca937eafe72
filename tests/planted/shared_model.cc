// Planted: workers that train a model they were meant to share, but silently train a copy. The
// runner publishes a small LibTorch model's parameters into the arena (sharebench::torch's
// arena_tensors); each worker binds its own module to them and takes SGD steps. The installed
// `updates-reached-model` check (parameter_checks.h) and the harness's own `model-shared` check
// must fail for:
//   cloned     the worker replaces each parameter with a clone after binding (a deep copy)
//   to-double  the worker moves the module to float64 after binding: a dtype move copies too
// Twin `bound`: trains the bound parameters in place.
// And for a model that is only read (scenario `shared-reader`), where nothing else can tell:
//   round-trip one worker moves its module to float64 and back: the same values, in private memory
// Twin `bound`: reads the bound parameters.
#include <torch/torch.h>

#include <sharebench/sharebench.h>
#include <sharebench/torch.h>

namespace {

struct Published {
  std::uint64_t checksum = 0;
};

torch::nn::Linear make_model() { return torch::nn::Linear(16, 4); }

class SharedModel : public sharebench::Scenario {
 public:
  explicit SharedModel(const sharebench::CellConfig& c) : cell_(c) {}
  void setup(sharebench::SetupContext& ctx) override {
    sharebench::seed_cpu_generator(1);
    auto model = make_model();
    sharebench::publish_parameters(ctx.arena(), *model, "model");
    ctx.arena().create<Published>("published")->checksum = sharebench::parameter_checksum(*model);
  }
  void work(sharebench::WorkerContext& ctx) override {
    auto model = make_model();
    sharebench::bind_parameters(ctx.arena(), *model, "model");
    if (cell_.variant == "cloned") {
      torch::NoGradGuard no_grad;
      for (auto& p : model->parameters()) p.set_data(p.detach().clone());
    }
    auto dtype = torch::kFloat32;
    if (cell_.variant == "to-double") {
      model->to(torch::kFloat64);
      dtype = torch::kFloat64;
    }
    torch::optim::SGD sgd(model->parameters(), 0.01);
    sharebench::seed_cpu_generator(100 + ctx.rank());
    ctx.wait_for_start();
    for (int step = 1; step <= 20; ++step) {
      const auto x = torch::randn({8, 16}, dtype);
      sgd.zero_grad();
      model->forward(x).pow(2).mean().backward();
      sgd.step();
      ctx.beat(step);
    }
  }
  void check(sharebench::CheckContext& ctx) override {
    auto model = make_model();
    sharebench::bind_parameters(ctx.arena(), *model, "model");
    sharebench::check_parameters_changed(ctx, *model, ctx.arena().lookup<Published>("published")->checksum);
  }

 private:
  sharebench::CellConfig cell_;
};

// Readers of one shared model: forward passes only, on the model --model names (the installed
// model zoo and its data, workload/). The round trip through float64 in one worker changes no
// value anywhere, so the parameters stay as published and every output is right.
class SharedReader : public sharebench::Scenario {
 public:
  explicit SharedReader(const sharebench::CellConfig& c) : cell_(c) {}
  void setup(sharebench::SetupContext& ctx) override {
    sharebench::publish_dataset(ctx.arena(), sharebench::make_dataset(cell_.workload));
    auto model = sharebench::make_model(cell_.workload);
    sharebench::publish_parameters(ctx.arena(), model->parameters(), "reader");
    ctx.arena().create<Published>("published")->checksum = sharebench::parameter_checksum(model->parameters());
  }
  void work(sharebench::WorkerContext& ctx) override {
    const sharebench::WorkloadOptions& w = cell_.workload;
    const sharebench::Dataset data = sharebench::bind_dataset(ctx.arena(), w);
    auto model = sharebench::make_model(w);
    sharebench::bind_parameters(ctx.arena(), model->parameters(), "reader");
    if (cell_.variant == "round-trip" && ctx.rank() == 0) {
      for (auto& p : model->parameters()) p.set_data(p.to(torch::kFloat64).to(torch::kFloat32));
    }
    torch::NoGradGuard no_grad;
    ctx.wait_for_start();
    for (int step = 1; step <= 20; ++step) {
      (void)model->forward(sharebench::batch_x(data, w, step * ctx.procs() + ctx.rank())).sum().item<float>();
      ctx.beat(step);
    }
  }
  void check(sharebench::CheckContext& ctx) override {
    auto model = sharebench::make_model(cell_.workload);
    sharebench::bind_parameters(ctx.arena(), model->parameters(), "reader");
    sharebench::check_parameters_unchanged(ctx, model->parameters(), ctx.arena().lookup<Published>("published")->checksum);
    sharebench::record_model_size(ctx, *model);
  }

 private:
  sharebench::CellConfig cell_;
};

}  // namespace

// What the harness must say of each planted bug, in every repetition under every start method
// (tests/planted_pair_test.py reads these lines: `expect SCENARIO/VARIANT: CHECK says "WORDS"...`).
// expect shared-reader/round-trip: model-shared says "rank 0:" "in private memory" "reader"
SHAREBENCH_SCENARIO(SharedReader, "shared-reader")
    ->Describe("workers read the model --model names, whose parameters live in the arena")
    ->Kind(sharebench::ScenarioKind::kInference)
    ->Variant("bound", "reads the bound parameters")
    ->KnownBug("round-trip", "one worker moves its module to float64 and back after binding",
               sharebench::Expectation{{"model-shared"}}, 1);

// What the harness must say of each planted bug, in every repetition under every start method
// (tests/planted_pair_test.py reads these lines: `expect SCENARIO/VARIANT: CHECK says "WORDS"...`).
// expect shared-model/cloned: updates-reached-model says "no update reached"
// expect shared-model/cloned: model-shared says "in private memory"
// expect shared-model/to-double: updates-reached-model says "no update reached"
// expect shared-model/to-double: model-shared says "in private memory"
SHAREBENCH_SCENARIO(SharedModel, "shared-model")
    ->Describe("workers train one small model whose parameters live in the arena")
    ->Variant("bound", "trains the bound parameters in place")
    ->KnownBug("cloned", "clones each parameter after binding",
               sharebench::Expectation{{"updates-reached-model", "model-shared"}}, 1)
    ->KnownBug("to-double", "moves the module to float64 after binding",
               sharebench::Expectation{{"updates-reached-model", "model-shared"}}, 1);
