// shared_model: the standard workload's dataset placed in the arena.
#include "workload/shared_model.h"

namespace sharebench {

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

}  // namespace sharebench
