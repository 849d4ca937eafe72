// The standard workload every strategy trains or serves unless a run says otherwise: an MLP
// (input → hidden → hidden → classes, ReLU) on synthetic classification data whose labels come
// from a fixed random teacher network, all from one seed, so every process can agree on it. With
// --model, another model (model_zoo.h) learns a perturbed copy of itself: inputs from the seed,
// targets from the teacher, so convergence against the serial reference means the same for it.
#pragma once

#include <torch/torch.h>

#include "harness/config/cell_config.h"
#include "workload/model_zoo.h"

namespace sharebench {

struct MlpImpl : torch::nn::Module {
  MlpImpl(std::int64_t input, std::int64_t hidden, std::int64_t classes);
  torch::Tensor forward(torch::Tensor x);
  torch::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};
TORCH_MODULE(Mlp);

// The MLP's rows are float32 with int64 labels (cross-entropy); any other model's rows are its
// samples (float32, or int64 tokens) with its teacher's outputs as float32 targets (mean squared
// error). The loss follows the targets' dtype.
struct Dataset {
  torch::Tensor train_x, train_y, test_x, test_y;
};

// Deterministic for a given options.seed.
Dataset make_dataset(const WorkloadOptions& w);

// Global step t uses batch t mod (train_rows / batch): the union of all workers' batches equals a
// serial run's sequence of batches.
std::int64_t batches_per_epoch(const WorkloadOptions& w);
torch::Tensor batch_x(const Dataset& d, const WorkloadOptions& w, std::int64_t global_step);
torch::Tensor batch_y(const Dataset& d, const WorkloadOptions& w, std::int64_t global_step);

// The task's loss (cross-entropy on labels, mean squared error on targets) of a batch's outputs.
torch::Tensor task_loss(const torch::Tensor& outputs, const torch::Tensor& targets);

// The task's loss of the model on the held-out rows.
double heldout_loss(Model& model, const Dataset& d);

}  // namespace sharebench

namespace sharebench {

// Forward, cross-entropy, backward on one batch; leaves the gradients in each parameter's grad()
// (private to the calling process). Returns the batch loss.
double compute_gradients(Model& model, const torch::Tensor& x, const torch::Tensor& y);

// Plain SGD (with momentum when momentum > 0, buffers in `momentum_buffers`), applied in place to
// the parameters' data: where those live in the arena, this is the read-modify-write that races.
void apply_sgd(const std::vector<torch::Tensor>& params, const std::vector<torch::Tensor>& momentum_buffers,
               double lr, double momentum);

}  // namespace sharebench
