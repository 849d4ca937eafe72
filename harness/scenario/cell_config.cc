// CellConfig: naming of cells, equality and the JSON text workers receive (cell_config_json.h).
#include "harness/scenario/cell_config.h"
#include "harness/scenario/cell_config_json.h"

#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace sharebench {

using nlohmann::json;

std::string_view to_string(StartMethod m) {
  switch (m) {
    case StartMethod::kFork: return "fork";
    case StartMethod::kSpawn: return "spawn";
    case StartMethod::kForkserver: return "forkserver";
    case StartMethod::kThread: return "thread";
  }
  return "?";
}

std::optional<StartMethod> parse_start_method(std::string_view s) {
  for (StartMethod m : all_start_methods()) {
    if (to_string(m) == s) return m;
  }
  return std::nullopt;
}

const std::vector<StartMethod>& all_start_methods() {
  static const std::vector<StartMethod> all{StartMethod::kFork, StartMethod::kSpawn,
                                            StartMethod::kForkserver, StartMethod::kThread};
  return all;
}

std::string CellConfig::id() const {
  std::string id = fmt::format("{}@{}:{}", scenario_variant(), to_string(start), procs);
  if (workload.model != "mlp") {  // "+transformer-s", or a TorchScript file's name
    const std::size_t slash = workload.model.rfind('/');
    id += "+" + (slash == std::string::npos ? workload.model : workload.model.substr(slash + 1));
  }
  if (fault.active()) id += "~" + fault.spec();
  return id;
}

bool operator==(const WorkloadOptions& a, const WorkloadOptions& b) { return json(a) == json(b); }
bool operator==(const CellConfig& a, const CellConfig& b) { return json(a) == json(b); }

std::string CellConfig::to_json() const { return json(*this).dump(); }

CellConfig CellConfig::from_json(std::string_view text) {
  try {
    return json::parse(text).get<CellConfig>();
  } catch (const json::exception& e) {
    throw std::invalid_argument(fmt::format("cell config: {}", e.what()));
  }
}

}  // namespace sharebench
