// shared_model: LibTorch tensors over the arena. The runner publishes the model's parameters
// (and, when used, SGD momentum buffers) and the dataset into named regions; every worker binds
// its own module to them with set_data(from_blob(...)), so all start methods share the same bytes.
// Gradients stay private to each worker. Never call torch::load or module->to() on a bound module:
// both silently move the parameters off the arena.
#pragma once

#include <string>
#include <vector>

#include <torch/torch.h>

#include "harness/arena/shared_arena.h"
#include "workload/standard_workload.h"

namespace sharebench {

// A new zeroed tensor in region `name`.
torch::Tensor arena_tensor(SharedArena& arena, const std::string& name, at::IntArrayRef sizes,
                           torch::Dtype dtype = torch::kFloat32);
// The tensor in region `name` (sizes and dtype must match what was allocated).
torch::Tensor arena_view(SharedArena& arena, const std::string& name, at::IntArrayRef sizes,
                         torch::Dtype dtype = torch::kFloat32);

// Copies the module's parameters into regions "<prefix>.<i>" and binds the module to them.
void publish_parameters(SharedArena& arena, torch::nn::Module& module, const std::string& prefix);
// Binds the module's parameters to the regions a publish_parameters call made.
void bind_parameters(SharedArena& arena, torch::nn::Module& module, const std::string& prefix);
// Zeroed tensors shaped like each parameter: "<prefix>.<i>" (created) or looked up (bind).
std::vector<torch::Tensor> parameter_shaped(SharedArena& arena, torch::nn::Module& module,
                                            const std::string& prefix, bool create);

void publish_dataset(SharedArena& arena, const Dataset& d);
Dataset bind_dataset(SharedArena& arena, const WorkloadOptions& w);

// A checksum of the module's parameters: the sum of every float's bit pattern, so any change in
// any bit changes it with high probability.
std::uint64_t parameter_checksum(torch::nn::Module& module);

}  // namespace sharebench
