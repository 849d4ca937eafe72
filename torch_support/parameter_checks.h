// parameter_checks: the value checkers (harness/checkers/value_checks.h) in LibTorch's terms, for
// a model whose parameters live in the arena (arena_tensors.h). Call from check(), on a module the
// runner bound to the shared parameters, with the checksum it recorded when it published them.
#pragma once

#include <cstdint>
#include <string>

#include "harness/results/check_ids.h"
#include <vector>

#include <torch/torch.h>

#include "harness/scenario/scenario.h"

namespace sharebench {

// `updates-reached-model`: fails when training left the shared parameters bit for bit as published
// (the workers trained copies: a clone, a dtype or device move, torch::load after binding).
void check_parameters_changed(CheckContext& ctx, torch::nn::Module& shared, std::uint64_t published_checksum,
                              const std::string& name = checks::kUpdatesReachedModel);
// `parameters-unchanged`: fails when a read-only run changed any bit of the shared parameters.
void check_parameters_unchanged(CheckContext& ctx, torch::nn::Module& shared, std::uint64_t published_checksum,
                                const std::string& name = checks::kParametersUnchanged);
// The same for a list of parameters (any model's, in its fixed order).
void check_parameters_changed(CheckContext& ctx, const std::vector<torch::Tensor>& shared,
                              std::uint64_t published_checksum, const std::string& name = checks::kUpdatesReachedModel);
void check_parameters_unchanged(CheckContext& ctx, const std::vector<torch::Tensor>& shared,
                                std::uint64_t published_checksum, const std::string& name = checks::kParametersUnchanged);
// `matches-serial` (or `name`): fails when any element of `got` is further than `tolerance` from
// `want` (same shape), or either holds a NaN. Records the largest difference as a metric.
void check_close(CheckContext& ctx, const torch::Tensor& got, const torch::Tensor& want, double tolerance,
                 const std::string& what, const std::string& name = checks::kMatchesSerial);

}  // namespace sharebench
