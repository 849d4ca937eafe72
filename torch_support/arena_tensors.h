// arena_tensors: LibTorch tensors over the arena, the way to share a model between workers under
// every start method. The runner publishes a module's parameters (and any buffers shaped like them)
// into named arena regions in setup(); every worker binds its own module to those regions in work()
// with set_data(from_blob(...)), so fork, spawn, forkserver and thread workers all read and write
// the same bytes. Gradients stay private to each worker.
//
// Not guaranteed: anything that replaces a bound parameter's storage moves it off the arena without
// a word: torch::load into the module, module->to(another dtype or device), p.set_data(p.clone()).
// So binding inside work() is a promise (harness/checkers/model_sharing.h): as work() returns, the
// harness's `model-shared` check looks up where every bound parameter's bytes are and fails when
// any is in private memory. A worker that wants a private replica says so with copy_parameters.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "harness/arena/shared_arena.h"

namespace sharebench {

// A new zeroed tensor in region `name`.
torch::Tensor arena_tensor(SharedArena& arena, const std::string& name, at::IntArrayRef sizes,
                           torch::Dtype dtype = torch::kFloat32);
// The tensor in region `name` (sizes and dtype must match what was allocated; throws if the byte
// count differs).
torch::Tensor arena_view(SharedArena& arena, const std::string& name, at::IntArrayRef sizes,
                         torch::Dtype dtype = torch::kFloat32);

// Copies the module's parameters into regions "<prefix>.<i>" and binds the module to them.
void publish_parameters(SharedArena& arena, torch::nn::Module& module, const std::string& prefix);
// Binds the module's parameters to the regions a publish_parameters call made.
void bind_parameters(SharedArena& arena, torch::nn::Module& module, const std::string& prefix);
// Zeroed tensors shaped like each parameter: "<prefix>.<i>" (created) or looked up (bind).
std::vector<torch::Tensor> parameter_shaped(SharedArena& arena, torch::nn::Module& module,
                                            const std::string& prefix, bool create);

// The same for a list of parameters (a TorchScript module's, or any model's, in a fixed order).
void publish_parameters(SharedArena& arena, const std::vector<torch::Tensor>& params, const std::string& prefix);
void bind_parameters(SharedArena& arena, const std::vector<torch::Tensor>& params, const std::string& prefix);
// A private replica by design (parameter averaging): the parameters become copies of what
// publish_parameters made, in the worker's own memory, with no `model-shared` promise.
void copy_parameters(SharedArena& arena, const std::vector<torch::Tensor>& params, const std::string& prefix);
std::vector<torch::Tensor> parameter_shaped(SharedArena& arena, const std::vector<torch::Tensor>& params,
                                            const std::string& prefix, bool create);
std::uint64_t parameter_checksum(const std::vector<torch::Tensor>& params);

// A checksum of the module's parameters (checksum_words over every element's bytes, in module
// order): any change in any bit changes it with high probability.
std::uint64_t parameter_checksum(torch::nn::Module& module);

}  // namespace sharebench
