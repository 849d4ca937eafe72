// What the interpreter costs beside the work: one forward pass of the standard MLP (batch 32,
// input 64, two hidden layers, 10 classes) under no-grad, as the inference scenario runs it, at the
// standard width (256: the matrix products are most of the time) and at width 8 (the products are
// nearly free, so what is left is the per-operator cost of LibTorch's dispatcher). The same two
// widths in Python (bench/peers/forward_overhead.py) give the interpreter's cost per forward; their
// difference is all a C++ harness can save per step over a torch.multiprocessing program of the
// same model, which bounds the ratio `sharebench peers` can show (docs/performance.md).
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include "workload/standard_workload.h"

namespace sharebench::bench {
namespace {

void BM_MlpForward(benchmark::State& state) {
  torch::set_num_threads(1);
  WorkloadOptions w;
  w.hidden = state.range(0);
  const Dataset data = make_dataset(w);
  const auto model = make_model(w);
  torch::NoGradGuard no_grad;
  const std::int64_t batches = data.test_x.size(0) / w.batch;
  std::int64_t s = 0;
  for (auto _ : state) {
    const torch::Tensor out = model->forward(data.test_x.narrow(0, (s++ % batches) * w.batch, w.batch));
    benchmark::DoNotOptimize(out.data_ptr());
  }
}
BENCHMARK(BM_MlpForward)->Arg(8)->Arg(256)->ArgName("hidden")->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace sharebench::bench
