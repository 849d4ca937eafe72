// arena_tensors: tensors and module parameters placed in the arena.
#include "torch_support/arena_tensors.h"

#include <stdexcept>

#include <fmt/format.h>

#include "harness/checkers/model_sharing.h"
#include "harness/checkers/replica_agreement.h"

namespace sharebench {

torch::Tensor arena_tensor(SharedArena& arena, const std::string& name, at::IntArrayRef sizes, torch::Dtype dtype) {
  std::int64_t n = 1;
  for (auto s : sizes) n *= s;
  void* p = arena.allocate(name, static_cast<std::size_t>(n) * torch::elementSize(dtype));
  return torch::from_blob(p, sizes, torch::TensorOptions().dtype(dtype));
}

torch::Tensor arena_view(SharedArena& arena, const std::string& name, at::IntArrayRef sizes, torch::Dtype dtype) {
  std::size_t bytes = 0;
  void* p = arena.get(name, &bytes);
  std::int64_t n = 1;
  for (auto s : sizes) n *= s;
  if (bytes != static_cast<std::size_t>(n) * torch::elementSize(dtype)) {
    throw std::runtime_error(fmt::format("arena region '{}' holds {} bytes, not the {} expected", name, bytes,
                                         static_cast<std::size_t>(n) * torch::elementSize(dtype)));
  }
  return torch::from_blob(p, sizes, torch::TensorOptions().dtype(dtype));
}

void publish_parameters(SharedArena& arena, const std::vector<torch::Tensor>& params, const std::string& prefix) {
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < params.size(); ++i) {
    auto shared = arena_tensor(arena, fmt::format("{}.{}", prefix, i), params[i].sizes(), params[i].scalar_type());
    shared.copy_(params[i]);
    torch::Tensor p = params[i];  // shares the parameter's TensorImpl: set_data rebinds the model's own
    p.set_data(shared);
  }
}

namespace {
void bind_without_promise(SharedArena& arena, const std::vector<torch::Tensor>& params, const std::string& prefix) {
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < params.size(); ++i) {
    torch::Tensor p = params[i];
    p.set_data(arena_view(arena, fmt::format("{}.{}", prefix, i), params[i].sizes(), params[i].scalar_type()));
  }
}
}  // namespace

void bind_parameters(SharedArena& arena, const std::vector<torch::Tensor>& params, const std::string& prefix) {
  bind_without_promise(arena, params, prefix);
  // The handles share the parameters' TensorImpls: whatever later replaces a parameter's storage
  // (set_data of a clone, Module::to, torch::load) is what the promise sees as work() returns.
  promise_shared_model(fmt::format("model '{}'", prefix), [params, prefix] {
    SharedModelNow now;
    for (std::size_t i = 0; i < params.size(); ++i) {
      const torch::Tensor& p = params[i];
      now.spans.push_back(SharedSpan{fmt::format("{}.{}", prefix, i), p.data_ptr(),
                                     static_cast<std::size_t>(p.numel()) * p.element_size()});
      if (p.grad().defined()) now.private_by_design_bytes += static_cast<std::size_t>(p.grad().nbytes());
    }
    return now;
  });
}

void copy_parameters(SharedArena& arena, const std::vector<torch::Tensor>& params, const std::string& prefix) {
  bind_without_promise(arena, params, prefix);
  torch::NoGradGuard no_grad;
  for (const auto& param : params) {
    torch::Tensor p = param;
    p.set_data(p.detach().clone());
  }
}

std::vector<torch::Tensor> parameter_shaped(SharedArena& arena, const std::vector<torch::Tensor>& params,
                                            const std::string& prefix, bool create) {
  std::vector<torch::Tensor> out;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::string name = fmt::format("{}.{}", prefix, i);
    const auto dtype = params[i].scalar_type();
    out.push_back(create ? arena_tensor(arena, name, params[i].sizes(), dtype)
                         : arena_view(arena, name, params[i].sizes(), dtype));
  }
  return out;
}

std::uint64_t parameter_checksum(const std::vector<torch::Tensor>& params) {
  std::uint64_t sum = 0;
  for (const auto& p : params) {
    auto c = p.detach().contiguous();
    sum = sum * 31 + checksum_words(c.data_ptr(), static_cast<std::size_t>(c.numel()) * c.element_size());
  }
  return sum;
}

void publish_parameters(SharedArena& arena, torch::nn::Module& module, const std::string& prefix) {
  publish_parameters(arena, module.parameters(), prefix);
}

void bind_parameters(SharedArena& arena, torch::nn::Module& module, const std::string& prefix) {
  bind_parameters(arena, module.parameters(), prefix);
}

std::vector<torch::Tensor> parameter_shaped(SharedArena& arena, torch::nn::Module& module, const std::string& prefix,
                                            bool create) {
  return parameter_shaped(arena, module.parameters(), prefix, create);
}

std::uint64_t parameter_checksum(torch::nn::Module& module) { return parameter_checksum(module.parameters()); }

}  // namespace sharebench
