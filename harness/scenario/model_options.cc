// model_options: built-in model names, input parsing and validation.
#include "harness/scenario/model_options.h"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "harness/scenario/cell_flags.h"

namespace sharebench {

const std::vector<std::pair<std::string, std::string>>& builtin_models() {
  static const std::vector<std::pair<std::string, std::string>> models = {
      {"mlp", "the standard MLP: 64 inputs, two hidden layers of --hidden, 10 classes (85 000 parameters)"},
      {"convnet-s", "two convolutions (8, 16 channels) and two linear layers on 3x32x32 images (67 000 parameters)"},
      {"convnet-m", "two convolutions (32, 64 channels) and two linear layers on 3x32x32 images (1.07 M parameters)"},
      {"transformer-s", "a 2-layer transformer encoder, width 64, on 16 tokens of 1000 (165 000 parameters)"},
      {"transformer-m", "a 6-layer transformer encoder, width 256, on 16 tokens of 8000 (6.8 M parameters)"},
  };
  return models;
}

bool is_builtin_model(const std::string& name) {
  const auto& m = builtin_models();
  return std::any_of(m.begin(), m.end(), [&](const auto& e) { return e.first == name; });
}

namespace {
std::vector<std::int64_t> parse_shape(const std::string& text) {
  std::vector<std::int64_t> shape;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    shape.push_back(parse_flag_int("--input-shape", text.substr(start, comma - start), 1, 1 << 20));
    start = comma + 1;
  }
  std::int64_t elements = 1;
  for (auto d : shape) elements *= d;
  if (shape.size() > 6 || elements > (1 << 24)) {
    throw UsageError(fmt::format("--input-shape '{}' is too large (at most 6 dimensions, 16 M elements a sample)", text));
  }
  return shape;
}
}  // namespace

SampleInput sample_input(const WorkloadOptions& w) {
  SampleInput in;
  if (w.model == "mlp") in.shape = {w.input};
  else if (w.model == "convnet-s" || w.model == "convnet-m") in.shape = {3, 32, 32};
  else if (w.model == "transformer-s") in = SampleInput{{16}, true, 1000};
  else if (w.model == "transformer-m") in = SampleInput{{16}, true, 8000};
  if (!in.shape.empty()) {
    if (!w.input_shape.empty() || w.input_dtype != "float32") {
      throw UsageError(fmt::format("--input-shape and --input-dtype describe a TorchScript file's input; '{}' is built in",
                                   w.model));
    }
    return in;
  }
  if (w.model.empty() || ::access(w.model.c_str(), R_OK) != 0) {
    std::string names;
    for (const auto& [name, line] : builtin_models()) names += (names.empty() ? "" : ", ") + name;
    throw UsageError(fmt::format("--model '{}' is neither a built-in model ({}) nor a readable TorchScript file",
                                 w.model, names));
  }
  if (w.input_shape.empty()) {
    throw UsageError(fmt::format("--model {} is a TorchScript file: say what one sample is with --input-shape "
                                 "(e.g. 3,32,32)", w.model));
  }
  in.shape = parse_shape(w.input_shape);
  if (w.input_dtype == "float32") return in;
  if (w.input_dtype.rfind("int64:", 0) == 0) {
    in.integer = true;
    in.vocab = parse_flag_int("--input-dtype int64:V", w.input_dtype.substr(6), 1, INT64_MAX);
    return in;
  }
  throw UsageError(fmt::format("--input-dtype must be float32 or int64:V (tokens in [0, V)), got '{}'", w.input_dtype));
}

std::int64_t training_rows(const WorkloadOptions& w) {
  return w.model == "mlp" ? w.train_rows : std::min<std::int64_t>(w.train_rows, 2048);
}
std::int64_t heldout_rows(const WorkloadOptions& w) {
  return w.model == "mlp" ? w.test_rows : std::min<std::int64_t>(w.test_rows, 512);
}

}  // namespace sharebench
