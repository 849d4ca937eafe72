// serial_reference: the same workload trained by one process for the same total number of steps,
// in the same batch order. It is the oracle for convergence (held-out loss) and the baseline for
// speed-ups. Results are cached per (workload, steps) for the life of the process.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/results/results.h"
#include "harness/config/cell_config.h"
#include "torch_support/shared_optimizer.h"

namespace sharebench {

struct SerialReference {
  double heldout_loss = 0;
  double steps_per_s = 0;
  std::vector<SeriesPoint> loss;  // mean training loss per window, as the workers record it
  std::vector<float> final_parameters;  // every parameter, flattened in module order
};

const SerialReference& serial_reference(const WorkloadOptions& w, std::int64_t total_steps);

// Large-batch SGD: each of `steps` steps trains on the `procs` batches t = s·procs + r
// concatenated, the serial equivalent of averaging `procs` workers' gradients every step.
const SerialReference& serial_large_batch_reference(const WorkloadOptions& w, int procs, std::int64_t steps);

// A shared optimizer's serial twin: one process steps Adam or RMSprop (SharedOptimizer's own
// arithmetic) over `total_steps` batches in the workers' order; a3c's convergence oracle.
const SerialReference& serial_optimizer_reference(const WorkloadOptions& w, std::int64_t total_steps,
                                                  const OptimizerOptions& options);

// Points every this many steps so a run has about 100 points (WorkerSlot holds 512).
std::int64_t series_interval(std::int64_t steps);

}  // namespace sharebench
