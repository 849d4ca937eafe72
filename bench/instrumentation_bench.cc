// The cost of instrumentation: one step of the standard workload (batch, forward, backward, SGD
// update into parameters that live in a shared arena), bare and with everything the harness adds
// to a step in the locked and hogwild scenarios:
//   - the guarded section's occupancy counter and 64-double canary (harness/checkers/guarded_section.h),
//   - the heartbeat (WorkerContext::beat: step count, clock, heartbeat counter in the slot),
//   - a loss-series point every 20 steps (WorkerContext::record_point),
//   - timing: two clock reads around the section, as ProcessMutex does to measure lock waits.
// The two run in one process, one after the other, on the same arena-backed model; the goal is
// BM_StepInstrumented within 3 % of BM_StepBare (docs/performance.md). The lock itself is the
// strategy under test, not instrumentation, and is left out of both.
#include <atomic>

#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include "harness/arena/shared_arena.h"
#include "harness/checkers/guarded_section.h"
#include "harness/scenario/scenario.h"
#include "harness/util/clock.h"
#include "scenarios/shared_training.h"
#include "workload/shared_model.h"
#include "workload/standard_workload.h"

namespace sharebench::bench {
namespace {

struct StepFixture {
  StepFixture() : arena(SharedArena::create(std::size_t{64} << 20)) {
    cell.workload.steps = 1'000'000;
    torch::set_num_threads(1);
    data = make_dataset(cell.workload);
    model = make_model(cell.workload);
    publish_parameters(arena, model->parameters(), "model");
    bind_parameters(arena, model->parameters(), "model");
    params = model->parameters();
    block = arena.create<HarnessBlock>(HarnessBlock::kRegionName, 1);
    section = arena.create<SectionMonitor>("section");
  }
  void step(std::int64_t s) {
    const torch::Tensor x = batch_x(data, cell.workload, s);
    const torch::Tensor y = batch_y(data, cell.workload, s);
    last_loss = compute_gradients(*model, x, y);
    apply_sgd(params, {}, cell.workload.lr, 0.0);
  }

  CellConfig cell;
  SharedArena arena;
  Dataset data;
  std::unique_ptr<Model> model;
  std::vector<torch::Tensor> params;
  HarnessBlock* block = nullptr;
  SectionMonitor* section = nullptr;
  double last_loss = 0;
};

void BM_StepBare(benchmark::State& state) {
  StepFixture f;
  std::int64_t s = 0;
  for (auto _ : state) f.step(s++);
  benchmark::DoNotOptimize(f.last_loss);
}
BENCHMARK(BM_StepBare)->Unit(benchmark::kMicrosecond)->MinTime(2.0);

void BM_StepInstrumented(benchmark::State& state) {
  StepFixture f;
  WorkerContext ctx(f.cell, f.arena, 0);
  std::int64_t s = 0, waited_ns = 0;
  double window = 0;
  for (auto _ : state) {
    const std::int64_t t0 = monotonic_ns();
    {
      GuardedSection section(*f.section);
      waited_ns += monotonic_ns() - t0;
      f.step(s);
    }
    window += f.last_loss;
    ++s;
    if (s % 20 == 0) {
      ctx.record_point(static_cast<double>(s), window / 20);
      window = 0;
    }
    ctx.beat(s);
  }
  benchmark::DoNotOptimize(f.section->overlaps.load());
  benchmark::DoNotOptimize(waited_ns);
}
BENCHMARK(BM_StepInstrumented)->Unit(benchmark::kMicrosecond)->MinTime(2.0);

}  // namespace
}  // namespace sharebench::bench
