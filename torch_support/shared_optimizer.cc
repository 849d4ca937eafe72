// SharedOptimizer: Adam and RMSprop over arena state (shared_optimizer.h). The gradients and each
// moment are one flat region each, every parameter a view into it, so a model with many tensors
// takes three regions, not three per tensor.
#include "torch_support/shared_optimizer.h"

#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "harness/checkers/model_sharing.h"
#include "torch_support/arena_tensors.h"
#include "torch_support/optimizer_kernels.h"

namespace sharebench {

namespace {
std::string record_name(const std::string& prefix) { return prefix + ".record"; }
std::string grads_name(const std::string& prefix) { return prefix + ".grad"; }
std::string moment_name(const std::string& prefix, int k) { return fmt::format("{}.m{}", prefix, k); }

std::int64_t total_numel(const std::vector<torch::Tensor>& params) {
  return std::accumulate(params.begin(), params.end(), std::int64_t{0},
                         [](std::int64_t n, const torch::Tensor& p) { return n + p.numel(); });
}

// Views shaped like each parameter into one flat float tensor.
std::vector<torch::Tensor> split_like(const torch::Tensor& flat, const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> views;
  std::int64_t offset = 0;
  for (const auto& p : params) {
    views.push_back(flat.narrow(0, offset, p.numel()).view(p.sizes()));
    offset += p.numel();
  }
  return views;
}

std::vector<torch::Tensor> flat_views(SharedArena& arena, const std::string& name,
                                      const std::vector<torch::Tensor>& params, bool create) {
  const std::int64_t n = total_numel(params);
  const torch::Tensor flat = create ? arena_tensor(arena, name, {n}) : arena_view(arena, name, {n});
  return split_like(flat, params);
}

bool shared(const torch::Tensor& t) {
  return in_shared_memory(t.data_ptr(), static_cast<std::size_t>(t.numel()) * t.element_size());
}
}  // namespace

int moments_per_parameter(OptimizerKind kind) { return kind == OptimizerKind::kAdam ? 2 : 1; }

void publish_optimizer_state(SharedArena& arena, const std::string& prefix, const std::vector<torch::Tensor>& params,
                             OptimizerKind kind, bool make_state) {
  auto* record = arena.create<OptimizerRecord>(record_name(prefix));
  flat_views(arena, grads_name(prefix), params, /*create=*/true);
  if (!make_state) return;
  for (int k = 0; k < moments_per_parameter(kind); ++k) flat_views(arena, moment_name(prefix, k), params, true);
  record->state_made_before_start.store(1);
}

OptimizerRecord& optimizer_record(SharedArena& arena, const std::string& prefix) {
  return *arena.lookup<OptimizerRecord>(record_name(prefix));
}

std::vector<torch::Tensor> bind_optimizer_moments(SharedArena& arena, const std::string& prefix,
                                                  const std::vector<torch::Tensor>& params, OptimizerKind kind) {
  std::vector<torch::Tensor> moments;
  for (int k = 0; k < moments_per_parameter(kind); ++k) {
    if (arena.find(moment_name(prefix, k)) == nullptr) return {};
    for (auto& v : flat_views(arena, moment_name(prefix, k), params, false)) moments.push_back(std::move(v));
  }
  return moments;
}

bool optimizer_state_moved(SharedArena& arena, const std::string& prefix, const std::vector<torch::Tensor>& params,
                           OptimizerKind kind) {
  for (const auto& m : bind_optimizer_moments(arena, prefix, params, kind)) {
    if (m.abs().sum().item<double>() > 0) return true;
  }
  return false;
}

std::uint64_t gradient_fingerprint(const std::vector<torch::Tensor>& grads) { return parameter_checksum(grads); }

void deliver_gradients(const std::vector<torch::Tensor>& local, const std::vector<torch::Tensor>& shared) {
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < local.size(); ++i) shared[i].copy_(local[i].grad());
}

SharedOptimizer::SharedOptimizer(SharedArena& arena, const std::string& prefix, std::vector<torch::Tensor> params,
                                 OptimizerOptions options, int rank)
    : params_(std::move(params)),
      grads_(flat_views(arena, grads_name(prefix), params_, false)),
      moments_(bind_optimizer_moments(arena, prefix, params_, options.kind)),
      options_(options),
      record_(&optimizer_record(arena, prefix)),
      counter_(&record_->step),
      rank_(rank) {
  for (const auto& p : params_) {
    TORCH_CHECK(p.is_contiguous() && p.scalar_type() == torch::kFloat32,
                "SharedOptimizer needs contiguous float32 parameters");
  }
}

// Where the state is, once per worker: /proc/self/maps is read here, never in later steps.
void SharedOptimizer::first_step() {
  bool made = false;
  if (moments_.empty()) {  // lazy state: made now, by this worker, in its own memory
    made = true;
    for (int k = 0; k < moments_per_parameter(options_.kind); ++k) {
      for (const auto& p : params_) moments_.push_back(torch::zeros_like(p));
    }
  }
  int private_tensors = 0;
  for (const auto& m : moments_) private_tensors += shared(m) ? 0 : 1;
  const bool counter_private = !in_shared_memory(counter_, sizeof *counter_);
  record_->record_first_step(rank_, private_tensors, static_cast<int>(moments_.size()), counter_private, made);
}

void SharedOptimizer::step(const std::uint64_t* computed) {
  if (!stepped_) {
    first_step();
    stepped_ = true;
  }
  if (computed != nullptr) samples_.add(*computed, gradient_fingerprint(grads_));
  // The counter's read-modify-write, as torch's state['step'] += 1: not atomic on purpose.
  const std::int64_t t = *counter_ + 1;
  *counter_ = t;
  record_->steps_taken.fetch_add(1, std::memory_order_relaxed);

  const std::size_t n = params_.size();
  const auto lr = static_cast<float>(options_.lr);
  const auto eps = static_cast<float>(options_.eps);
  if (options_.kind == OptimizerKind::kAdam) {
    const auto tt = static_cast<double>(t);
    const AdamStep s{static_cast<float>(options_.lr / (1 - std::pow(options_.beta1, tt))),
                     static_cast<float>(std::sqrt(1 - std::pow(options_.beta2, tt))), static_cast<float>(options_.beta1),
                     static_cast<float>(options_.beta2), eps};
    for (std::size_t i = 0; i < n; ++i) {
      adam_update(params_[i].data_ptr<float>(), grads_[i].data_ptr<float>(), moments_[i].data_ptr<float>(),
                  moments_[n + i].data_ptr<float>(), params_[i].numel(), s);
    }
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    rmsprop_update(params_[i].data_ptr<float>(), grads_[i].data_ptr<float>(), moments_[i].data_ptr<float>(),
                   params_[i].numel(), lr, static_cast<float>(options_.alpha), eps);
  }
}

}  // namespace sharebench
