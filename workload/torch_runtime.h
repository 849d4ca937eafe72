// torch_runtime: LibTorch settings every process of a run needs before its first op. Workers set
// their intra-op thread count first thing (a fork child that inherits an OpenMP pool in use hangs
// on its first parallel op, seed 001), and the runner keeps its own to the same count.
// Both are hooks the harness calls (set_worker_init_hook, set_runner_init_hook), registered when
// this file is linked in; the harness and the command line stay free of LibTorch.
#pragma once
