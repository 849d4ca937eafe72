// shared_model: the standard workload's dataset in the arena, beside the model's parameters
// (torch_support/arena_tensors.h). The runner publishes the dataset into named regions; every worker
// binds views of them, so all start methods read the same bytes.
#pragma once

#include <memory>
#include <string>

#include "torch_support/arena_tensors.h"
#include "workload/model_zoo.h"
#include "workload/standard_workload.h"

namespace sharebench {

void publish_dataset(SharedArena& arena, const Dataset& d);
// setup() of a training strategy: the dataset, and a new model of the workload whose parameters
// are published under "<prefix>.<i>" (the model returned is bound to them).
std::unique_ptr<Model> publish_training_workload(SharedArena& arena, const WorkloadOptions& w, const std::string& prefix);
Dataset bind_dataset(SharedArena& arena, const WorkloadOptions& w);

}  // namespace sharebench
