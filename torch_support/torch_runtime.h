// torch_runtime: LibTorch settings every process of a run needs before its first op. A worker sets
// its intra-op thread count (and OpenBLAS's) first thing: a fork child that inherits an OpenMP pool
// in use hangs on its first parallel op, and N workers with a pool of all cores each
// oversubscribe the machine. The runner keeps its own to the same count.
//
// Linking sharebench::torch is enough: the harness calls init_torch_in_worker in every worker
// before the scenario is built, and the runner's counterpart once before the first cell. The
// harness itself stays free of LibTorch; these reach it as hooks (launcher.h).
#pragma once

#include <functional>

#include "harness/config/cell_config.h"

namespace sharebench {

// The cell's intra-op thread count (--threads-per-worker), once per process: under the thread start
// method every worker thread of the one process calls it, and LibTorch refuses a second
// set_num_threads once its pool is in use. Then every step added with on_torch_worker_init, in
// order. Idempotent; a scenario may call it again at no cost.
void init_torch_in_worker(const CellConfig& cell);

// Adds a per-worker step run after the thread counts, once per worker process (a seed, a default
// dtype, set_num_interop_threads). Call at static-initialisation time, beside the scenario's
// SHAREBENCH_SCENARIO line; the step runs before the first op of every worker of every cell.
void on_torch_worker_init(std::function<void(const CellConfig&)> step);

}  // namespace sharebench
