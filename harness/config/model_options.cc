// model_options: built-in model names, input parsing and validation.
#include "harness/config/model_options.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <fstream>

#include <fmt/format.h>

#include "harness/config/flag_values.h"

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

namespace {
// Why `path` cannot be a TorchScript file, from what it is, without loading it: "" when it may be.
// torch.jit.save writes a zip archive holding constants.pkl and code/; torch.save of a state dict
// or of a whole module writes a zip too, but without them.
std::string not_torchscript(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "cannot be read";
  if (S_ISDIR(st.st_mode)) return "is a directory, not a TorchScript file";
  if (!S_ISREG(st.st_mode)) return "is not a regular file";
  if (st.st_size == 0) return "is empty, not a TorchScript file";
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, sizeof magic);
  if (!in || std::string(magic, 4) != std::string("PK\x03\x04", 4)) {
    return "is not a TorchScript file (torch.jit.save writes a zip archive; this is not one)";
  }
  // The archive's member names are stored uncompressed: look for TorchScript's own (in the first
  // 64 MiB, where its directory of small files comes first).
  std::string chunk(1 << 16, '\0');
  std::string tail;
  bool constants = false, code = false;
  in.seekg(0);
  for (std::size_t read = 0; read < (64u << 20) && in; read += chunk.size()) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const std::string window = tail + chunk.substr(0, static_cast<std::size_t>(in.gcount()));
    constants |= window.find("constants.pkl") != std::string::npos;
    code |= window.find("/code/") != std::string::npos;
    if (constants && code) return "";
    tail = window.substr(window.size() > 32 ? window.size() - 32 : 0);
  }
  return "is a zip archive but not TorchScript (torch.save of a state dict or a module?): save the model with "
         "torch.jit.save(torch.jit.script(model), path)";
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
  if (const std::string why = not_torchscript(w.model); !why.empty()) {
    throw UsageError(fmt::format("--model {}: {}", w.model, why));
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
