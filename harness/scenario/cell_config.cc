// CellConfig: (de)serialisation and naming of cells.
#include "harness/scenario/cell_config.h"

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
  if (fault.active()) id += "~" + fault.spec();
  return id;
}

static json workload_json(const WorkloadOptions& w) {
  return json{{"steps", w.steps},       {"batch", w.batch},
              {"lr", w.lr},             {"momentum", w.momentum},
              {"input", w.input},       {"hidden", w.hidden},
              {"classes", w.classes},   {"train_rows", w.train_rows},
              {"test_rows", w.test_rows}, {"threads_per_worker", w.threads_per_worker},
              {"seed", w.seed},         {"step_delay_us", w.step_delay_us},
              {"average_every", w.average_every}};
}

std::string CellConfig::to_json() const {
  json j{{"scenario", scenario},     {"variant", variant},
         {"start", to_string(start)}, {"procs", procs},
         {"repetition", repetition}, {"hang_timeout_s", hang_timeout_s},
         {"deadline_s", deadline_s}, {"workload", workload_json(workload)}};
  if (fault.active()) j["fault"] = fault.spec();
  return j.dump();
}

CellConfig CellConfig::from_json(std::string_view text) {
  const json j = json::parse(text);
  CellConfig c;
  c.scenario = j.at("scenario").get<std::string>();
  c.variant = j.at("variant").get<std::string>();
  auto m = parse_start_method(j.at("start").get<std::string>());
  if (!m) throw std::invalid_argument("unknown start method in cell config");
  c.start = *m;
  c.procs = j.at("procs").get<int>();
  c.repetition = j.at("repetition").get<int>();
  c.hang_timeout_s = j.at("hang_timeout_s").get<double>();
  c.deadline_s = j.at("deadline_s").get<double>();
  c.fault = FaultPlan::parse(j.value("fault", std::string()));
  const json& w = j.at("workload");
  c.workload.steps = w.at("steps");
  c.workload.batch = w.at("batch");
  c.workload.lr = w.at("lr");
  c.workload.momentum = w.at("momentum");
  c.workload.input = w.at("input");
  c.workload.hidden = w.at("hidden");
  c.workload.classes = w.at("classes");
  c.workload.train_rows = w.at("train_rows");
  c.workload.test_rows = w.at("test_rows");
  c.workload.threads_per_worker = w.at("threads_per_worker");
  c.workload.seed = w.at("seed");
  c.workload.step_delay_us = w.value("step_delay_us", std::int64_t{0});
  c.workload.average_every = w.value("average_every", std::int64_t{10});
  return c;
}

}  // namespace sharebench
