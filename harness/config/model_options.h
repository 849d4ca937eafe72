// model_options: the torch-free half of `--model`, `--input-shape` and `--input-dtype`: which names
// are built in, and the parsing and validation of a TorchScript model's one-sample input, so a bad
// value is refused (exit 2) before anything starts. The models themselves: workload/model_zoo.h.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "harness/config/cell_config.h"

namespace sharebench {

// "mlp" and the built-in models, with one line each (what `list` prints).
const std::vector<std::pair<std::string, std::string>>& builtin_models();
bool is_builtin_model(const std::string& name);

struct SampleInput {
  std::vector<std::int64_t> shape;  // of one sample, without the batch dimension
  bool integer = false;             // int64 tokens rather than float32 values
  std::int64_t vocab = 0;           // integer inputs: values drawn from [0, vocab)
};

// The one-sample input of w.model: a built-in's own, or a TorchScript file's from input_shape and
// input_dtype. Throws UsageError naming the flag for an unknown model, a file that cannot be read,
// a missing or malformed shape, or an unknown dtype.
SampleInput sample_input(const WorkloadOptions& w);

// Rows of data a model trains and is judged on: the MLP keeps train_rows/test_rows; the other
// models cap them (2048 and 512) so image-shaped data stays tens of MB.
std::int64_t training_rows(const WorkloadOptions& w);
std::int64_t heldout_rows(const WorkloadOptions& w);

}  // namespace sharebench
