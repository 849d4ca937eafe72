// serial_reference: one-process training with the exact step function the workers use.
#include "workload/serial_reference.h"

#include <chrono>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "workload/standard_workload.h"

namespace sharebench {

std::int64_t series_interval(std::int64_t steps) { return std::max<std::int64_t>(1, steps / 100); }

namespace {
std::vector<float> flatten(Model& model) {
  std::vector<float> out;
  for (const auto& p : model.parameters()) {
    const auto c = p.detach().contiguous();
    out.insert(out.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
  return out;
}
}  // namespace

const SerialReference& serial_large_batch_reference(const WorkloadOptions& w, int procs, std::int64_t steps) {
  static std::mutex mu;
  static std::map<std::string, SerialReference> cache;
  const std::string key = fmt::format("{}/{}/{}/{}/{}/{}/{}/{}/{}/{}/{}/{}/{}/{}", w.seed, w.batch, w.lr, w.momentum,
                                      w.input, w.hidden, w.classes, w.train_rows, w.test_rows, procs, steps, w.model,
                                      w.input_shape, w.input_dtype);
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(key); it != cache.end()) return it->second;

  SerialReference ref;
  const Dataset data = make_dataset(w);
  const auto owned = make_model(w);
  Model& model = *owned;
  const auto params = model.parameters();
  std::vector<torch::Tensor> buffers;
  for (const auto& p : params) buffers.push_back(torch::zeros_like(p));
  const std::int64_t every = series_interval(steps);
  double window = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::int64_t s = 0; s < steps; ++s) {
    torch::Tensor x = batch_x(data, w, s * procs), y = batch_y(data, w, s * procs);
    if (procs > 1) {
      std::vector<torch::Tensor> xs, ys;
      for (int r = 0; r < procs; ++r) {
        xs.push_back(batch_x(data, w, s * procs + r));
        ys.push_back(batch_y(data, w, s * procs + r));
      }
      x = torch::cat(xs);
      y = torch::cat(ys);
    }
    window += compute_gradients(model, x, y);
    apply_sgd(params, buffers, w.lr, w.momentum);
    if ((s + 1) % every == 0) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ref.loss.push_back(SeriesPoint{static_cast<double>((s + 1) * procs), elapsed, window / every});
      window = 0;
    }
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ref.steps_per_s = elapsed > 0 ? static_cast<double>(steps) / elapsed : 0;
  ref.heldout_loss = heldout_loss(model, data);
  ref.final_parameters = flatten(model);
  return cache.emplace(key, std::move(ref)).first->second;
}

const SerialReference& serial_reference(const WorkloadOptions& w, std::int64_t total_steps) {
  return serial_large_batch_reference(w, 1, total_steps);
}

}  // namespace sharebench
