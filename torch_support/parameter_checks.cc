// parameter_checks: checksums and differences of tensors, judged by the value checkers.
#include "torch_support/parameter_checks.h"

#include <limits>

#include "harness/checkers/value_checks.h"
#include "torch_support/arena_tensors.h"

namespace sharebench {

void check_parameters_changed(CheckContext& ctx, torch::nn::Module& shared, std::uint64_t published_checksum,
                              const std::string& name) {
  check_changed(ctx, name, published_checksum, parameter_checksum(shared), "the shared parameters");
}

void check_parameters_unchanged(CheckContext& ctx, torch::nn::Module& shared, std::uint64_t published_checksum,
                                const std::string& name) {
  check_unchanged(ctx, name, published_checksum, parameter_checksum(shared), "the shared parameters");
}

void check_parameters_changed(CheckContext& ctx, const std::vector<torch::Tensor>& shared,
                              std::uint64_t published_checksum, const std::string& name) {
  check_changed(ctx, name, published_checksum, parameter_checksum(shared), "the shared parameters");
}

void check_parameters_unchanged(CheckContext& ctx, const std::vector<torch::Tensor>& shared,
                                std::uint64_t published_checksum, const std::string& name) {
  check_unchanged(ctx, name, published_checksum, parameter_checksum(shared), "the shared parameters");
}

void check_close(CheckContext& ctx, const torch::Tensor& got, const torch::Tensor& want, double tolerance,
                 const std::string& what, const std::string& name) {
  double diff = std::numeric_limits<double>::quiet_NaN();
  if (got.sizes() == want.sizes()) {
    diff = (got.to(torch::kFloat64) - want.to(torch::kFloat64)).abs().max().item<double>();
  }
  ctx.metric(name + ".max_abs_diff", diff);
  check_within(ctx, name, diff, tolerance, what);
}

}  // namespace sharebench
