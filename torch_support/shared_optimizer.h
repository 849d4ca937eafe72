// SharedOptimizer: Adam or RMSprop whose state (moments and step counter) lives in the arena, the
// optimizer A3C's workers share. setup() publishes the state beside the shared parameters; each
// worker binds the same regions and steps the shared parameters on the gradients it delivered
// into their shared `.grad` regions. The arithmetic is torch's (Adam with bias correction;
// RMSprop, not centred, no momentum), written as plain loops in this project's own code so that
// ThreadSanitizer sees lock-free steps race and sees a lock order them, as apply_sgd does.
//
// Evidence for the checkers (harness/checkers/optimizer_state.h): the first step() of each worker
// records where its state tensors and counter are (in shared memory or not) and whether it had to
// make the state; sampled steps compare the gradient applied with the one the worker computed.
//
//   setup():  publish_optimizer_state(arena, "opt", shared_params, kind);
//   work():   SharedOptimizer opt(arena, "opt", shared_params, options, rank);
//             deliver_gradients(local_params, opt.gradients());  opt.step(sampled ? &fp : nullptr);
//   check():  check_optimizer_state_shared(ctx, opt_record(arena, "opt"), locked, state_moved(...));
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "harness/arena/shared_arena.h"
#include "harness/checkers/optimizer_state.h"

namespace sharebench {

enum class OptimizerKind { kAdam, kRmsprop };

struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::kAdam;
  double lr = 1e-3;
  double beta1 = 0.9;    // Adam
  double beta2 = 0.999;  // Adam
  double alpha = 0.99;   // RMSprop's smoothing
  double eps = 1e-8;
};

// Moments per parameter: Adam keeps two (exp_avg, exp_avg_sq), RMSprop one (square_avg).
int moments_per_parameter(OptimizerKind kind);

// setup(): the record, the shared gradients ("<prefix>.grad.<i>") and, unless `make_state` is
// false (a state made lazily, after the workers start), the zeroed moments ("<prefix>.m<k>.<i>").
void publish_optimizer_state(SharedArena& arena, const std::string& prefix, const std::vector<torch::Tensor>& params,
                             OptimizerKind kind, bool make_state = true);
OptimizerRecord& optimizer_record(SharedArena& arena, const std::string& prefix);
// The shared moments, or an empty list when they were never published.
std::vector<torch::Tensor> bind_optimizer_moments(SharedArena& arena, const std::string& prefix,
                                                  const std::vector<torch::Tensor>& params, OptimizerKind kind);
// check(): whether any shared moment holds anything but zeros.
bool optimizer_state_moved(SharedArena& arena, const std::string& prefix, const std::vector<torch::Tensor>& params,
                           OptimizerKind kind);
// A fingerprint of a list of gradients' bytes (sampled steps compare them).
std::uint64_t gradient_fingerprint(const std::vector<torch::Tensor>& grads);

class SharedOptimizer {
 public:
  // Binds the shared gradients, moments and record of `prefix` for `params` (the shared parameters).
  SharedOptimizer(SharedArena& arena, const std::string& prefix, std::vector<torch::Tensor> params,
                  OptimizerOptions options, int rank);

  // The shared gradient of each parameter: a worker copies its own gradients here (deliver).
  const std::vector<torch::Tensor>& gradients() const { return grads_; }
  // Where its state is: the bound moments (moments()[k * n + i]) and the step counter. A worker may
  // replace them before its first step (a planted bug does: private moments, a private counter).
  std::vector<torch::Tensor>& moments() { return moments_; }
  void use_step_counter(std::int64_t* counter) { counter_ = counter; }

  // One update of the shared parameters from the shared gradients. With `computed` (the
  // fingerprint of the gradients this worker delivered), the step also samples what it applied.
  // Moments that were never published are made here, at the first step, in private memory, as a
  // lazily-initialised optimizer does.
  void step(const std::uint64_t* computed = nullptr);

  const GradientSamples& samples() const { return samples_; }

 private:
  void first_step();

  std::vector<torch::Tensor> params_;
  std::vector<torch::Tensor> grads_;
  std::vector<torch::Tensor> moments_;
  OptimizerOptions options_;
  OptimizerRecord* record_;
  std::int64_t* counter_;
  int rank_;
  bool stepped_ = false;
  GradientSamples samples_;
};

// Copies `local` parameters' gradients into `shared` (the optimizer's gradients()).
void deliver_gradients(const std::vector<torch::Tensor>& local, const std::vector<torch::Tensor>& shared);

}  // namespace sharebench
