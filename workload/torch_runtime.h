// torch_runtime: LibTorch settings every process of a run needs before its first op. Workers set
// their intra-op thread count first thing (a fork child that inherits an OpenMP pool in use hangs
// on its first parallel op, seed 001), and the runner keeps its own to the same count.
// Including this header does not include LibTorch.
#pragma once

namespace sharebench {

// In the runner, once, after the forkserver has been started.
void configure_runner_torch(int threads);

}  // namespace sharebench
