// torch_runtime: LibTorch settings every process of a run needs before its first op. A worker sets
// its intra-op thread count (and OpenBLAS's) first thing: a fork child that inherits an OpenMP pool
// in use hangs on its first parallel op, and N workers with a pool of all cores each
// oversubscribe the machine. The runner keeps its own to the same count.
//
// Linking sharebench::torch is enough: the harness calls init_torch_in_worker in every worker
// before the scenario is built, and the runner's counterpart once before the first cell. The
// harness itself stays free of LibTorch; these reach it as hooks (launcher.h).
#pragma once

#include <cstdint>
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

// Seeds LibTorch's CPU generator alone. Use it instead of torch::manual_seed, which in a CUDA build
// of LibTorch also counts the GPUs and seeds theirs: that initialises CUDA in the calling process,
// so a runner that seeds a model before it forks leaves every fork child failing its first
// manual_seed with "CUDA error: initialization error" (measured on an H100 with LibTorch 2.11,
// docs/gpu.md), and a CPU worker pays for a CUDA context it never uses.
void seed_cpu_generator(std::uint64_t seed);

// Whether this process's LibTorch is a CUDA build (libtorch_cuda is loaded), asked without
// initialising CUDA: a process that has cannot fork children that use it.
bool libtorch_has_cuda();

}  // namespace sharebench
