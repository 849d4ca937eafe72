// shared_model: parameters, buffers and data placed in the arena.
#include "workload/shared_model.h"

#include <cstring>

#include <fmt/format.h>

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

void publish_parameters(SharedArena& arena, torch::nn::Module& module, const std::string& prefix) {
  torch::NoGradGuard no_grad;
  auto params = module.parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    auto shared = arena_tensor(arena, fmt::format("{}.{}", prefix, i), params[i].sizes());
    shared.copy_(params[i]);
    params[i].set_data(shared);
  }
}

void bind_parameters(SharedArena& arena, torch::nn::Module& module, const std::string& prefix) {
  torch::NoGradGuard no_grad;
  auto params = module.parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    params[i].set_data(arena_view(arena, fmt::format("{}.{}", prefix, i), params[i].sizes()));
  }
}

std::vector<torch::Tensor> parameter_shaped(SharedArena& arena, torch::nn::Module& module, const std::string& prefix,
                                            bool create) {
  std::vector<torch::Tensor> out;
  auto params = module.parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::string name = fmt::format("{}.{}", prefix, i);
    out.push_back(create ? arena_tensor(arena, name, params[i].sizes()) : arena_view(arena, name, params[i].sizes()));
  }
  return out;
}

void publish_dataset(SharedArena& arena, const Dataset& d) {
  arena_tensor(arena, "data.train_x", d.train_x.sizes()).copy_(d.train_x);
  arena_tensor(arena, "data.train_y", d.train_y.sizes(), torch::kInt64).copy_(d.train_y);
  arena_tensor(arena, "data.test_x", d.test_x.sizes()).copy_(d.test_x);
  arena_tensor(arena, "data.test_y", d.test_y.sizes(), torch::kInt64).copy_(d.test_y);
}

Dataset bind_dataset(SharedArena& arena, const WorkloadOptions& w) {
  Dataset d;
  d.train_x = arena_view(arena, "data.train_x", {w.train_rows, w.input});
  d.train_y = arena_view(arena, "data.train_y", {w.train_rows}, torch::kInt64);
  d.test_x = arena_view(arena, "data.test_x", {w.test_rows, w.input});
  d.test_y = arena_view(arena, "data.test_y", {w.test_rows}, torch::kInt64);
  return d;
}

std::uint64_t parameter_checksum(torch::nn::Module& module) {
  std::uint64_t sum = 0;
  for (const auto& p : module.parameters()) {
    auto c = p.detach().contiguous();
    const auto* data = static_cast<const std::uint32_t*>(c.data_ptr());
    for (std::int64_t i = 0; i < c.numel(); ++i) sum = sum * 1099511628211ULL + data[i];
  }
  return sum;
}

}  // namespace sharebench
