// shared_model: the standard workload's dataset in the arena, beside the model's parameters
// (torch_support/arena_tensors.h). The runner publishes the dataset into named regions; every worker
// binds views of them, so all start methods read the same bytes.
#pragma once

#include "torch_support/arena_tensors.h"
#include "workload/standard_workload.h"

namespace sharebench {

void publish_dataset(SharedArena& arena, const Dataset& d);
Dataset bind_dataset(SharedArena& arena, const WorkloadOptions& w);

}  // namespace sharebench
