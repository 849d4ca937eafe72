// model_zoo: the models a strategy can share, behind one interface. `--model` picks one: the
// standard MLP (the default; its figures are unchanged), built-in convolutional and transformer
// networks in two sizes each, written with LibTorch's modules, or a user's TorchScript file
// (torch.jit.save from Python). Every strategy binds the model's parameters to the arena and trains
// or serves it through parameters() and forward(), whatever it is.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "harness/config/cell_config.h"
#include "harness/scenario/scenario.h"

namespace sharebench {

class Model {
 public:
  virtual ~Model() = default;
  // Every parameter, in a fixed order (the order publish/bind and averaging rely on).
  virtual std::vector<torch::Tensor> parameters() = 0;
  // A batch of samples in, a batch of outputs (logits or values) out.
  virtual torch::Tensor forward(const torch::Tensor& x) = 0;
};

// Deterministic initial weights for w.seed; a TorchScript model starts from its file's weights.
// The MLP is the standard workload's; the others are trained on a teacher's outputs (model_zoo.cc).
std::unique_ptr<Model> make_model(const WorkloadOptions& w);

// The teacher of a regression task: the same model, each parameter perturbed by half its spread,
// from a seed of its own, frozen.
std::unique_ptr<Model> make_teacher(const WorkloadOptions& w);

std::int64_t parameter_count(Model& model);
std::int64_t parameter_bytes(Model& model);

// Records the model's size as the metrics model_parameters and model_bytes (every report shows them).
void record_model_size(CheckContext& ctx, Model& model);

}  // namespace sharebench
