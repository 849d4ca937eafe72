// shared_model: the standard workload's dataset placed in the arena, with a small header that
// records each tensor's shape and dtype, so a worker binds the same views whatever the model.
#include "workload/shared_model.h"

#include <stdexcept>

namespace sharebench {

namespace {
constexpr const char* kNames[] = {"data.train_x", "data.train_y", "data.test_x", "data.test_y"};

struct DatasetHeader {
  static constexpr int kMaxDims = 8;
  struct Entry {
    std::int32_t dims = 0;
    std::int32_t dtype = 0;  // c10::ScalarType
    std::int64_t sizes[kMaxDims] = {};
  } tensors[4];
};
}  // namespace

void publish_dataset(SharedArena& arena, const Dataset& d) {
  const torch::Tensor* parts[] = {&d.train_x, &d.train_y, &d.test_x, &d.test_y};
  auto* header = arena.create<DatasetHeader>("data.header");
  for (int i = 0; i < 4; ++i) {
    const torch::Tensor& t = *parts[i];
    if (t.dim() > DatasetHeader::kMaxDims) throw std::invalid_argument("a dataset tensor has more than 8 dimensions");
    auto& e = header->tensors[i];
    e.dims = static_cast<std::int32_t>(t.dim());
    e.dtype = static_cast<std::int32_t>(t.scalar_type());
    for (int k = 0; k < e.dims; ++k) e.sizes[k] = t.size(k);
    arena_tensor(arena, kNames[i], t.sizes(), t.scalar_type()).copy_(t);
  }
}

Dataset bind_dataset(SharedArena& arena, const WorkloadOptions&) {
  const auto* header = arena.lookup<DatasetHeader>("data.header");
  torch::Tensor views[4];
  for (int i = 0; i < 4; ++i) {
    const auto& e = header->tensors[i];
    views[i] = arena_view(arena, kNames[i], at::IntArrayRef(e.sizes, static_cast<std::size_t>(e.dims)),
                          static_cast<torch::Dtype>(e.dtype));
  }
  return Dataset{views[0], views[1], views[2], views[3]};
}

std::unique_ptr<Model> publish_training_workload(SharedArena& arena, const WorkloadOptions& w, const std::string& prefix) {
  publish_dataset(arena, make_dataset(w));
  auto model = make_model(w);
  publish_parameters(arena, model->parameters(), prefix);
  return model;
}

}  // namespace sharebench
